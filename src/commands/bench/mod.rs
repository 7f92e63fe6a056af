//! A benchmark run: join the job, probe the backend, agree on one plan across the job, start
//! the backend (NCCL's communicators), open rank 0's sinks, run, and agree on one exit status
//! across the job. `accept` runs its stages through
//! [`run_joined`] inside the job it joined once.

mod alltoallv;
mod backend;
mod meta;
mod sinks;

use crate::bench::environment;
use crate::bench::job::failure::agree;
use crate::bench::job::join::Join;
use crate::bench::output::redact::{redact_meta, Redacting};
use crate::bench::output::{Sink, Sinks};
use crate::bench::plan;
use crate::bench::runner::Runner;
use crate::config::RunConfig;
use crate::core::error::Error;
use crate::result::environment::RunEnvironment;
pub use backend::runs_on_host_memory;
use backend::{host_ignored_flags, open_backend};
use meta::{min_bw_threshold, run_meta};
use sinks::open_sinks;

/// Runs a benchmark; returns the exit status of a completed run.
pub fn run(cfg: &RunConfig) -> Result<u8, Error> {
    // Before NCCL is loaded: it reads its debug environment once.
    let tuning = crate::bench::tuning::Session::start(cfg);
    let join = Join::open(cfg)?;
    let done = run_joined(cfg, &join, &Outputs::default(), tuning).map_err(|e| join.failed(e))?;
    Ok(done.exit_status)
}

/// The backend `cfg` asks for, started in `join` without a benchmark plan (NCCL's
/// communicators over the whole job, for `locate` to split), with its header notes.
pub fn start_backend(
    cfg: &RunConfig,
    join: &Join,
) -> Result<(Box<dyn crate::bench::backend::Backend>, Vec<String>), Error> {
    let (opened, notes) = open_backend(cfg, join)?;
    Ok((opened.start(join)?, notes))
}

/// Where rank 0 shows a run besides its `--csv`/`--json` files.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// The nccl-tests text table goes to this file instead of stdout.
    pub text_file: Option<std::path::PathBuf>,
    /// No progress line on stderr.
    pub quiet: bool,
}

/// A run that completed (wrong data and low bandwidth included).
#[derive(Debug)]
pub struct Finished {
    /// Rows and footer totals (every rank has them; rank 0's are the reported ones).
    pub outcome: crate::bench::runner::Outcome,
    /// The exit status every process agreed on.
    pub exit_status: u8,
    /// The backend that ran it.
    pub backend: crate::result::BackendKind,
    /// Ranks in the communicator.
    pub nranks: usize,
}

/// One run inside a job this process already joined: backend, plan, sinks, measurements.
/// Errors come back as they are (the caller decides about [`Join::failed`]); the sinks have
/// been finished with what was measured.
pub fn run_joined(
    cfg: &RunConfig,
    join: &Join,
    outputs: &Outputs,
    mut tuning: Option<crate::bench::tuning::Session>,
) -> Result<Finished, Error> {
    let mut boot = join.bootstrap();
    // A process that cannot set up (a malformed NCCL_TESTS_* variable, fewer GPUs than -g
    // asks, no library) stops every process with its status before any collective, rank 0
    // naming it once, instead of leaving the others waiting in the plan's reduction.
    let setup = min_bw_threshold().and_then(|m| Ok((m, alltoallv::configure(cfg)?)));
    let (min_bw, configured) = agree(boot.as_mut(), setup)?;
    let cfg = &*configured;
    let (opened, choice_notes) = agree(boot.as_mut(), open_backend(cfg, join))?;
    let info = opened.info().clone();
    // One plan for the whole job, agreed before any process creates a communicator.
    let (plan, skipped) =
        plan::build_for_job(cfg, &info, |d, o| opened.supports(d, o), boot.as_mut())?;
    let unsupported = if boot.world_size() == 1 {
        "not supported by this backend"
    } else {
        "not supported by this backend on every process"
    };
    let skip_lines: Vec<String> = skipped
        .iter()
        .map(|&(d, o)| {
            let why = opened
                .skip_reason(d, o)
                .unwrap_or_else(|| unsupported.into());
            format!("# skipping {d}/{o}: {why}")
        })
        .collect();
    let mut backend = opened.start(join)?;
    let mut meta = run_meta(cfg, backend.as_ref());
    meta.devices = crate::bench::job::join::gather_devices(boot.as_mut(), &meta.devices)?;
    if cfg.per_group {
        meta.groups = crate::result::GroupInfo::of_devices(&meta.devices);
        if meta.groups.len() < 2 && boot.is_root() {
            meta.backend_lines.push(
                "# --per-group: one group (no NCCL_TESTS_SPLIT or NCCL_TESTS_SPLIT_MASK split \
                 the job), so its rows are the aggregate's"
                    .into(),
            );
        }
    }
    meta.reduced_max_bytes = plan.reduced_max_bytes;
    meta.environment = Some(RunEnvironment::new(
        &meta,
        environment::collect(cfg.nccl_lib.as_deref()),
        boot.world_size(),
    ));
    meta.backend_lines.splice(0..0, choice_notes);
    meta.backend_lines.extend(skip_lines);
    if info.name == crate::result::BackendKind::Host {
        meta.backend_lines.extend(host_ignored_flags(cfg));
    }
    if cfg.verify == crate::config::Verify::Device && info.name != crate::result::BackendKind::Nccl
    {
        return Err(Error::usage(format!(
            "--verify device needs the NCCL backend's GPU buffers; the {} backend verifies on \
             the host (--verify host or auto)",
            info.name
        )));
    }
    if let Some(t) = tuning.as_mut() {
        meta.backend_lines.extend(t.begin(&info)?);
        if let Some(env) = meta.environment.as_mut() {
            env.topology = t.topology();
        }
    }
    let redactor = cfg.redact.then(|| environment::redactor(&meta.devices));
    let out_meta = match &redactor {
        Some(r) => redact_meta(&meta, r),
        None => meta.clone(),
    };
    let mut sinks = Sinks::default();
    let opened = if boot.is_root() {
        open_sinks(cfg, &out_meta, outputs, &mut sinks, redactor.as_ref())
    } else {
        Ok(())
    };
    // Every process learns whether rank 0 could open its files (and the status it stops
    // with), so none waits for it.
    let status = opened
        .as_ref()
        .err()
        .map_or(0, |e| u64::from(e.exit_code()));
    let agreed = boot.max_u64(status)?;
    if agreed > 0 {
        opened?;
        // The other ranks stop too, with the same status.
        let why = "rank 0 could not open its output files".to_string();
        return Err(if agreed == u64::from(crate::core::error::exit::USAGE) {
            Error::Usage(why)
        } else {
            Error::Output(std::io::Error::other(why))
        });
    }
    let mut sink: Box<dyn Sink> = match redactor {
        Some(r) => Box::new(Redacting::new(sinks, r)),
        None => Box::new(sinks),
    };
    let mut runner = Runner::new(cfg, &plan, backend.as_mut(), boot.as_mut(), sink.as_mut());
    if let Some(t) = tuning.as_mut() {
        runner = runner.with_observer(t);
    }
    if cfg.per_group {
        runner = runner.with_per_group(join.placement().3);
    }
    let outcome = runner.run(min_bw, None)?;
    backend.close()?;
    join.finished();
    // Every process exits with the same status; only then did the run end normally.
    let code = boot.max_u64(u64::from(outcome.exit_code()))?;
    sink.seal()?;
    Ok(Finished {
        outcome,
        exit_status: u8::try_from(code).unwrap_or(crate::core::error::exit::FAILURE),
        backend: info.name,
        nranks: info.nranks,
    })
}
