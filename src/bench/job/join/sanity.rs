//! The launcher sanity check: a binary started by a launcher for an N-rank job must be able to
//! join it. Without MPI support, or with an MPI whose world differs from the launcher's (an
//! Open MPI build under MPICH's `mpirun` runs N singletons), every process would run alone and
//! print its own header: the commonest multi-process confusion (nccl-tests issues #27, #213,
//! #306). The run stops first with one line naming what was detected and how to rebuild.

use crate::bench::job::launcher::Launcher;

/// How to get a binary that can join an MPI job.
pub const REBUILD: &str = "rebuild with `cargo build --release --features mpi` (needs an MPI \
                           implementation and libclang; the MPI must be the one whose launcher \
                           starts the job)";

/// `Err(line)` when the launcher says the job has more than one rank and this process cannot
/// be one of them. `mpi_world` is the MPI world size (`None` without MPI support).
pub fn check(launcher: Option<&Launcher>, mpi_world: Option<usize>) -> Result<(), String> {
    let Some(l) = launcher else { return Ok(()) };
    let Some(n) = l.world_size.filter(|&n| n > 1) else {
        return Ok(());
    };
    let seen = format!("{} ({})", l.kind, l.evidence.join(", "));
    match mpi_world {
        None => Err(format!(
            "launched by {seen} as one of {n} ranks, but this binary has no MPI support, so \
             each process would run alone; {REBUILD}"
        )),
        Some(w) if w != n => Err(format!(
            "launched by {seen} as one of {n} ranks, but MPI sees a world of {w} process(es): \
             this binary's MPI is not the launcher's; {REBUILD}"
        )),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ompi(n: usize) -> Launcher {
        Launcher {
            kind: "Open MPI mpirun",
            world_size: Some(n),
            rank: Some(0),
            local_rank: Some(0),
            evidence: vec![format!("OMPI_COMM_WORLD_SIZE={n}")],
        }
    }

    #[test]
    fn refuses_a_multi_rank_job_without_mpi_or_with_another_world() {
        assert_eq!(check(None, None), Ok(()));
        assert_eq!(check(Some(&ompi(1)), None), Ok(()));
        let e = check(Some(&ompi(4)), None).unwrap_err();
        assert!(
            e.contains("Open MPI mpirun (OMPI_COMM_WORLD_SIZE=4)"),
            "{e}"
        );
        assert!(e.contains("--features mpi"), "{e}");
        let e = check(Some(&ompi(4)), Some(1)).unwrap_err();
        assert!(e.contains("world of 1"), "{e}");
        assert_eq!(check(Some(&ompi(4)), Some(4)), Ok(()));
    }
}
