//! The launcher sanity check, in every build: a binary told by launcher variables that it is
//! one of N > 1 ranks but unable to join (no MPI support in the default build) stops before any
//! work with one line and exit status 2. Without the `mpi` feature it also runs the real thing:
//! the binary under `mpirun -np 2`, when mpirun is installed.

use crate::support::bin::ncclbench;

#[cfg(not(feature = "mpi"))]
#[test]
fn launcher_variables_without_mpi_support_are_refused() {
    let out = ncclbench()
        .args(["all_reduce", "--backend", "host", "-b", "8", "-e", "8"])
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .env("OMPI_COMM_WORLD_RANK", "0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no work may start");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("Open MPI mpirun (OMPI_COMM_WORLD_SIZE=2"),
        "{err}"
    );
    assert!(
        err.contains("cargo build --release --features mpi"),
        "{err}"
    );
    // The other ranks stay silent.
    let out = ncclbench()
        .args(["all_reduce", "-b", "8", "-e", "8"])
        .env("PMI_SIZE", "4")
        .env("PMI_RANK", "3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stderr.is_empty() && out.stdout.is_empty());
}

#[cfg(not(feature = "mpi"))]
#[test]
fn backend_mpi_needs_the_feature() {
    let out = ncclbench()
        .args(["all_reduce", "--backend", "mpi", "-b", "8", "-e", "8"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--features mpi"));
}

#[cfg(not(feature = "mpi"))]
#[test]
fn the_default_build_under_real_mpirun_is_refused() {
    use crate::support::mpi::{have_mpirun, mpirun};
    if !have_mpirun() {
        return;
    }
    let out = mpirun(2, &[])
        .args(["all_reduce", "--backend", "host", "-b", "8", "-e", "8"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let all =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(all.matches("has no MPI support").count(), 1, "{all}");
    assert!(!all.contains("Collective test starting"), "{all}");
}

/// The MPI build under another MPI's launcher (MPICH's `PMI_*` variables, Open MPI's library
/// running as a singleton) sees a world of 1 and refuses.
#[cfg(feature = "mpi")]
#[test]
fn an_mpi_world_unlike_the_launchers_is_refused() {
    let out = ncclbench()
        .args(["all_reduce", "--backend", "mpi", "-b", "8", "-e", "8"])
        .env("PMI_SIZE", "4")
        .env("PMI_RANK", "0")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("MPI sees a world of 1"), "{err}");
    assert!(err.contains("--features mpi"), "{err}");
}
