//! The backend of a run: what `--backend` names, or what `auto` finds on this machine, placed
//! in the job this process joined; for NCCL, which libnccl the library search found. NCCL
//! comes in two steps: probed first (its facts feed the job's plan), its communicators created
//! only once every process agreed on that plan.

use std::path::PathBuf;

use crate::bench::backend::host::HostBackend;
use crate::bench::backend::{nccl, Backend, BackendInfo};
use crate::bench::job::join::Join;
use crate::config::{BackendChoice, RunConfig};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use crate::result::BackendKind;

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

    /// Why this process's backend cannot run `dtype` with `op`, where it knows more than that
    /// it cannot.
    pub(super) fn skip_reason(&self, dtype: DataType, op: RedOp) -> Option<String> {
        match self {
            Opened::Ready(_) => None,
            Opened::Nccl(p) => p.skip_reason(dtype, op),
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
/// CUDA driver with at least one GPU is present, else the host backend (the MPI backend in a
/// multi-process job) and says why in the header. A GPU machine without a libnccl is an error
/// listing where the search looked: host numbers there would pass for NCCL's.
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
        BackendChoice::Use(BackendKind::Host) => Ok((host()?, vec![])),
        BackendChoice::Use(BackendKind::Mpi) => Ok((mpi()?, vec![])),
        BackendChoice::Use(BackendKind::Nccl) => nccl_backend(cfg, join),
        BackendChoice::Auto => match no_gpu()? {
            None => nccl_backend(cfg, join),
            Some(why) if join.is_multi() => {
                Ok((mpi()?, vec![format!("# --backend auto chose mpi: {why}")]))
            }
            Some(why) => Ok((host()?, vec![format!("# --backend auto chose host: {why}")])),
        },
    }
}

/// Whether a run of `cfg` keeps its buffers in host memory (the host or MPI backend, chosen or
/// what `auto` picks on a machine without a GPU), before anything is opened. A GPU node whose
/// driver fails is not: `auto` refuses to run there.
pub fn runs_on_host_memory(cfg: &RunConfig) -> bool {
    match cfg.backend {
        BackendChoice::Use(BackendKind::Host) | BackendChoice::Use(BackendKind::Mpi) => true,
        BackendChoice::Use(BackendKind::Nccl) => false,
        BackendChoice::Auto => matches!(no_gpu(), Ok(Some(_))),
    }
}

/// Why `auto` cannot use NCCL here, or `None` when it can. Only a machine without a GPU is a
/// reason (no driver library, CUDA_ERROR_NO_DEVICE, no device visible); a driver that is there
/// but fails (802 with the fabric manager down, 803 after an upgrade without a reboot, a
/// library too old to have an entry point) is an error: host numbers printed on a GPU node
/// would pass for the GPUs'.
fn no_gpu() -> Result<Option<String>, Error> {
    use crate::bench::cuda::{api::CUDA_ERROR_NO_DEVICE, probe, CudaError};
    match probe() {
        Err(CudaError::NoDriver { .. }) => Ok(Some(
            "no CUDA driver (libcuda.so.1 cannot be loaded)".into(),
        )),
        Err(e) if e.code() == Some(CUDA_ERROR_NO_DEVICE) => {
            Ok(Some(format!("no CUDA device ({e})")))
        }
        Err(e) => Err(Error::Cuda(format!(
            "{}: --backend auto: the CUDA driver is installed but cannot be used: {}; not \
             falling back to the host backend (--backend host measures the host on purpose)",
            crate::core::host::gethostname_short(),
            unusable_driver(&e)
        ))),
        Ok(devices) if devices.is_empty() => Ok(Some("no CUDA device is visible".into())),
        Ok(_) => Ok(None),
    }
}

/// A failing driver call as its code, the code's name and what it means (the driver's text
/// when ncclbench has none of its own for the code); other errors as they display.
fn unusable_driver(e: &crate::bench::cuda::CudaError) -> String {
    let crate::bench::cuda::CudaError::Call {
        call,
        code,
        name,
        description,
    } = e
    else {
        return e.to_string();
    };
    let known = crate::bench::cuda::init_failure(*code);
    let name = name
        .as_deref()
        .or(known.map(|k| k.0))
        .unwrap_or("a code the driver does not name");
    let meaning = known
        .map(|k| k.1)
        .or(description.as_deref())
        .unwrap_or("no description");
    format!("{call} returned {code} ({name}): {meaning}")
}

/// The NCCL backend on the library the search finds, with a header note saying how.
fn nccl_backend(cfg: &RunConfig, join: &Join) -> Result<(Opened, Vec<String>), Error> {
    let (lib, note) = find_nccl(cfg)?;
    Ok((
        Opened::Nccl(Box::new(probe_nccl(cfg, join, lib)?)),
        vec![note],
    ))
}

/// Runs the library search once: the exact file to open, and the header line naming it and
/// the step that found it. No library is a setup error (exit 2), as a missing driver is.
fn find_nccl(cfg: &RunConfig) -> Result<(PathBuf, String), Error> {
    let nccl = nccl_sys::Nccl::find(cfg.nccl_lib.as_deref())
        .map_err(|e| Error::usage(format!("{}: {e}", crate::core::host::gethostname_short())))?;
    let note = match nccl.found() {
        Some(f) => format!("# NCCL library found by {}: {}", f.step, f.target),
        None => format!("# NCCL library {}", nccl.path().display()),
    };
    Ok((nccl.path().to_path_buf(), note))
}

/// NCCL with this process's place in the job: ranks are (group process x local ranks).
fn probe_nccl(cfg: &RunConfig, join: &Join, lib: PathBuf) -> Result<nccl::Probe, Error> {
    let env_device = std::env::var(nccl::FIRST_DEVICE_ENV).ok();
    let (local_process, procs, proc_rank, color) = join.placement();
    let opts = nccl::NcclOptions {
        lib: Some(lib),
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
        verify: cfg.verify,
        check: cfg.check > 0,
        timeout: cfg.timeout,
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
