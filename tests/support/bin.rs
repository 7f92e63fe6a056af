//! The ncclbench binary cargo built for these tests, and the repository paths they read: one
//! place for what every test that runs the binary needs.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Path of the ncclbench binary under test.
pub const EXE: &str = env!("CARGO_BIN_EXE_ncclbench");

/// A command that runs the ncclbench binary (arguments, environment and directory to follow).
pub fn ncclbench() -> Command {
    Command::new(EXE)
}

/// The repository root (the ncclbench package's directory).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/data/<rel>`: the committed test inputs and golden files.
pub fn data(rel: &str) -> PathBuf {
    root().join("tests/data").join(rel)
}

/// `../shared/fixtures/real`: real published logs and tables, never copied into the repository
/// (absent on some machines; the tests that read it skip then).
pub fn real_fixtures() -> PathBuf {
    root().join("../shared/fixtures/real")
}

/// What a finished run left: its exit code and its output as (lossy) text.
pub struct Run {
    pub code: Option<i32>,
    pub out: String,
    pub err: String,
}

/// Runs `cmd` to the end with its output captured (panics if it cannot start).
pub fn run(cmd: &mut Command) -> Run {
    let o = cmd.output().expect("run ncclbench");
    Run {
        code: o.status.code(),
        out: String::from_utf8_lossy(&o.stdout).into_owned(),
        err: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}
