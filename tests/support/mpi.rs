//! Running the binary under Open MPI's `mpirun` (tests of the `mpi` feature).

use std::ops::{Deref, DerefMut};
use std::process::Command;
#[cfg(feature = "mpi")]
use std::sync::RwLockWriteGuard;
use std::sync::{RwLock, RwLockReadGuard};

/// Whether `mpirun` is installed; on CI (CI=true) its absence is a failure, elsewhere the
/// test says it is skipped.
pub fn have_mpirun() -> bool {
    if Command::new("mpirun").arg("--version").output().is_ok() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "mpirun is missing on CI (.ci/run installs openmpi-bin)"
    );
    eprintln!("skipped: mpirun is not installed");
    false
}

/// Held while an `mpirun` job of a test lives: shared by most jobs, exclusive for the jobs
/// that judge timing (locate's "no suspect" and "only the planted one"). Every job
/// oversubscribes the machine (up to 8 processes on 2 cores); two at once made a fault-free
/// locate run measure one node group at twice the other's time, twice in a row, and name it.
static JOBS: RwLock<()> = RwLock::new(());

/// A test's turn to run an `mpirun` job.
enum Turn {
    Shared(#[allow(dead_code)] RwLockReadGuard<'static, ()>),
    #[cfg(feature = "mpi")]
    Alone(#[allow(dead_code)] RwLockWriteGuard<'static, ()>),
}

/// An `mpirun` command (use it as a [`Command`]) holding its test's turn until it is dropped.
pub struct Mpirun {
    command: Command,
    _turn: Turn,
}

impl Deref for Mpirun {
    type Target = Command;
    fn deref(&self) -> &Command {
        &self.command
    }
}

impl DerefMut for Mpirun {
    fn deref_mut(&mut self) -> &mut Command {
        &mut self.command
    }
}

/// `mpirun -np N ncclbench` (arguments to follow) with `env` exported to every rank; other
/// jobs may run beside it, but none that judges timing.
pub fn mpirun(np: usize, env: &[(&str, &str)]) -> Mpirun {
    let turn = Turn::Shared(JOBS.read().unwrap_or_else(|e| e.into_inner()));
    Mpirun {
        command: command(np, env),
        _turn: turn,
    }
}

/// A shared turn, for a test that launches `mpirun` on its own command line (held until
/// dropped).
#[cfg(feature = "mpi")]
pub fn shared_turn() -> impl Drop {
    JOBS.read().unwrap_or_else(|e| e.into_inner())
}

/// As [`mpirun`], for a job whose verdict rests on timing: no other test's job runs beside it.
#[cfg(feature = "mpi")]
pub fn mpirun_alone(np: usize, env: &[(&str, &str)]) -> Mpirun {
    let turn = Turn::Alone(JOBS.write().unwrap_or_else(|e| e.into_inner()));
    Mpirun {
        command: command(np, env),
        _turn: turn,
    }
}

fn command(np: usize, env: &[(&str, &str)]) -> Command {
    let mut c = Command::new("mpirun");
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "-np",
        &np.to_string(),
    ]);
    for (k, v) in env {
        c.env(k, v).args(["-x", k]);
    }
    c.arg(super::bin::EXE);
    c
}
