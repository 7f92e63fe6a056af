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

/// `ncclbench <args>`, the arguments split at white space.
pub fn command(args: &str) -> Command {
    let mut cmd = ncclbench();
    cmd.args(args.split_whitespace());
    cmd
}

/// The repository root (the ncclbench package's directory).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/data/<rel>`: the committed test inputs and golden files.
pub fn data(rel: &str) -> PathBuf {
    root().join("tests/data").join(rel)
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

/// Runs `ncclbench <args>` (split at white space) to the end with its output captured.
pub fn run_args(args: &str) -> Run {
    run(&mut command(args))
}
