//! `ncclbench accept`: the new-cluster acceptance suite with a PASS/FAIL verdict.
//!
//! One command, under the same launcher as a benchmark (`mpirun -np 16 ncclbench accept
//! --profile h100-nvswitch`), runs per collective a correctness stage and a performance stage
//! ([`suite`]) in this process's job, writes each stage's text table and CSV (with its
//! environment sidecar) into the output directory, then judges them ([`checks`]) against a
//! [`profile`] and, when one is given, a saved healthy run (the `compare` rules). The verdict
//! ([`model`]) is printed as a table and written as `accept.txt`, `accept.json` and
//! `junit.xml` ([`report`]); its exit status tells the failure classes apart
//! ([`model::status`]).
//!
//! Every process runs the same stages; only rank 0 writes and judges, and every process exits
//! with rank 0's status. A hang stops the suite: the stages after it are reported as not run,
//! the report is written, then the hang diagnosis of a multi-process job takes over.
//!
//! Here: the command and the stage loop. `outdir`: the output directory (made before any
//! stage, the report files written into it). `judge`: the stages' files read back into
//! checks and the report.

mod judge;
mod outdir;
#[cfg(test)]
mod tests;

use crate::accept::checks::{self, RunEnd};
use crate::accept::model::{self, FailureClass, Stage};
use crate::accept::suite::{self, StagePlan};
use crate::accept::{make_profile, profile};
use crate::bench::job::join::Join;
use crate::cli::Command;
use crate::commands::bench::{self as bench_run, Outputs};
use crate::config::accept::AcceptConfig;
use crate::core::error::Error;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

pub use outdir::result_files;

/// Runs `ncclbench accept`; returns the exit status.
pub fn run(cfg: &AcceptConfig) -> Result<u8, Error> {
    if cfg.list_profiles {
        let mut out = std::io::stdout().lock();
        for (name, description) in profile::builtins() {
            writeln!(out, "{name:<28} {description}")?;
        }
        return Ok(model::status::PASS);
    }
    if !cfg.make_profile.is_empty() {
        let text = make_profile::make_profile(
            &result_files(&cfg.make_profile),
            &cfg.name,
            cfg.margin_pct,
        )?;
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        return Ok(model::status::PASS);
    }
    let prof = profile::load(cfg.profile.as_deref())?;
    Acceptance::new(cfg, prof)?.run()
}

/// A stage's command line as a run configuration.
fn stage_config(plan: &StagePlan) -> Result<crate::config::RunConfig, Error> {
    let argv: Vec<std::ffi::OsString> = plan.argv.iter().map(Into::into).collect();
    match crate::cli::parse(&argv)? {
        Command::Run(cfg) => Ok(cfg),
        _ => Err(Error::usage(format!(
            "accept: {} is not a benchmark command line",
            plan.argv.join(" ")
        ))),
    }
}

/// The acceptance run in progress.
struct Acceptance<'a> {
    cfg: &'a AcceptConfig,
    profile: profile::Profile,
    out: PathBuf,
    started: String,
}

/// How a stage went.
struct Ran {
    plan: StagePlan,
    end: RunEnd,
    exit_status: u8,
    error: Option<String>,
}

impl<'a> Acceptance<'a> {
    fn new(cfg: &'a AcceptConfig, profile: profile::Profile) -> Result<Self, Error> {
        let started = crate::bench::runner::local_time();
        let out = cfg.out.clone().unwrap_or_else(|| {
            PathBuf::from(format!(
                "ncclbench-accept-{}",
                chrono::Local::now().format("%Y%m%d-%H%M%S")
            ))
        });
        Ok(Acceptance {
            cfg,
            profile,
            out,
            started,
        })
    }

    fn run(self) -> Result<u8, Error> {
        let suite = &self.profile.suite;
        let flags = &self.cfg.flags;
        let perf_max = suite::perf_max_bytes(suite, flags);
        // The first stage's command line checks the pass-through flags before anything runs.
        let first = suite::one(
            suite,
            flags,
            &self.out,
            Stage::Correctness,
            suite.collectives[0],
            perf_max,
        );
        let first_cfg = stage_config(&first).map_err(|e| Error::usage(format!("accept: {e}")))?;
        if let Some(want) = self.profile.ranks {
            let procs = crate::bench::job::launcher::detect()
                .and_then(|l| l.world_size)
                .unwrap_or(1);
            let have = procs * first_cfg.local_ranks();
            if have != want {
                return Err(Error::usage(format!(
                    "profile {} expects {want} ranks, this job has {have} ({procs} process(es) x \
                     {} local ranks); choose a profile for this layout",
                    self.profile.name,
                    first_cfg.local_ranks()
                )));
            }
        }
        let join = Join::open(&first_cfg)?;
        let mut boot = join.bootstrap();
        let root = boot.is_root();
        let prepared = if root { self.prepare_dir() } else { Ok(()) };
        if boot.max_u64(u64::from(prepared.is_err()))? > 0 {
            prepared?;
            return Ok(model::status::SETUP);
        }
        let say = |line: &str| {
            if root {
                println!("{line}");
                let _ = std::io::stdout().flush();
            }
        };
        say(&format!(
            "# ncclbench accept: profile {} ({}), results in {}",
            self.profile.name,
            self.profile.source,
            self.out.display()
        ));
        let mut notes = Vec::new();
        let mut ran: Vec<Ran> = Vec::new();
        let mut stop: Option<(FailureClass, Error)> = None;
        // Until a stage reports the backend it ran on, the one asked for.
        let mut backend = flags
            .passthrough
            .windows(2)
            .find(|w| w[0] == "--backend")
            .map_or_else(|| "auto".to_string(), |w| w[1].clone());
        let mut nranks = first_cfg.local_ranks();
        let mut plans: Vec<StagePlan> = suite
            .collectives
            .iter()
            .map(|&c| suite::one(suite, flags, &self.out, Stage::Correctness, c, perf_max))
            .collect();
        let mut perf_planned = false;
        let mut i = 0;
        while i < plans.len() || !perf_planned {
            if i == plans.len() {
                // Correctness is done: the backend is known, so the sweep can be bounded by
                // the memory its buffers live in.
                perf_planned = true;
                let end = if stop.is_some() {
                    perf_max
                } else {
                    self.perf_end(perf_max, &backend, &first_cfg, boot.as_mut(), &mut notes)?
                };
                plans.extend(
                    suite
                        .collectives
                        .iter()
                        .map(|&c| suite::one(suite, flags, &self.out, Stage::Performance, c, end)),
                );
                continue;
            }
            let plan = plans[i].clone();
            i += 1;
            if let Some((class, _)) = &stop {
                ran.push(Ran {
                    plan,
                    end: RunEnd::NotRun(*class),
                    exit_status: class.exit_status(),
                    error: None,
                });
                continue;
            }
            let t0 = Instant::now();
            let result = stage_config(&plan).and_then(|cfg| {
                let outputs = Outputs {
                    text_file: Some(self.out.join(&plan.text)),
                    quiet: true,
                };
                bench_run::run_joined(&cfg, &join, &outputs, None)
            });
            let seconds = t0.elapsed().as_secs_f64();
            match result {
                Ok(done) => {
                    backend = done.backend.to_string();
                    nranks = done.nranks;
                    say(&format!(
                        "# {:<11} {:<14} {} rows, {:.1} s{}",
                        plan.stage.name(),
                        plan.collective.name(),
                        done.outcome.rows.len(),
                        seconds,
                        if done.outcome.summary.out_of_bounds > 0 {
                            format!(", {} wrong", done.outcome.summary.out_of_bounds)
                        } else {
                            String::new()
                        }
                    ));
                    ran.push(Ran {
                        plan,
                        end: RunEnd::Completed { seconds },
                        exit_status: done.exit_status,
                        error: None,
                    });
                }
                Err(e) => {
                    let class = checks::class_of(&e);
                    say(&format!(
                        "# {:<11} {:<14} stopped: {e}",
                        plan.stage.name(),
                        plan.collective.name()
                    ));
                    ran.push(Ran {
                        plan,
                        end: RunEnd::Failed(class, e.to_string()),
                        exit_status: e.exit_code(),
                        error: Some(e.to_string()),
                    });
                    stop = Some((class, e));
                }
            }
            // A stage that failed on any process stops the suite on every process (a hang
            // is left to the diagnosis below: its peers may be gone).
            if !matches!(stop, Some((FailureClass::Timeout, _)))
                && boot.max_u64(u64::from(stop.is_some()))? > 0
                && stop.is_none()
            {
                stop = Some((
                    FailureClass::Backend,
                    Error::Backend("another process's stage failed".into()),
                ));
            }
        }
        let code = if root {
            let report = self.judge(&ran, backend, nranks, notes);
            self.write_report(&report)?
        } else {
            model::status::PASS
        };
        if let Some((FailureClass::Timeout, e)) = stop {
            // In a multi-process job this runs the hang diagnosis and exits 4 everywhere.
            let e = join.failed(e);
            drop(e);
            return Ok(model::status::TIMEOUT);
        }
        join.finished();
        let agreed = boot.max_u64(u64::from(code))?;
        Ok(u8::try_from(agreed).unwrap_or(model::status::SETUP))
    }

    /// The performance sweep's end: `perf_max`, bounded by host memory when the backend keeps
    /// its buffers there (the NCCL backend bounds itself by device memory, as nccl-tests).
    /// Every process takes the smallest bound.
    fn perf_end(
        &self,
        perf_max: u64,
        backend: &str,
        cfg: &crate::config::RunConfig,
        boot: &mut dyn crate::bench::job::bootstrap::Bootstrap,
        notes: &mut Vec<String>,
    ) -> Result<u64, Error> {
        let local = if backend == "nccl" {
            perf_max
        } else {
            crate::core::host::mem_available()
                .and_then(|avail| suite::host_memory_cap(perf_max, avail, cfg.local_ranks()))
                .unwrap_or(perf_max)
        };
        let end = u64::MAX - boot.max_u64(u64::MAX - local)?;
        if end < perf_max {
            notes.push(format!(
                "performance sweep ends at {} instead of {}: the {backend} backend's buffers \
                 live in host memory",
                crate::core::units::iec_bytes_whole(end),
                crate::core::units::iec_bytes_whole(perf_max)
            ));
        }
        Ok(end)
    }
}

/// The exit status of an `accept` that stopped on an error (see
/// [`model::status`]): 0 stays 0 (the reader of stdout went away), a timeout
/// or NCCL failure keeps its status, everything else is a setup error.
pub fn error_status(e: &Error, reported: u8) -> u8 {
    use model::status;
    match (reported, e) {
        (crate::core::error::exit::OK, _) => crate::core::error::exit::OK,
        (_, Error::Timeout { .. }) => status::TIMEOUT,
        (_, Error::Backend(_)) => status::BACKEND,
        _ => status::SETUP,
    }
}
