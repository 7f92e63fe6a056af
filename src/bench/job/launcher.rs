//! Which launcher started this process, from the variables launchers export: Open MPI's
//! `mpirun` (`OMPI_COMM_WORLD_*`), MPICH/Intel MPI Hydra (`PMI_*`), MVAPICH (`MV2_*`), Slurm's
//! `srun` (`SLURM_*`), PMIx (`PMIX_RANK`). Used by `ncclbench env` and to refuse a run whose
//! binary cannot join the job the launcher set up.

pub use crate::result::environment::Launcher;

/// How long a process other than rank 0 waits before exiting with an error every process of
/// the job shares, so that rank 0 can say it first: a launcher that sees one process fail kills
/// the rest (mpirun aborts the job at the first non-zero exit), which could otherwise take rank
/// 0 down before its line is out. Once rank 0 has exited, the launcher ends the wait; where it
/// does not, the wait is bounded by this.
pub const OTHER_RANKS_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The launcher of this process, read from its environment.
pub fn detect() -> Option<Launcher> {
    detect_from(|k| std::env::var(k).ok())
}

/// [`detect`] over any variable lookup (tests pass a map).
pub fn detect_from(var: impl Fn(&str) -> Option<String>) -> Option<Launcher> {
    // (kind, size, rank, local rank); the first family with a size or rank wins. Open MPI and
    // Hydra first: under `srun --mpi=pmix` or mpirun inside an allocation, SLURM_* describe
    // the allocation, not necessarily this job step's ranks.
    const FAMILIES: [(&str, &str, &str, &str); 5] = [
        (
            "Open MPI mpirun",
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_LOCAL_RANK",
        ),
        (
            "MVAPICH",
            "MV2_COMM_WORLD_SIZE",
            "MV2_COMM_WORLD_RANK",
            "MV2_COMM_WORLD_LOCAL_RANK",
        ),
        (
            "MPICH/Hydra (PMI)",
            "PMI_SIZE",
            "PMI_RANK",
            "MPI_LOCALRANKID",
        ),
        (
            "Slurm srun",
            "SLURM_NTASKS",
            "SLURM_PROCID",
            "SLURM_LOCALID",
        ),
        ("PMIx", "PMIX_SIZE", "PMIX_RANK", "PMIX_LOCAL_RANK"),
    ];
    let num = |k: &str| var(k).and_then(|v| v.trim().parse::<usize>().ok());
    for (kind, size, rank, local) in FAMILIES {
        let (s, r) = (num(size), num(rank));
        if s.is_none() && r.is_none() {
            continue;
        }
        // srun exports SLURM_NTASKS for a whole allocation even to `salloc` shells; only a
        // step (SLURM_STEP_ID) is an srun launch.
        if kind == "Slurm srun" && var("SLURM_STEP_ID").is_none() {
            continue;
        }
        let evidence = [size, rank, local]
            .iter()
            .filter_map(|k| var(k).map(|v| format!("{k}={v}")))
            .collect();
        return Some(Launcher {
            kind,
            world_size: s,
            rank: r,
            local_rank: num(local),
            evidence,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from(pairs: &[(&str, &str)]) -> Option<Launcher> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        detect_from(|k| map.get(k).cloned())
    }

    #[test]
    fn open_mpi_is_recognised_with_its_rank_layout() {
        let l = from(&[
            ("OMPI_COMM_WORLD_SIZE", "16"),
            ("OMPI_COMM_WORLD_RANK", "9"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
            ("SLURM_NTASKS", "2"),
            ("SLURM_STEP_ID", "0"),
        ])
        .unwrap();
        assert_eq!(l.kind, "Open MPI mpirun");
        assert_eq!(
            (l.world_size, l.rank, l.local_rank),
            (Some(16), Some(9), Some(1))
        );
        assert_eq!(l.evidence.len(), 3);
    }

    #[test]
    fn slurm_counts_only_inside_a_job_step() {
        assert_eq!(from(&[("SLURM_NTASKS", "8"), ("SLURM_PROCID", "0")]), None);
        let l = from(&[
            ("SLURM_NTASKS", "8"),
            ("SLURM_PROCID", "3"),
            ("SLURM_STEP_ID", "0"),
        ])
        .unwrap();
        assert_eq!(
            (l.kind, l.world_size, l.rank),
            ("Slurm srun", Some(8), Some(3))
        );
    }

    #[test]
    fn hydra_and_nothing() {
        let l = from(&[("PMI_SIZE", "4"), ("PMI_RANK", "2")]).unwrap();
        assert_eq!(l.kind, "MPICH/Hydra (PMI)");
        assert_eq!(from(&[("HOME", "/root")]), None);
    }
}
