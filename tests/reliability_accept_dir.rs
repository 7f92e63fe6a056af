//! `accept --force` (issue 35): it decides from the whole output directory before touching
//! anything, and removes only the files an earlier acceptance run recorded as its own
//! (`manifest.json`). Every case takes the directory's files before and after: a refusal is one
//! line with exit 2 and leaves every byte in place; a replacement leaves no stale file.

use crate::support::bin::{ncclbench, run, Run};
use std::collections::BTreeMap;
use std::path::Path;

/// A one-collective profile for 2 host ranks that runs in about a second.
const PROFILE: &str = r#"[profile]
name = "tiny"
description = "two ranks, one collective (test)"
typical = false
ranks = 2

[suite]
collectives = COLLECTIVES
correctness_max_bytes = "64"
correctness_step_factor = 8
perf_max_bytes = "4K"
perf_step_factor = 8
iters = 1
warmup_iters = 1
timeout_s = 20
"#;

fn accept(dir: &Path, collectives: &str, out: &Path, force: bool) -> Run {
    let prof = dir.join(format!("p{}.toml", collectives.len()));
    std::fs::write(&prof, PROFILE.replace("COLLECTIVES", collectives)).unwrap();
    let mut cmd = ncclbench();
    cmd.arg("accept")
        .arg("--profile")
        .arg(&prof)
        .arg("--out")
        .arg(out)
        .args(["--backend", "host", "-g", "2"]);
    if force {
        cmd.arg("--force");
    }
    run(&mut cmd)
}

/// Every entry under `dir`: a file's bytes, `None` for a directory.
fn tree(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    for e in walkdir(dir) {
        let rel = e.strip_prefix(dir).unwrap().display().to_string();
        let md = std::fs::symlink_metadata(&e).unwrap();
        out.insert(
            rel,
            (!md.is_dir()).then(|| std::fs::read(&e).unwrap_or_default()),
        );
    }
    out
}

fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        all.push(p.clone());
        if std::fs::symlink_metadata(&p).unwrap().is_dir() {
            all.extend(walkdir(&p));
        }
    }
    all
}

/// A refusal: exit 2, one line on stderr naming `names`, nothing on disk changed.
fn refused(r: &Run, before: &BTreeMap<String, Option<Vec<u8>>>, out: &Path, names: &str) {
    assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
    assert_eq!(r.err.trim_end().lines().count(), 1, "one line: {}", r.err);
    assert!(r.err.contains(names), "{}", r.err);
    assert!(r.err.contains("nothing was removed"), "{}", r.err);
    assert_eq!(
        &tree(out),
        before,
        "nothing in {} may change",
        out.display()
    );
}

/// An earlier run in `out`, then `add` puts a user's entries in; `--force` must refuse.
fn earlier_run_plus(add: impl Fn(&Path), names: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a1");
    let r = accept(dir.path(), r#"["all_reduce"]"#, &out, false);
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    add(&out);
    let before = tree(&out);
    let r = accept(dir.path(), r#"["all_reduce"]"#, &out, true);
    refused(&r, &before, &out, names);
}

#[test]
fn force_refuses_a_users_file_beside_an_earlier_run_and_removes_nothing() {
    earlier_run_plus(
        |out| std::fs::write(out.join("notes.txt"), "mine\n").unwrap(),
        "notes.txt",
    );
}

#[test]
fn force_refuses_a_users_file_inside_the_runs_subdirectory() {
    earlier_run_plus(
        |out| std::fs::write(out.join("performance/my_notes.csv"), "mine\n").unwrap(),
        "my_notes.csv",
    );
}

#[test]
fn force_refuses_a_users_directory_and_a_link_beside_an_earlier_run() {
    earlier_run_plus(|out| std::fs::create_dir(out.join("mine")).unwrap(), "mine");
    earlier_run_plus(
        |out| {
            let txt = out.join("accept.txt");
            std::fs::remove_file(&txt).unwrap();
            std::os::unix::fs::symlink("/etc/hostname", &txt).unwrap();
        },
        "accept.txt",
    );
}

#[test]
fn force_refuses_a_directory_no_acceptance_run_recorded() {
    // A directory holding only the user's own accept.txt (or any names a run would use).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a2");
    std::fs::create_dir_all(out.join("performance")).unwrap();
    std::fs::write(out.join("accept.txt"), "my own verdict\n").unwrap();
    std::fs::write(out.join("performance/all_reduce.csv"), "mine\n").unwrap();
    let before = tree(&out);
    let r = accept(dir.path(), r#"["all_reduce"]"#, &out, true);
    refused(&r, &before, &out, "manifest.json");
}

#[test]
fn force_refuses_a_record_that_names_files_outside_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a3");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(dir.path().join("precious"), "keep\n").unwrap();
    std::fs::write(
        out.join("manifest.json"),
        r#"{"schema": "ncclbench-accept-manifest/1", "files": ["../precious"]}"#,
    )
    .unwrap();
    let before = tree(&out);
    let r = accept(dir.path(), r#"["all_reduce"]"#, &out, true);
    refused(&r, &before, &out, "manifest.json");
    assert!(dir.path().join("precious").is_file());
}

#[test]
fn force_replaces_an_earlier_run_whole_and_leaves_none_of_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a4");
    let r = accept(dir.path(), r#"["all_reduce", "all_gather"]"#, &out, false);
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(out.join("performance/all_gather.csv").is_file());
    let r = accept(dir.path(), r#"["all_reduce"]"#, &out, true);
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    let after = tree(&out);
    assert!(
        !after.keys().any(|k| k.contains("all_gather")),
        "the earlier run's files are gone: {:?}",
        after.keys()
    );
    assert!(after.contains_key("performance/all_reduce.csv"));
    // The new run recorded its own files, so it can be replaced in turn.
    let r = accept(dir.path(), r#"["all_reduce"]"#, &out, true);
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
}

#[test]
fn an_output_path_that_is_a_file_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a5");
    std::fs::write(&out, "mine\n").unwrap();
    for force in [false, true] {
        let r = accept(dir.path(), r#"["all_reduce"]"#, &out, force);
        assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
        assert_eq!(r.err.trim_end().lines().count(), 1, "{}", r.err);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "mine\n");
    }
}
