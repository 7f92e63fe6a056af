//! The checks of `layering` over planted sources in memory: each path form that could hide an
//! import (super, groups, macros, inline modules), bench's and analysis's own tables, cli
//! reaching an engine, folder circles, and a map that drifts from the tree. Each case must be
//! caught; text that only looks like a path must not be.

use super::map::{self, Map};
use super::{check_file, folder_circles};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A small code map in the page's format: three layers, and bench and analysis inside.
const DOC: &str = "\
# Architecture
## The code map
| row | covers | may import | holds |
|---|---|---|---|
| `app` | `src/lib.rs` | everything | top |
| `cli` | `src/cli/` | `config`, `core` | clap |
| `bench` | `src/bench/` | `config`, `core` | engine |
| `analysis` | `src/analysis/` | `core` | files |
| `config` | `src/config/` | `core` | data |
| `core` | `src/core/` | nothing | bottom |
### Inside `bench`
| row | covers | may import | holds |
|---|---|---|---|
| `mod` | `mod.rs` | nothing | declares |
| `runner` | `runner/` | `plan`, `backend` | drives |
| `plan` | `plan/` | `backend` | sizes |
| `backend` | `backend/` | nothing | executes |
### Inside `analysis`
| row | covers | may import | holds |
|---|---|---|---|
| `mod` | `mod.rs` | nothing | declares |
| `report` | `report/` | `input` | renders |
| `input` | `input.rs` | nothing | rows |
## After the map
";

fn the_map() -> Map {
    map::read(DOC).unwrap()
}

/// The violations found in `src` as the file `rel` (its lines, or the error).
fn found(rel: &str, src: &str) -> Vec<String> {
    check_file(&the_map(), Path::new(rel), src).unwrap_or_else(|e| vec![format!("error: {e}")])
}

#[track_caller]
fn caught(rel: &str, src: &str, target: &str) {
    let f = found(rel, src);
    assert!(
        f.len() == 1 && f[0].contains(target),
        "{rel}: {src:?} gave {f:?}"
    );
}

#[track_caller]
fn fine(rel: &str, src: &str) {
    assert_eq!(found(rel, src), Vec::<String>::new(), "{rel}: {src:?}");
}

#[test]
fn a_super_path_is_read() {
    caught(
        "core/mod.rs",
        "use super::bench::plan::Plan;",
        "crate::bench::plan: core may not import bench",
    );
    caught(
        "bench/backend/host/exec.rs",
        "use super::super::super::runner::Run;",
        "bench::backend may not import bench::runner",
    );
    fine(
        "bench/runner/mod.rs",
        "use super::plan::Plan; use super::backend::Call;",
    );
}

#[test]
fn a_group_is_read_to_any_depth() {
    caught(
        "config/mod.rs",
        "use crate::{core::op::RedOp, cli::args::Args};",
        "crate::cli::args",
    );
    caught(
        "core/mod.rs",
        "use crate::{core::{op::{self, RedOp}, dtype::*}, config::{run::{Run as R}}};",
        "crate::config::run",
    );
    caught(
        "bench/plan/mod.rs",
        "use super::{backend::Call, runner::{self}};",
        "bench::plan may not import bench::runner",
    );
    fine(
        "bench/runner/mod.rs",
        "use crate::{core::op::RedOp, bench::{plan::{self, Plan}, backend::*}};",
    );
}

#[test]
fn a_path_inside_a_macro_is_read() {
    caught(
        "analysis/input.rs",
        "fn f() { println!(\"{}\", crate::bench::plan::x()); }",
        "analysis may not import bench",
    );
    caught(
        "core/mod.rs",
        "fn f() -> Vec<u8> { vec![$crate::config::x()] }",
        "crate::config",
    );
    caught(
        "cli/mod.rs",
        "my_macro! { use crate::bench::runner::Run; }",
        "cli may not import bench",
    );
}

#[test]
fn bench_and_analysis_keep_their_own_tables() {
    caught(
        "bench/backend/mod.rs",
        "use crate::bench::plan::Plan;",
        "bench::backend may not import bench::plan",
    );
    caught(
        "bench/backend/mod.rs",
        "use super::plan::Plan;",
        "bench::backend may not import bench::plan",
    );
    caught(
        "bench/backend/mod.rs",
        "use self::super::runner::Run;",
        "bench::backend may not import bench::runner",
    );
    caught(
        "analysis/input.rs",
        "use super::report::Report;",
        "analysis::input may not import analysis::report",
    );
    fine("analysis/report/mod.rs", "use crate::analysis::input::Row;");
}

#[test]
fn cli_may_not_reach_an_engine() {
    caught(
        "cli/args.rs",
        "use crate::bench::runner::Run;",
        "cli may not import bench",
    );
    caught(
        "cli/tests/mod.rs",
        "use super::super::analysis::input::Row;",
        "cli may not import analysis",
    );
    fine(
        "cli/args.rs",
        "use crate::config::Run; use crate::core::op::RedOp;",
    );
}

#[test]
fn inline_modules_and_child_modules_resolve_where_they_are() {
    // `super` in an inline module is the file's module; one more `super` goes above it.
    fine(
        "bench/backend/mod.rs",
        "mod tests { use super::*; use super::Call; }",
    );
    caught(
        "bench/backend/mod.rs",
        "mod tests { use super::super::plan::Plan; }",
        "bench::backend may not import bench::plan",
    );
    // A child module declared in the file is a path of this module.
    caught(
        "bench/mod.rs",
        "mod runner;\npub use runner::Run;",
        "bench::mod may not import bench::runner",
    );
    fine(
        "bench/runner/mod.rs",
        "mod launch;\nfn f() { launch::go() }",
    );
}

#[test]
fn text_that_only_looks_like_a_path_is_not_one() {
    let src = "//! crate::bench::x\n/* crate::bench::x /* nested */ crate::bench::y */\n\
        fn f() { let _ = \"crate::bench::x\"; let _ = r#\"super::bench \"quoted\" x\"#;\n\
        let _ = b\"crate::bench\"; let _ = '\"';\n\
        let _ = mycrate::bench::x; let _ = Self::crate_x; }\n\
        fn g<'a>(x: &'a str) -> &'a str { x }\n";
    fine("core/mod.rs", src);
}

#[test]
fn an_unmapped_module_is_an_error_not_a_pass() {
    assert!(check_file(
        &the_map(),
        Path::new("newthing/mod.rs"),
        "use crate::core::op::RedOp;"
    )
    .is_err());
    assert!(check_file(&the_map(), Path::new("bench/newfolder/mod.rs"), "").is_ok());
    assert!(check_file(
        &the_map(),
        Path::new("bench/newfolder/mod.rs"),
        "use crate::core::x;"
    )
    .is_err());
}

#[test]
fn the_map_must_name_the_tree_exactly_and_be_one_way() {
    let m = the_map();
    let inside: BTreeMap<String, Vec<String>> = [
        (
            "bench".to_string(),
            vec![
                "backend".into(),
                "mod.rs".into(),
                "plan".into(),
                "runner".into(),
            ],
        ),
        (
            "analysis".to_string(),
            vec!["input.rs".into(), "mod.rs".into(), "report".into()],
        ),
    ]
    .into();
    let top: Vec<String> = ["analysis", "bench", "cli", "config", "core", "lib.rs"]
        .map(String::from)
        .into();
    assert_eq!(m.drift(&top, &inside), Vec::<String>::new());
    let mut more = top.clone();
    more.push("extra".into());
    assert_eq!(
        m.drift(&more, &inside).len(),
        1,
        "a folder missing from the map"
    );
    assert_eq!(
        m.drift(&top[1..], &inside).len(),
        1,
        "a row naming a folder that is gone"
    );
    let typo =
        map::read(&DOC.replace("`config`, `core` | clap", "`config`, `kore` | clap")).unwrap();
    assert_eq!(
        typo.drift(&top, &inside).len(),
        1,
        "an import of a row that does not exist"
    );
    assert_eq!(map::circle_in(&m.layers), None);
    let round = DOC.replace(
        "| `core` | `src/core/` | nothing |",
        "| `core` | `src/core/` | `cli` |",
    );
    assert!(map::circle_in(&map::read(&round).unwrap().layers).is_some());
}

#[test]
fn a_circle_of_two_folders_is_found_through_any_path_form() {
    let files: Vec<(PathBuf, String)> = [
        ("a/mod.rs", "pub mod x; pub mod b;"),
        ("a/x.rs", "use crate::a::b::{y::{self}};"),
        ("a/b/mod.rs", "pub mod y;"),
        ("a/b/y.rs", "fn f() { dbg!(super::super::x::g()); }"),
        ("c/mod.rs", "use crate::a::x;"),
    ]
    .map(|(p, s)| (PathBuf::from(p), s.to_string()))
    .into();
    let found = folder_circles(&files).unwrap();
    let m = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(found, vec![(m(&["a", "b"]), m(&["a", "x"]))]);
    let one_way: Vec<_> = files[..1].iter().chain(&files[2..]).cloned().collect();
    assert!(folder_circles(&one_way).unwrap().is_empty());
    // Two files of one folder importing each other, or a parent and its child, span no two
    // folders.
    let same: Vec<(PathBuf, String)> = [
        ("a/mod.rs", "mod x; mod y; use self::x::f;"),
        ("a/x.rs", "use super::y::g;"),
        ("a/y.rs", "use super::x::f; use super::Top;"),
    ]
    .map(|(p, s)| (PathBuf::from(p), s.to_string()))
    .into();
    assert!(folder_circles(&same).unwrap().is_empty());
}
