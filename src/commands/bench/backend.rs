//! The backend of a run: what `--backend` names, or what `auto` finds on this machine, placed
//! in the job this process joined. NCCL comes in two steps: probed first (its facts feed the
//! job's plan), its communicators created only once every process agreed on that plan.

use crate::bench::backend::host::HostBackend;
use crate::bench::backend::{nccl, Backend, BackendInfo};
use crate::bench::job::join::Join;
use crate::config::{BackendChoice, RunConfig};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;

/// A backend ready to run, or NCCL probed and waiting for the job's plan.
pub(super) enum Opened {
    /// The host or MPI backend (nothing to initialise that a plan could change).
    Ready(Box<dyn Backend>),
    /// NCCL without communicators yet.
    Nccl(Box<nccl::Probe>),
}

impl Opened {
    /// The backend's facts.
    pub(super) fn info(&self) -> &BackendInfo {
        match self {
            Opened::Ready(b) => b.info(),
            Opened::Nccl(p) => p.info(),
        }
    }

    /// Whether this process's backend can run `dtype` with `op`.
    pub(super) fn supports(&self, dtype: DataType, op: RedOp) -> bool {
        match self {
            Opened::Ready(b) => b.supports(dtype, op),
            Opened::Nccl(p) => p.supports(dtype, op),
        }
    }

    /// The backend as the run uses it: NCCL's communicators are created here, with the unique
    /// id from the group's rank 0, and its waits numbered for the hang diagnosis.
    pub(super) fn start(self, join: &Join) -> Result<Box<dyn Backend>, Error> {
        match self {
            Opened::Ready(b) => Ok(b),
            Opened::Nccl(p) => Ok(join.track(Box::new(p.init(|n| join.unique_id(n))?))),
        }
    }
}

/// The backend of a run, plus header notes about how it was chosen. `auto` takes NCCL when a
/// CUDA driver with at least one GPU and a libnccl are present, else the host backend (the MPI
/// backend in a multi-process job) and says why in the header.
pub(super) fn open_backend(cfg: &RunConfig, join: &Join) -> Result<(Opened, Vec<String>), Error> {
    let host = || -> Result<Opened, Error> {
        if join.is_multi() {
            return Err(Error::usage(
                "--backend host runs in one process; in a multi-process job use --backend mpi \
                 or nccl",
            ));
        }
        Ok(Opened::Ready(Box::new(HostBackend::new(
            cfg.local_ranks(),
        )?)))
    };
    let mpi = || join.mpi_backend(cfg).map(Opened::Ready);
    match cfg.backend {
        BackendChoice::Host => Ok((host()?, vec![])),
        BackendChoice::Mpi => Ok((mpi()?, vec![])),
        BackendChoice::Nccl => Ok((Opened::Nccl(Box::new(probe_nccl(cfg, join)?)), vec![])),
        BackendChoice::Auto => match auto_unavailable(cfg) {
            None => Ok((Opened::Nccl(Box::new(probe_nccl(cfg, join)?)), vec![])),
            Some(why) if join.is_multi() => {
                Ok((mpi()?, vec![format!("# --backend auto chose mpi: {why}")]))
            }
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

/// NCCL with this process's place in the job: ranks are (group process x local ranks).
fn probe_nccl(cfg: &RunConfig, join: &Join) -> Result<nccl::Probe, Error> {
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
        cta_policy: cfg.cta_policy,
        register: cfg.local_register,
        collective: cfg.collective,
    };
    nccl::probe(&opts)
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
