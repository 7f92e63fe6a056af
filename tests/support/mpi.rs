//! Running the binary under Open MPI's `mpirun` (tests of the `mpi` feature).

use std::process::Command;

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

/// `mpirun -np N ncclbench` (arguments to follow) with `env` exported to every rank.
pub fn mpirun(np: usize, env: &[(&str, &str)]) -> Command {
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
