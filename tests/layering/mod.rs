//! Holds `src/` to the code map of docs/architecture.md: every module path a file names
//! (`crate::`, `super::`, `self::`, a child module, `use` groups, paths inside macros; see
//! `paths`) must lead to its own row or to a row its row may import (`map`), at the top level
//! and inside `bench` and `analysis`; the map must name every entry of the tree and nothing
//! else; and no import circle may span two folders. `planted` proves each check fails on the
//! case it is for.

mod convention;
mod map;
mod paths;
mod planted;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The module path of a file under `src/` (`[]` for the crate roots lib.rs and main.rs).
pub fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] {
        parts.clear();
    }
    parts
}

/// Every violation of the map in one file's source, as `file: crate::path: why`.
pub fn check_file(map: &map::Map, rel: &Path, src: &str) -> Result<Vec<String>, String> {
    let from = module_path(rel);
    let mut out = BTreeSet::new();
    let named = paths::module_paths(&from, src).map_err(|e| format!("{}: {e}", rel.display()))?;
    for to in named {
        let why = map
            .violation(&from, &to)
            .map_err(|e| format!("{}: {e}", rel.display()))?;
        if let Some(why) = why {
            out.insert(format!(
                "{}: crate::{}: {why}",
                rel.display(),
                to.join("::")
            ));
        }
    }
    Ok(out.into_iter().collect())
}

/// A module path written `a::b::c`.
pub type Module = Vec<String>;

/// Pairs of sibling modules that reach each other through imports, each pair once.
pub fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<(Module, Module)> {
    let reaches = |from: &Module, to: &Module| {
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
    let mut out = BTreeSet::new();
    for (from, tos) in edges {
        for to in tos.iter().filter(|to| reaches(to, from)) {
            out.insert((from.clone().min(to.clone()), from.clone().max(to.clone())));
        }
    }
    out.into_iter().collect()
}

/// The import edges between sibling modules of a set of sources (path under `src/`, text): an
/// import of module `to` from module `from`, where neither holds the other, is an edge between
/// their ancestors just below the module holding both (`fast::cursor` -> `fast::shape`). A
/// module's own parent and children are left out: a parent declares them, they use its items.
/// Only circles where a side has a folder of its own (a module with children) are returned:
/// those span two folders, where a reader of either folder cannot see the whole circle.
pub fn folder_circles(files: &[(PathBuf, String)]) -> Result<Vec<(Module, Module)>, String> {
    let modules: BTreeSet<Module> = files.iter().map(|(r, _)| module_path(r)).collect();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (rel, text) in files {
        let from = module_path(rel);
        for path in paths::module_paths(&from, text)? {
            let Some(to) = (1..=path.len())
                .rev()
                .map(|k| &path[..k])
                .find(|p| modules.contains(*p))
            else {
                continue;
            };
            if from.starts_with(to) || to.starts_with(&from) {
                continue;
            }
            let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
            edges
                .entry(from[..=common].to_vec())
                .or_default()
                .insert(to[..=common].to_vec());
        }
    }
    let has_folder = |m: &Module| {
        modules
            .iter()
            .any(|n| n.len() > m.len() && n.starts_with(m))
    };
    Ok(circles(&edges)
        .into_iter()
        .filter(|(a, b)| has_folder(a) || has_folder(b))
        .collect())
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

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `src/`: its path there and its text.
fn sources() -> Vec<(PathBuf, String)> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(
        files.len() > 100,
        "found only {} files in src/",
        files.len()
    );
    files
        .into_iter()
        .map(|f| {
            (
                f.strip_prefix(&src).unwrap().to_path_buf(),
                std::fs::read_to_string(&f).unwrap(),
            )
        })
        .collect()
}

/// The code map of docs/architecture.md.
fn the_map() -> map::Map {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    map::read(&doc).unwrap_or_else(|e| panic!("docs/architecture.md: {e}"))
}

/// The names in folder `dir` (folders bare, files with `.rs`).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir() || e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_code_map_is_one_way_and_names_the_tree_exactly() {
    let map = the_map();
    let src = root().join("src");
    let inside = map
        .inside
        .keys()
        .map(|l| (l.clone(), entries(&src.join(l))))
        .collect();
    let drift = map.drift(&entries(&src), &inside);
    assert!(
        drift.is_empty(),
        "docs/architecture.md and src/ differ:\n{}",
        drift.join("\n")
    );
    for table in std::iter::once(&map.layers).chain(map.inside.values()) {
        assert_eq!(
            map::circle_in(table),
            None,
            "the map lets rows import each other round"
        );
    }
}

#[test]
fn no_module_imports_against_the_code_map() {
    let map = the_map();
    let mut problems = Vec::new();
    for (rel, text) in sources() {
        match check_file(&map, &rel, &text) {
            Ok(v) => problems.extend(v),
            Err(e) => problems.push(e),
        }
    }
    assert!(
        problems.is_empty(),
        "{} import(s) against the code map of docs/architecture.md:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn no_import_circle_spans_two_folders() {
    let found: Vec<String> = folder_circles(&sources())
        .unwrap()
        .into_iter()
        .map(|(a, b)| format!("{} <-> {}", a.join("::"), b.join("::")))
        .collect();
    assert!(
        found.is_empty(),
        "modules of two folders importing each other:\n{}",
        found.join("\n")
    );
}

#[test]
fn module_files_follow_one_convention() {
    let mut found = convention::breaches(&root().join("src"));
    for crate_src in ["fake-nccl/src", "nccl-sys/src", "tests"] {
        found.extend(
            convention::breaches(&root().join(crate_src))
                .into_iter()
                .map(|b| format!("{crate_src}/{b}")),
        );
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
