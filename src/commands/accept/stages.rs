//! The stage loop: every correctness stage, then the performance stages (planned once the
//! backend is known), each run in this process's job. The first failure stops the suite on
//! every process; the stages after it are recorded as not run.

use super::{Acceptance, Ran};
use crate::accept::checks::{self, RunEnd};
use crate::accept::model::{FailureClass, Stage};
use crate::accept::suite::{self, StagePlan};
use crate::bench::job::bootstrap::Bootstrap;
use crate::bench::job::join::Join;
use crate::commands::bench::{self as bench_run, Outputs};
use crate::config::{BackendChoice, RunConfig};
use crate::core::error::Error;
use crate::result::BackendKind;
use std::io::Write;
use std::time::Instant;

/// What the stage loop has found out so far.
pub(super) struct Progress {
    /// Every stage, run or not, in order.
    pub(super) ran: Vec<Ran>,
    /// The failure that stopped the suite.
    pub(super) stop: Option<(FailureClass, Error)>,
    /// The backend the stages ran on; until a stage reports it, the one asked for.
    pub(super) backend: BackendChoice,
    /// The ranks of the job, as the last completed stage counted them.
    pub(super) nranks: usize,
    /// Notes for the report.
    pub(super) notes: Vec<String>,
}

impl Acceptance<'_> {
    /// Runs the whole stage loop; `first_cfg` is the first stage's configuration, which
    /// opened `join`.
    pub(super) fn run_stages(
        &self,
        first_cfg: &RunConfig,
        join: &Join,
        boot: &mut dyn Bootstrap,
        root: bool,
        perf_max: u64,
    ) -> Result<Progress, Error> {
        let mut progress = Progress {
            ran: Vec::new(),
            stop: None,
            backend: self.cfg.flags.base.config.backend,
            nranks: first_cfg.local_ranks(),
            notes: self.skipped.clone(),
        };
        for plan in self.plans(Stage::Correctness, perf_max) {
            self.step(plan, join, boot, root, &mut progress)?;
        }
        // Correctness is done: the backend is known, so the sweep can be bounded by the
        // memory its buffers live in.
        let end = if progress.stop.is_some() {
            perf_max
        } else {
            self.perf_end(
                perf_max,
                progress.backend,
                first_cfg,
                boot,
                &mut progress.notes,
            )?
        };
        for plan in self.plans(Stage::Performance, end) {
            self.step(plan, join, boot, root, &mut progress)?;
        }
        Ok(progress)
    }

    /// The plans of one stage for every collective of the suite; `perf_max` is where the
    /// performance sweep ends.
    fn plans(&self, stage: Stage, perf_max: u64) -> Vec<StagePlan> {
        let suite = &self.profile.suite;
        suite
            .collectives
            .iter()
            .map(|&c| suite::one(suite, &self.cfg.flags, &self.out, stage, c, perf_max))
            .collect()
    }

    /// One step of the loop: a stopped suite records the stage as not run; otherwise the stage
    /// runs and every process learns whether it failed anywhere.
    fn step(
        &self,
        plan: StagePlan,
        join: &Join,
        boot: &mut dyn Bootstrap,
        root: bool,
        progress: &mut Progress,
    ) -> Result<(), Error> {
        if let Some((class, _)) = &progress.stop {
            progress.ran.push(Ran {
                plan,
                end: RunEnd::NotRun(*class),
                exit_status: class.exit_status(),
                error: None,
            });
            return Ok(());
        }
        if let Some(sig) = crate::core::interrupt::pending() {
            progress.stop = Some((FailureClass::Setup, Error::Interrupted(sig)));
            say(
                root,
                &format!("# interrupted by {sig}: the remaining stages are not run"),
            );
            return self.step(plan, join, boot, root, progress);
        }
        self.run_stage(plan, join, root, progress);
        stop_everywhere(boot, &mut progress.stop)
    }

    /// Runs one stage, says on rank 0 how it went and records it; its error becomes the
    /// suite's stop.
    fn run_stage(&self, plan: StagePlan, join: &Join, root: bool, progress: &mut Progress) {
        let t0 = Instant::now();
        let outputs = Outputs {
            text_file: Some(self.out.join(&plan.text)),
            quiet: true,
        };
        let result = bench_run::run_joined(&plan.config, join, &outputs, None);
        let seconds = t0.elapsed().as_secs_f64();
        match result {
            Ok(done) => {
                progress.backend = BackendChoice::Use(done.backend);
                progress.nranks = done.nranks;
                say(
                    root,
                    &format!(
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
                    ),
                );
                progress.ran.push(Ran {
                    plan,
                    end: RunEnd::Completed { seconds },
                    exit_status: done.exit_status,
                    error: None,
                });
            }
            Err(e) => {
                let class = checks::class_of(&e);
                say(
                    root,
                    &format!(
                        "# {:<11} {:<14} stopped: {e}",
                        plan.stage.name(),
                        plan.collective.name()
                    ),
                );
                progress.ran.push(Ran {
                    plan,
                    end: RunEnd::Failed(class, e.to_string()),
                    exit_status: e.exit_code(),
                    error: Some(e.to_string()),
                });
                progress.stop = Some((class, e));
            }
        }
    }

    /// The performance sweep's end: `perf_max`, bounded by host memory when the backend keeps
    /// its buffers there (the NCCL backend bounds itself by device memory, as nccl-tests).
    /// Every process takes the smallest bound.
    fn perf_end(
        &self,
        perf_max: u64,
        backend: BackendChoice,
        cfg: &RunConfig,
        boot: &mut dyn Bootstrap,
        notes: &mut Vec<String>,
    ) -> Result<u64, Error> {
        let local = if backend == BackendChoice::Use(BackendKind::Nccl) {
            perf_max
        } else {
            crate::core::host::mem_available()
                .and_then(|avail| suite::host_memory_cap(perf_max, avail, cfg.local_ranks()))
                .unwrap_or(perf_max)
        };
        let end = u64::MAX - boot.max_u64(u64::MAX - local)?;
        if end < perf_max {
            notes.push(format!(
                "performance sweep ends at {} instead of {}: the {} backend's buffers live in \
                 host memory",
                crate::core::units::iec_bytes_whole(end),
                crate::core::units::iec_bytes_whole(perf_max),
                backend.name()
            ));
        }
        Ok(end)
    }
}

/// A stage that failed on any process stops the suite on every process. A hang stays out of
/// the agreement: its peers may be gone, so the hang diagnosis after the report takes over.
fn stop_everywhere(
    boot: &mut dyn Bootstrap,
    stop: &mut Option<(FailureClass, Error)>,
) -> Result<(), Error> {
    if !matches!(stop, Some((FailureClass::Timeout, _)))
        && boot.max_u64(u64::from(stop.is_some()))? > 0
        && stop.is_none()
    {
        *stop = Some((
            FailureClass::Backend,
            Error::Backend("another process's stage failed".into()),
        ));
    }
    Ok(())
}

/// Prints a progress line on rank 0, flushed so that it shows while the next stage runs. A
/// closed stdout does not stop the suite: the report files still get the verdict.
pub(super) fn say(root: bool, line: &str) {
    if root {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    }
}
