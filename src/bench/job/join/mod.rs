//! How this process takes part in a run: alone, or as one process of an MPI job (feature
//! `mpi`). The launcher sanity check runs here, before any work, in every build.

pub mod sanity;

use crate::bench::backend::{Backend, DeviceInfo};
use crate::bench::job::bootstrap::{Bootstrap, SingleProcess};
use crate::config::{BackendChoice, RunConfig};
use crate::core::error::Error;
use crate::result::BackendKind;

/// This process's membership.
pub struct Join {
    /// The MPI job, when this process joined one.
    #[cfg(feature = "mpi")]
    pub job: Option<crate::bench::job::mpi::MpiJob>,
}

/// The refusal of [`sanity::check`]: printed once (by the launcher's rank 0), every
/// process exits 2 before any work.
fn refuse(line: String, launcher: Option<&crate::bench::job::launcher::Launcher>) -> Error {
    if launcher.and_then(|l| l.rank).is_some_and(|r| r != 0) {
        std::process::exit(i32::from(crate::core::error::exit::USAGE));
    }
    Error::Usage(line)
}

impl Join {
    /// Joins the job the launcher set up (initialising MPI where the build has it and the
    /// launcher or `--backend mpi` asks for it), or refuses one this binary cannot join.
    pub fn open(cfg: &RunConfig) -> Result<Join, Error> {
        let launcher = crate::bench::job::launcher::detect();
        #[cfg(not(feature = "mpi"))]
        {
            sanity::check(launcher.as_ref(), None).map_err(|l| refuse(l, launcher.as_ref()))?;
            if cfg.backend == BackendChoice::Use(BackendKind::Mpi) {
                return Err(Error::usage(format!(
                    "--backend mpi: this binary has no MPI support; {}",
                    sanity::REBUILD
                )));
            }
            Ok(Join {})
        }
        #[cfg(feature = "mpi")]
        {
            let multi = launcher
                .as_ref()
                .and_then(|l| l.world_size)
                .is_some_and(|n| n > 1);
            if !multi && cfg.backend != BackendChoice::Use(BackendKind::Mpi) {
                return Ok(Join { job: None });
            }
            let job = crate::bench::job::mpi::init(cfg.timeout)?;
            sanity::check(launcher.as_ref(), Some(job.size))
                .map_err(|l| refuse(l, launcher.as_ref()))?;
            Ok(Join { job: Some(job) })
        }
    }

    /// True when more than one process takes part.
    pub fn is_multi(&self) -> bool {
        #[cfg(feature = "mpi")]
        if let Some(j) = &self.job {
            return j.size > 1;
        }
        false
    }

    /// The bootstrap of this membership.
    pub fn bootstrap(&self) -> Box<dyn Bootstrap> {
        #[cfg(feature = "mpi")]
        if let Some(j) = &self.job {
            return Box::new(j.bootstrap());
        }
        Box::new(SingleProcess)
    }

    /// `(local process, processes in the group, rank in the group, colour)` for NCCL.
    pub fn placement(&self) -> (usize, usize, usize, usize) {
        #[cfg(feature = "mpi")]
        if let Some(j) = &self.job {
            return (j.local_process, j.group_size, j.group_rank, j.color);
        }
        (0, 1, 0, 0)
    }

    /// The group's NCCL unique id: made by the group's rank 0, broadcast to the others.
    pub fn unique_id(&self, nccl: &nccl_sys::Nccl) -> Result<nccl_sys::UniqueId, Error> {
        #[cfg(feature = "mpi")]
        if let Some(j) = &self.job {
            let mut id = if j.group_rank == 0 {
                crate::bench::backend::nccl::single_process_id(nccl)?
            } else {
                nccl_sys::UniqueId([0; nccl_sys::UNIQUE_ID_BYTES])
            };
            j.broadcast_in_group(&mut id.0);
            return Ok(id);
        }
        crate::bench::backend::nccl::single_process_id(nccl)
    }

    /// `--backend mpi` (one rank per process).
    pub fn mpi_backend(&self, cfg: &RunConfig) -> Result<Box<dyn Backend>, Error> {
        if cfg.local_ranks() != 1 {
            return Err(Error::usage(format!(
                "--backend mpi runs one rank per process, not -t {} -g {}",
                cfg.nthreads, cfg.ngpus
            )));
        }
        #[cfg(feature = "mpi")]
        if let Some(j) = &self.job {
            return Ok(Box::new(j.backend()));
        }
        Err(Error::usage(format!(
            "--backend mpi: this binary has no MPI support; {}",
            sanity::REBUILD
        )))
    }

    /// `backend` as the run uses it: in an MPI job, its waits are numbered for the hang
    /// diagnosis (the MPI backend numbers its own ops).
    pub fn track(&self, backend: Box<dyn Backend>) -> Box<dyn Backend> {
        #[cfg(feature = "mpi")]
        if let Some(j) = &self.job {
            return j.tracked(backend);
        }
        backend
    }

    /// A failed run: a timeout with the hang-diagnosis channel ends in the diagnosis and exit
    /// status 4 on every rank (never returns); anything else comes back.
    pub fn failed(&self, e: Error) -> Error {
        #[cfg(feature = "mpi")]
        if let (Error::Timeout { .. }, Some(oob)) =
            (&e, self.job.as_ref().and_then(|j| j.oob.as_ref()))
        {
            let _ = std::io::Write::flush(&mut std::io::stdout());
            eprintln!("ncclbench: {e}");
            oob.timed_out(&e.to_string());
        }
        e
    }

    /// The point-to-point coordinator of `ncclbench locate` over this membership.
    pub fn coordinator(&self) -> Box<dyn crate::bench::job::coord::Coordinator + '_> {
        #[cfg(feature = "mpi")]
        if let Some(j) = &self.job {
            return Box::new(j.coordinator());
        }
        Box::new(crate::bench::job::coord::Alone)
    }

    /// The run finished normally (closed diagnosis connections are expected from now on).
    pub fn finished(&self) {
        #[cfg(feature = "mpi")]
        if let Some(oob) = self.job.as_ref().and_then(|j| j.oob.as_ref()) {
            oob.finished();
        }
    }
}

/// A device line in transit to rank 0 (tab-separated; the name last).
pub fn device_line(d: &DeviceInfo) -> String {
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        d.rank,
        d.group,
        d.pid,
        d.hostname,
        d.device,
        d.pci.0,
        d.pci.1,
        d.pci.2,
        d.name.replace(['\t', '\n'], " ")
    )
}

/// Parses [`device_line`].
pub fn parse_device_line(line: &str) -> Option<DeviceInfo> {
    let f: Vec<&str> = line.splitn(9, '\t').collect();
    if f.len() != 9 {
        return None;
    }
    Some(DeviceInfo {
        rank: f[0].parse().ok()?,
        group: f[1].parse().ok()?,
        pid: f[2].parse().ok()?,
        hostname: f[3].to_string(),
        device: f[4].parse().ok()?,
        pci: (f[5].parse().ok()?, f[6].parse().ok()?, f[7].parse().ok()?),
        name: f[8].to_string(),
    })
}

/// Every process's devices on the root, in world-rank order.
pub fn gather_devices(
    boot: &mut dyn Bootstrap,
    local: &[DeviceInfo],
) -> Result<Vec<DeviceInfo>, Error> {
    if boot.world_size() == 1 {
        return Ok(local.to_vec());
    }
    let lines: Vec<String> = local.iter().map(device_line).collect();
    Ok(boot
        .gather_lines(&lines)?
        .iter()
        .filter_map(|l| parse_device_line(l))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lines_round_trip() {
        let d = DeviceInfo {
            rank: 3,
            group: 1,
            pid: 42,
            hostname: "node7".into(),
            device: 2,
            pci: (0, 0x18, 0),
            name: "NVIDIA H100\t80GB".into(),
        };
        let back = parse_device_line(&device_line(&d)).unwrap();
        assert_eq!(back.name, "NVIDIA H100 80GB");
        assert_eq!(
            (back.rank, back.pci, back.hostname),
            (3, (0, 0x18, 0), d.hostname)
        );
    }
}
