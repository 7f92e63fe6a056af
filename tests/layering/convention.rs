//! The module-file convention of docs/architecture.md ("Module files and unit tests"): a module
//! with children is `name/mod.rs`, never `name.rs` beside a folder `name/`; a test module that is
//! its own file is named `tests` or `testdata`, or lives inside a `tests/` folder.

use std::path::{Path, PathBuf};

/// Every breach of the convention under `dir`, one line each.
pub fn breaches(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        if path.is_dir() {
            if path.with_extension("rs").is_file() {
                out.push(format!(
                    "{rel}.rs beside the folder {rel}/: use {rel}/mod.rs"
                ));
            }
            walk(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let in_tests_folder = path
                .parent()
                .is_some_and(|p| p.ends_with("tests") && p != root.join("tests"));
            for name in test_file_modules(&text) {
                if !(in_tests_folder || name == "tests" || name == "testdata") {
                    out.push(format!(
                        "{rel}: test module `{name}` is its own file: name it `tests` or \
                         `testdata`, or move it into a `tests/` folder"
                    ));
                }
            }
        }
    }
}

/// The names of `#[cfg(test)] mod NAME;` declarations (test modules kept in their own file).
fn test_file_modules(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|w| w[0] == "#[cfg(test)]")
        .filter_map(|w| {
            let rest = w[1].strip_prefix("pub(crate) ").unwrap_or(w[1]);
            rest.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_string)
        })
        .collect()
}

#[test]
fn planted_breaches_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("a/b")).unwrap();
    std::fs::write(d.join("a/b.rs"), "//! b\n").unwrap();
    std::fs::write(d.join("a/b/c.rs"), "//! c\n").unwrap();
    std::fs::write(d.join("a/mod.rs"), "//! a\n#[cfg(test)]\nmod tests_more;\n").unwrap();
    std::fs::create_dir_all(d.join("a/tests")).unwrap();
    std::fs::write(d.join("a/tests/mod.rs"), "#[cfg(test)]\nmod topic;\n").unwrap();
    let got = breaches(d);
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(
        got[0].starts_with("a/b.rs beside the folder a/b/"),
        "{got:#?}"
    );
    assert!(got[1].contains("test module `tests_more`"), "{got:#?}");
}
