//! The backend of a run: what `--backend` names, or what `auto` finds on this machine, placed
//! in the job this process joined.

use crate::bench::backend::host::HostBackend;
use crate::bench::backend::{nccl, Backend};
use crate::bench::job::join::Join;
use crate::config::{BackendChoice, RunConfig};
use crate::core::error::Error;

/// The backend of a run, plus header notes about how it was chosen. `auto` takes NCCL when a
/// CUDA driver with at least one GPU and a libnccl are present, else the host backend (the MPI
/// backend in a multi-process job) and says why in the header.
pub(super) fn open_backend(
    cfg: &RunConfig,
    join: &Join,
) -> Result<(Box<dyn Backend>, Vec<String>), Error> {
    let host = || -> Result<Box<dyn Backend>, Error> {
        if join.is_multi() {
            return Err(Error::usage(
                "--backend host runs in one process; in a multi-process job use --backend mpi \
                 or nccl",
            ));
        }
        Ok(Box::new(HostBackend::new(cfg.local_ranks())?))
    };
    match cfg.backend {
        BackendChoice::Host => Ok((host()?, vec![])),
        BackendChoice::Mpi => Ok((join.mpi_backend(cfg)?, vec![])),
        BackendChoice::Nccl => Ok((join.track(Box::new(open_nccl(cfg, join)?)), vec![])),
        BackendChoice::Auto => match auto_unavailable(cfg) {
            None => Ok((join.track(Box::new(open_nccl(cfg, join)?)), vec![])),
            Some(why) if join.is_multi() => Ok((
                join.mpi_backend(cfg)?,
                vec![format!("# --backend auto chose mpi: {why}")],
            )),
            Some(why) => Ok((host()?, vec![format!("# --backend auto chose host: {why}")])),
        },
    }
}

/// Why `auto` cannot use NCCL here, or `None` when it can.
fn auto_unavailable(cfg: &RunConfig) -> Option<String> {
    match crate::bench::cuda::probe() {
        Err(crate::bench::cuda::CudaError::NoDriver { .. }) => {
            return Some("no CUDA driver (libcuda.so.1 cannot be loaded)".into())
        }
        Err(e) => return Some(e.to_string()),
        Ok(devices) if devices.is_empty() => return Some("no CUDA device is visible".into()),
        Ok(_) => {}
    }
    let lib = nccl_sys::resolve_request(cfg.nccl_lib.as_deref());
    nccl_sys::Nccl::open(lib.as_deref())
        .err()
        .map(|e| e.to_string())
}

/// NCCL with this process's place in the job: ranks are (group process x local ranks), the
/// unique id comes from the group's rank 0.
fn open_nccl(cfg: &RunConfig, join: &Join) -> Result<nccl::NcclBackend, Error> {
    let env_device = std::env::var(nccl::FIRST_DEVICE_ENV).ok();
    let (local_process, procs, proc_rank, color) = join.placement();
    let opts = nccl::NcclOptions {
        lib: nccl_sys::resolve_request(cfg.nccl_lib.as_deref()),
        devices: nccl::DeviceChoice::new(cfg.devices.as_deref(), env_device.as_deref())?,
        local_process,
        nranks: procs * cfg.local_ranks(),
        first_rank: proc_rank * cfg.local_ranks(),
        local_ranks: cfg.local_ranks(),
        group: color,
        stream_null: cfg.stream_null,
        device_timer: cfg.timer == crate::config::Timer::Device,
        cta_policy: cfg.cta_policy,
        register: cfg.local_register,
        collective: cfg.collective,
    };
    nccl::open(&opts, |n| join.unique_id(n))
}

/// Header notes for NCCL/CUDA-only flags that the host backend cannot honour (nccl-tests
/// likewise prints "Ignoring" for flags its build does not support).
pub(super) fn host_ignored_flags(cfg: &RunConfig) -> Vec<String> {
    let mut notes = Vec::new();
    let mut note = |flag: &str, why: &str| notes.push(format!("# {flag} ignored: {why}"));
    if cfg.local_register > 0 {
        note(
            &format!("-R {}", cfg.local_register),
            "the host backend has no buffer registration",
        );
    }
    if let Some(p) = cfg.cta_policy {
        note(
            &format!("-x {p}"),
            "the host backend has no NCCL CTA policy",
        );
    }
    if cfg.stream_null {
        note("-y 1", "the host backend has no CUDA streams");
    }
    if cfg.memory_report {
        note("-M 1", "the host backend has no GPU memory to report");
    }
    notes
}
