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

/// A finished job: exit status, stdout, stdout + stderr, wall time.
#[cfg(feature = "mpi")]
pub struct Job {
    pub code: Option<i32>,
    pub stdout: String,
    pub text: String,
    pub took: std::time::Duration,
}

#[cfg(feature = "mpi")]
impl Job {
    fn of(o: std::process::Output, took: std::time::Duration) -> Job {
        let stdout = String::from_utf8_lossy(&o.stdout).to_string();
        Job {
            code: o.status.code(),
            text: stdout.clone() + &String::from_utf8_lossy(&o.stderr),
            stdout,
            took,
        }
    }
}

/// `mpirun -np np ncclbench <args>` with `env` exported to every rank, run to its end.
#[cfg(feature = "mpi")]
pub fn job(np: usize, env: &[(&str, &str)], args: &str) -> Job {
    let mut c = mpirun(np, env);
    c.args(args.split_whitespace());
    let t = std::time::Instant::now();
    Job::of(c.output().unwrap(), t.elapsed())
}

/// `mpirun -np np ncclbench <args>` on fake-nccl (8 devices per process, communicators
/// spanning processes through a rendezvous directory of the job's own) with `env` exported;
/// asserts a successful job left no rendezvous files.
#[cfg(feature = "mpi")]
pub fn nccl_job(np: usize, env: &[(&str, &str)], args: &str) -> Job {
    let rdv = tempfile::tempdir().unwrap();
    let fake = super::fake_nccl::mpi_env(rdv.path());
    let mut all: Vec<(&str, &str)> = fake.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend_from_slice(env);
    let j = job(np, &all, args);
    let left: Vec<_> = std::fs::read_dir(rdv.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(
        left.is_empty() || j.code != Some(0),
        "`{args}` left rendezvous files: {left:?}\n{}",
        j.text
    );
    j
}

/// What one world rank of [`nccl_job_per_rank`] has besides the common: variables and
/// arguments (appended, so a later flag overrides the common one).
#[cfg(feature = "mpi")]
#[derive(Default, Clone, Copy)]
pub struct Rank<'a> {
    pub env: &'a [(&'a str, &'a str)],
    pub args: &'a str,
}

/// As [`nccl_job`] with `per_rank.len()` processes, world rank r started through a wrapper
/// script that gives it `per_rank[r]` (Open MPI's `OMPI_COMM_WORLD_RANK`): processes that
/// differ, as an MPMD launch line or a node's own environment makes them.
#[cfg(feature = "mpi")]
pub fn nccl_job_per_rank(per_rank: &[Rank<'_>], args: &str) -> Job {
    let dir = tempfile::tempdir().unwrap();
    let quote = |v: &str| format!("'{}'", v.replace('\'', r"'\''"));
    let mut s = String::from("#!/bin/sh\ncase \"$OMPI_COMM_WORLD_RANK\" in\n");
    for (r, rank) in per_rank.iter().enumerate() {
        s += &format!("{r})");
        for (k, v) in rank.env {
            s += &format!(" export {k}={};", quote(v));
        }
        s += &format!(" set -- \"$@\" {} ;;\n", rank.args);
    }
    s += &format!("esac\nexec {} \"$@\"\n", super::bin::EXE);
    let script = dir.path().join("node.sh");
    std::fs::write(&script, s).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let rdv = tempfile::tempdir().unwrap();
    let fake = super::fake_nccl::mpi_env(rdv.path());
    let _turn = shared_turn();
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe", "-np"])
        .arg(per_rank.len().to_string());
    for (k, v) in &fake {
        c.env(k, v).args(["-x", k]);
    }
    c.arg(&script).args(args.split_whitespace());
    let t = std::time::Instant::now();
    Job::of(c.output().unwrap(), t.elapsed())
}

/// Data rows of a text table (lines starting with a space whose first field is a size).
#[cfg(feature = "mpi")]
pub fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| !l.starts_with('#') && l.starts_with(' '))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .filter(|r: &Vec<String>| r.len() >= 12 && r[0].parse::<u64>().is_ok())
        .collect()
}
