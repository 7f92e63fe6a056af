//! The binary's top level: parse the command line, pick the backend, build the plan, open the
//! sinks, run, and map the outcome to an exit status. Errors become one `ncclbench: ...` line.

use crate::backend::host::HostBackend;
use crate::backend::{nccl, Backend};
use crate::cli::{self, Command};
use crate::config::{BackendChoice, RunConfig};
use crate::environment::RunEnvironment;
use crate::error::{exit, Error};
use crate::multi::join::Join;
use crate::output::csv::CsvSink;
use crate::output::json::JsonSink;
use crate::output::progress::ProgressSink;
use crate::output::redact::{redact_meta, Redacting};
use crate::output::text::TextSink;
use crate::output::{Sink, Sinks};
use crate::plan;
use crate::result::RunMeta;
use crate::runner::{local_time, Runner};
use std::io::Write;
use std::process::ExitCode;

/// Environment variable prefixes recorded with every run (never the whole environment).
pub const ENV_PREFIXES: [&str; 6] = ["NCCL_", "CUDA_", "UCX_", "OMPI_", "SLURM_", "PMIX_"];

/// Runs the program with the process's arguments.
pub fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let code = match cli::parse(&argv) {
        Ok(Command::Help(text)) | Ok(Command::Version(text)) => {
            print!("{text}");
            exit::OK
        }
        Ok(Command::Run(cfg)) => match run(&cfg) {
            Ok(code) => code,
            Err(e) => report(&e),
        },
        Ok(Command::Analyze(cfg)) => match crate::analysis::command::run(&cfg) {
            Ok(code) => code,
            Err(e) => report(&e),
        },
        Ok(Command::Env {
            json,
            nccl_lib,
            redact,
        }) => match env_command(json, nccl_lib.as_deref(), redact) {
            Ok(()) => exit::OK,
            Err(e) => report(&e),
        },
        Ok(Command::Compare(cfg)) => match crate::compare::run(&cfg) {
            Ok(code) => code,
            Err(e) => crate::compare::error_status(report(&e)),
        },
        Ok(Command::Logs(cfg)) => match crate::logs::command::run(&cfg) {
            Ok(code) => code,
            Err(e) => report(&e),
        },
        Ok(Command::Accept(cfg)) => match crate::accept::run(&cfg) {
            Ok(code) => code,
            Err(e) => accept_status(&e, report(&e)),
        },
        Err(e) => report(&e),
    };
    ExitCode::from(code)
}

/// The exit status of an `accept` that stopped on an error (see
/// [`crate::accept::model::status`]): 0 stays 0 (the reader of stdout went away), a timeout
/// or NCCL failure keeps its status, everything else is a setup error.
fn accept_status(e: &Error, reported: u8) -> u8 {
    use crate::accept::model::status;
    match (reported, e) {
        (crate::error::exit::OK, _) => crate::error::exit::OK,
        (_, Error::Timeout { .. }) => status::TIMEOUT,
        (_, Error::Backend(_)) => status::BACKEND,
        _ => status::SETUP,
    }
}

/// This process's redactor (its host names and PID), for files written outside a run.
pub fn process_redactor() -> crate::redact::Redactor {
    run_redactor(&[])
}

/// `ncclbench env [--json]`.
fn env_command(json: bool, nccl_lib: Option<&std::path::Path>, redact: bool) -> Result<(), Error> {
    let mut r = crate::environment::collect(nccl_lib);
    if redact {
        crate::environment::redact_report(&mut r, &run_redactor(&[]));
    }
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &r).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        crate::environment::write_text(&r, &mut out)?;
    }
    Ok(out.flush()?)
}

fn report(e: &Error) -> u8 {
    if let Error::Output(io) = e {
        if io.kind() == std::io::ErrorKind::BrokenPipe {
            // The reader went away (`| head`): nothing left to say to it.
            return exit::OK;
        }
    }
    let _ = std::io::stdout().flush();
    eprintln!("ncclbench: {e}");
    e.exit_code()
}

/// `NCCL_TESTS_MIN_BW` in GB/s; unset, empty or -1 means no check (as nccl-tests).
fn min_bw_threshold() -> Result<Option<f64>, Error> {
    match std::env::var("NCCL_TESTS_MIN_BW") {
        Err(_) => Ok(None),
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(-1.0) => Ok(None),
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
            _ => Err(Error::usage(format!(
                "NCCL_TESTS_MIN_BW={v:?} is not a bandwidth in GB/s"
            ))),
        },
    }
}

/// The backend of a run, plus header notes about how it was chosen. `auto` takes NCCL when a
/// CUDA driver with at least one GPU and a libnccl are present, else the host backend (the MPI
/// backend in a multi-process job) and says why in the header.
fn open_backend(cfg: &RunConfig, join: &Join) -> Result<(Box<dyn Backend>, Vec<String>), Error> {
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
    match crate::cuda::probe() {
        Err(crate::cuda::CudaError::NoDriver { .. }) => {
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
        cta_policy: cfg.cta_policy,
        register: cfg.local_register,
        collective: cfg.collective,
    };
    nccl::open(&opts, |n| join.unique_id(n))
}

/// Header notes for NCCL/CUDA-only flags that the host backend cannot honour (nccl-tests
/// likewise prints "Ignoring" for flags its build does not support).
fn host_ignored_flags(cfg: &RunConfig) -> Vec<String> {
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

/// The environment variables recorded with a run (the [`ENV_PREFIXES`] families), sorted.
pub fn recorded_env() -> Vec<String> {
    let mut env: Vec<String> = std::env::vars()
        .filter(|(k, _)| ENV_PREFIXES.iter().any(|p| k.starts_with(p)))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    env.sort();
    env
}

/// The header facts of a run.
pub fn run_meta(cfg: &RunConfig, backend: &dyn Backend) -> RunMeta {
    let info = backend.info();
    let env = recorded_env();
    RunMeta {
        version: env!("CARGO_PKG_VERSION").to_string(),
        program: cfg.program(),
        backend: info.name.to_string(),
        backend_lines: info.header_lines.clone(),
        nccl_headers: info.nccl_headers,
        nccl_library: info.nccl_library,
        argv: cfg.argv.clone(),
        env,
        nthreads: cfg.nthreads,
        ngpus: cfg.ngpus,
        min_bytes: cfg.min_bytes,
        max_bytes: cfg.max_bytes,
        step: cfg.step,
        warmup_iters: cfg.warmup_iters,
        iters: cfg.iters,
        agg_iters: cfg.agg_iters,
        check: cfg.check,
        graph: cfg.graph,
        unalign: cfg.unalign,
        blocking: cfg.blocking,
        per_iter: cfg.per_iter,
        per_iter_skip: cfg.per_iter_skip,
        parallel_init: cfg.parallel_init,
        report_cputime: cfg.report_cputime,
        report_timestamps: cfg.report_timestamps,
        show_algo: cfg.tuning.show_algo,
        nranks: info.nranks,
        devices: backend.devices(),
        reduced_max_bytes: None,
        start_time: local_time(),
        environment: None,
    }
}

/// Runs a benchmark; returns the exit status of a completed run.
pub fn run(cfg: &RunConfig) -> Result<u8, Error> {
    // Before NCCL is loaded: it reads its debug environment once.
    let tuning = crate::tuning::Session::start(cfg);
    let join = Join::open(cfg)?;
    let done = run_joined(cfg, &join, &Outputs::default(), tuning).map_err(|e| join.failed(e))?;
    Ok(done.exit_status)
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
    pub outcome: crate::runner::Outcome,
    /// The exit status every process agreed on.
    pub exit_status: u8,
    /// Backend name (`nccl`, `host`, `mpi`).
    pub backend: &'static str,
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
    mut tuning: Option<crate::tuning::Session>,
) -> Result<Finished, Error> {
    let min_bw = min_bw_threshold()?;
    let (mut backend, choice_notes) = open_backend(cfg, join)?;
    let mut boot = join.bootstrap();
    let info = backend.info().clone();
    let (plan, skipped) = plan::build(cfg, &info, |d, o| backend.supports(d, o))?;
    let mut meta = run_meta(cfg, backend.as_ref());
    meta.devices = crate::multi::join::gather_devices(boot.as_mut(), &meta.devices)?;
    meta.reduced_max_bytes = plan.reduced_max_bytes;
    meta.environment = Some(RunEnvironment::new(
        &meta,
        crate::environment::collect(cfg.nccl_lib.as_deref()),
        boot.world_size(),
    ));
    meta.backend_lines.splice(0..0, choice_notes);
    meta.backend_lines.extend(
        skipped
            .iter()
            .map(|s| format!("# skipping {s}: not supported by this backend")),
    );
    if info.name == "host" {
        meta.backend_lines.extend(host_ignored_flags(cfg));
    }
    if let Some(t) = tuning.as_mut() {
        meta.backend_lines.extend(t.begin(&info)?);
        if let Some(env) = meta.environment.as_mut() {
            env.topology = t.topology();
        }
    }
    let redactor = cfg.redact.then(|| run_redactor(&meta.devices));
    let out_meta = match &redactor {
        Some(r) => redact_meta(&meta, r),
        None => meta.clone(),
    };
    let mut sinks = Sinks::default();
    let opened = if boot.is_root() {
        open_sinks(cfg, &out_meta, outputs, &mut sinks)
    } else {
        Ok(())
    };
    // Every process learns whether rank 0 could open its files, so none waits for it.
    if boot.max_u64(u64::from(opened.is_err()))? > 0 {
        opened?;
        // The other ranks stop too, with the same (I/O) status.
        return Err(Error::Output(std::io::Error::other(
            "rank 0 could not open its output files",
        )));
    }
    let mut sink: Box<dyn Sink> = match redactor {
        Some(r) => Box::new(Redacting::new(sinks, r)),
        None => Box::new(sinks),
    };
    let mut runner = Runner::new(cfg, &plan, backend.as_mut(), boot.as_mut(), sink.as_mut());
    if let Some(t) = tuning.as_mut() {
        runner = runner.with_observer(t);
    }
    let outcome = runner.run(min_bw, None)?;
    backend.close()?;
    join.finished();
    // Every process exits with the same status.
    let code = boot.max_u64(u64::from(outcome.exit_code()))?;
    Ok(Finished {
        outcome,
        exit_status: u8::try_from(code).unwrap_or(crate::error::exit::FAILURE),
        backend: info.name,
        nranks: info.nranks,
    })
}

/// Rank 0's sinks: files first, so a path that cannot be written stops the run before any
/// output.
fn open_sinks(
    cfg: &RunConfig,
    meta: &RunMeta,
    outputs: &Outputs,
    sinks: &mut Sinks,
) -> Result<(), Error> {
    if let Some(path) = &cfg.json {
        let mut json = JsonSink::new(path);
        json.begin(meta).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        // The JSON sink picks its file (no-clobber) at begin; nccl-tests announces it first.
        println!("# Writing JSON output to {}", json.path().display());
        sinks.0.push(Box::new(BegunSink(json)));
    }
    if let Some(path) = &cfg.csv {
        let mut csv = CsvSink::new(path);
        csv.begin(meta).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        sinks.0.push(Box::new(BegunSink(csv)));
    }
    match &outputs.text_file {
        Some(path) => {
            let io_err = |source| Error::Io {
                path: path.clone(),
                source,
            };
            let file = std::fs::File::create(path).map_err(io_err)?;
            let mut text = TextSink::new(std::io::BufWriter::new(file));
            text.begin(meta).map_err(io_err)?;
            sinks.0.push(Box::new(BegunSink(text)));
        }
        None => {
            let mut text = TextSink::stdout();
            text.begin(meta)?;
            sinks.0.push(Box::new(BegunSink(text)));
        }
    }
    if !outputs.quiet {
        let mut progress = ProgressSink::stderr();
        progress.begin(meta)?;
        sinks.0.push(Box::new(BegunSink(progress)));
    }
    Ok(())
}

/// The redactor of this process's outputs: its host names (short and full) and PIDs.
fn run_redactor(devices: &[crate::backend::DeviceInfo]) -> crate::redact::Redactor {
    let mut hosts: Vec<String> = devices.iter().map(|d| d.hostname.clone()).collect();
    hosts.push(nccl::hostname());
    hosts.push(full_hostname());
    let mut pids: Vec<u32> = devices.iter().map(|d| d.pid).collect();
    pids.push(std::process::id());
    crate::redact::Redactor::for_names(hosts, pids)
}

/// The host name as the system has it (possibly with its domain).
fn full_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// A sink whose `begin` already ran; it ignores the fan-out's `begin`.
struct BegunSink<S: Sink>(S);

impl<S: Sink> Sink for BegunSink<S> {
    fn row_started(&mut self, key: &crate::result::RowKey) -> std::io::Result<()> {
        self.0.row_started(key)
    }
    fn placement_done(
        &mut self,
        key: &crate::result::RowKey,
        p: crate::result::Placement,
        m: &crate::result::Measurement,
    ) -> std::io::Result<()> {
        self.0.placement_done(key, p, m)
    }
    fn row_done(&mut self, row: &crate::result::Row) -> std::io::Result<()> {
        self.0.row_done(row)
    }
    fn notice(&mut self, line: &str) -> std::io::Result<()> {
        self.0.notice(line)
    }
    fn finish(&mut self, summary: &crate::result::Summary) -> std::io::Result<()> {
        self.0.finish(summary)
    }
}
