//! The layer table of `src/` and the check that holds the code to it: every `crate::` path in
//! a file's code (comments left out) must lead to a layer below the file's own, or stay in the
//! file's own folder. Layers of the same rank are peers and may not import each other.
//!
//! `bench` has a table of its own for its folders, so the engine keeps one direction inside
//! too (the runner drives everything; backends know nothing of plans or sinks).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level layers, highest first: (folder or root file, rank, why it sits there).
const LAYERS: &[(&str, u32, &str)] = &[
    (
        "app",
        9,
        "the binary's top (lib.rs, main.rs, app.rs): parse, dispatch, exit status",
    ),
    (
        "commands",
        8,
        "one module per subcommand; the only place that strings engines together",
    ),
    (
        "cli",
        7,
        "clap types in, validated config out; it runs nothing, so no engine is below it in use",
    ),
    (
        "accept",
        6,
        "acceptance profiles, checks and verdicts: judges bench's results read back by analysis",
    ),
    (
        "bench",
        5,
        "the benchmark engine; a peer of analysis: measuring never needs the readers",
    ),
    (
        "analysis",
        5,
        "readers, fits, plots, reports, compare: works on files, never on a live run",
    ),
    (
        "logs",
        4,
        "NCCL debug logs: read by bench (tuning, topology) and analysis, reads neither",
    ),
    (
        "config",
        3,
        "validated configurations: plain data that cli writes and the engines read",
    ),
    (
        "result",
        2,
        "plain data of a run (rows, metadata, devices, environment, tuning), no behaviour",
    ),
    (
        "core",
        1,
        "collective specs, types, ops, element code, errors, units, stats, host facts",
    ),
];

/// Folders of `bench`, highest first.
const BENCH: &[(&str, u32, &str)] = &[
    ("mod", 10, "bench/mod.rs only declares the folders"),
    (
        "runner",
        9,
        "drives a run: plan in, backend calls, verification, sinks and observers",
    ),
    (
        "locate",
        9,
        "finds the slow node, GPU or link: groups measured on sub-communicators, then judged",
    ),
    (
        "tuning",
        8,
        "observes the runner's calls and joins NCCL's log lines to them",
    ),
    (
        "observe",
        7,
        "what the runner tells an observer: call keys and phases",
    ),
    (
        "output",
        6,
        "sinks: rows to text, CSV, JSON; never measure anything",
    ),
    (
        "verify",
        6,
        "fills and checks buffers through the backend interface",
    ),
    (
        "plan",
        6,
        "the sizes, types and ops of a run, from config and the backend's facts",
    ),
    (
        "environment",
        5,
        "probes this machine for the run's record (CUDA, launcher, variables)",
    ),
    (
        "job",
        4,
        "launcher, bootstrap, split, hang diagnosis, MPI; wraps backends",
    ),
    (
        "backend",
        3,
        "executes collectives: host threads, NCCL; knows no plan or sink",
    ),
    ("cuda", 2, "the CUDA driver, opened at run time"),
];

/// A module's place: its top-level layer's rank and name, and for bench its folder's.
type Layer = (u32, String, Option<(u32, String)>);

/// The layer of a module path (`["bench", "job", "join"]`).
fn layer_of(path: &[String]) -> Result<Layer, String> {
    let top = match path.first().map(String::as_str) {
        None | Some("lib") | Some("main") | Some("app") => "app",
        Some(t) => t,
    };
    let (_, rank, _) = LAYERS
        .iter()
        .find(|(name, _, _)| *name == top)
        .ok_or_else(|| format!("module `{top}` is in no layer of the table"))?;
    let sub = if top == "bench" {
        let name = path.get(1).map_or("mod", String::as_str);
        let (_, r, _) = BENCH
            .iter()
            .find(|(n, _, _)| *n == name)
            .ok_or_else(|| format!("bench module `{name}` is in no row of bench's table"))?;
        Some((*r, name.to_string()))
    } else {
        None
    };
    Ok((*rank, top.to_string(), sub))
}

/// Why an import from module `from` of module `to` goes against the layers, if it does.
fn violation(from: &[String], to: &[String]) -> Result<Option<String>, String> {
    let (fr, fname, fsub) = layer_of(from)?;
    let (tr, tname, tsub) = layer_of(to)?;
    if fname != tname {
        return Ok((tr >= fr).then(|| {
            format!("{fname} (rank {fr}) imports {tname} (rank {tr}), which is not below it")
        }));
    }
    match (fsub, tsub) {
        (Some((fr, fs)), Some((tr, ts))) if fs != ts && tr >= fr => Ok(Some(format!(
            "bench::{fs} (rank {fr}) imports bench::{ts} (rank {tr}), which is not below it"
        ))),
        _ => Ok(None),
    }
}

/// The module path of a file under `src/`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") && parts.len() > 1 {
        parts.pop();
    }
    parts
}

/// Code without comments (line comments, doc comments, block comments); string literals are
/// kept, which is harmless since no string holds a `crate::` path.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |i| &after[i..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Every `crate::a::b` path in the code, as its leading module names (lower-case segments).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `mycrate::`, not ours
        }
        let mut path = Vec::new();
        let mut tail = rest;
        loop {
            let end = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            let seg = &tail[..end];
            if seg.is_empty() || !seg.starts_with(|c: char| c.is_lowercase()) {
                break;
            }
            path.push(seg.to_string());
            match tail[end..].strip_prefix("::") {
                Some(next) => tail = next,
                None => break,
            }
        }
        if !path.is_empty() {
            found.push(path);
        }
    }
    found
}

/// Every violation in one file's source.
fn check_file(rel: &Path, src: &str) -> Result<Vec<String>, String> {
    let from = module_path(rel);
    let mut out = BTreeSet::new();
    for to in crate_paths(&strip_comments(src)) {
        if let Some(why) = violation(&from, &to).map_err(|e| format!("{}: {e}", rel.display()))? {
            out.insert(format!(
                "{}: crate::{}: {why}",
                rel.display(),
                to.join("::")
            ));
        }
    }
    Ok(out.into_iter().collect())
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(
        files.len() > 100,
        "found only {} files in src/",
        files.len()
    );
    let mut problems = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let text = std::fs::read_to_string(file).unwrap();
        match check_file(rel, &text) {
            Ok(v) => problems.extend(v),
            Err(e) => problems.push(e),
        }
    }
    assert!(
        problems.is_empty(),
        "{} import(s) against the layers:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The folder (relative to `src/`) of the file that holds module `path`, taking the longest
/// prefix of `path` that is a module of `modules`.
fn folder_of(modules: &BTreeMap<Vec<String>, PathBuf>, path: &[String]) -> Option<PathBuf> {
    (1..=path.len())
        .rev()
        .find_map(|k| modules.get(&path[..k]))
        .map(|file| file.parent().map(Path::to_path_buf).unwrap_or_default())
}

/// Folders that reach themselves again through imports of other folders.
fn folder_cycles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<String> {
    let reaches = |from: &PathBuf, to: &PathBuf| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(f) = todo.pop() {
            for next in edges.get(&f).into_iter().flatten() {
                if next == to {
                    return true;
                }
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        false
    };
    let mut out = Vec::new();
    for (from, tos) in edges {
        for to in tos {
            if reaches(to, from) {
                out.push(format!(
                    "{} -> {} -> ... -> {}",
                    from.display(),
                    to.display(),
                    from.display()
                ));
            }
        }
    }
    out
}

#[test]
fn no_import_circle_spans_two_folders() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let rel: Vec<PathBuf> = files
        .iter()
        .map(|f| f.strip_prefix(&src).unwrap().to_path_buf())
        .collect();
    let modules: BTreeMap<Vec<String>, PathBuf> =
        rel.iter().map(|r| (module_path(r), r.clone())).collect();
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (file, r) in files.iter().zip(&rel) {
        let from = r.parent().map(Path::to_path_buf).unwrap_or_default();
        let code = strip_comments(&std::fs::read_to_string(file).unwrap());
        for path in crate_paths(&code) {
            if let Some(to) = folder_of(&modules, &path) {
                if to != from {
                    edges.entry(from.clone()).or_default().insert(to);
                }
            }
        }
    }
    assert!(edges.len() > 10, "too few folders import others: {edges:?}");
    let cycles = folder_cycles(&edges);
    assert!(
        cycles.is_empty(),
        "folders importing each other:\n{}",
        cycles.join("\n")
    );
    let planted: BTreeMap<PathBuf, BTreeSet<PathBuf>> = [
        ("a".into(), ["b".into()].into()),
        ("b".into(), ["a".into()].into()),
    ]
    .into();
    assert_eq!(folder_cycles(&planted).len(), 2);
}

#[test]
fn a_planted_back_import_is_caught() {
    let planted = "//! doc\nuse crate::core::dtype::DataType;\nuse crate::commands::bench::run;\n";
    let found = check_file(Path::new("result/mod.rs"), planted).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("crate::commands::bench::run"),
        "{found:?}"
    );
    // Peers may not import each other, nor bench's lower folders its upper ones.
    assert_eq!(
        check_file(
            Path::new("analysis/mod.rs"),
            "fn f() { crate::bench::plan::x() }"
        )
        .unwrap()
        .len(),
        1
    );
    assert_eq!(
        check_file(
            Path::new("bench/backend/mod.rs"),
            "use crate::bench::plan::X;"
        )
        .unwrap()
        .len(),
        1
    );
    // The same folder, lower layers and comments are fine.
    let fine = "use crate::bench::backend::Call;\nuse crate::result::Row; // crate::app::x\n";
    assert!(check_file(Path::new("bench/runner/mod.rs"), fine)
        .unwrap()
        .is_empty());
    // A module missing from the table is an error, not a pass.
    assert!(check_file(Path::new("newthing/mod.rs"), "use crate::core::op::RedOp;").is_err());
}
