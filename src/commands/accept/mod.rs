//! `ncclbench accept`: the new-cluster acceptance suite with a PASS/FAIL verdict.
//!
//! One command, under the same launcher as a benchmark (`mpirun -np 16 ncclbench accept
//! --profile h100-nvswitch`), runs per collective a correctness stage and a performance stage
//! ([`suite`]) in this process's job, writes each stage's text table and CSV (with its
//! environment sidecar) into the output directory, then judges them (`checks`) against a
//! [`profile`] and, when one is given, a saved healthy run (the `compare` rules). The verdict
//! ([`model`]) is printed as a table and written as `accept.txt`, `accept.json` and
//! `junit.xml` (`report`); its exit status tells the failure classes apart
//! ([`model::status`]).
//!
//! Every process runs the same stages; only rank 0 writes and judges, and every process exits
//! with rank 0's status. A hang stops the suite: the stages after it are reported as not run,
//! the report is written, then the hang diagnosis of a multi-process job takes over.
//!
//! Here: the command, from the job's opening to its exit status. `stages`: the stage loop.
//! `outdir`: the output directory (made before any stage, the report files written into it).
//! `manifest`: the record of the files this run writes there, all `--force` may remove.
//! `judge`: the stages' files read back into checks and the report. `locate_stage`: `locate`
//! inside the job after a performance failure, or as the per-NIC stage.

mod judge;
mod locate_stage;
mod manifest;
mod outdir;
mod stages;
#[cfg(test)]
mod tests;

use crate::accept::checks::RunEnd;
use crate::accept::model::{self, FailureClass, Stage};
use crate::accept::suite::{self, StagePlan};
use crate::accept::{make_profile, profile};
use crate::bench::job::bootstrap::Bootstrap;
use crate::bench::job::join::Join;
use crate::config::accept::AcceptConfig;
use crate::config::RunConfig;
use crate::core::error::Error;
use stages::say;
use std::io::Write;
use std::path::PathBuf;

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

/// The acceptance run in progress.
struct Acceptance<'a> {
    cfg: &'a AcceptConfig,
    profile: profile::Profile,
    out: PathBuf,
    /// What this run has written (or is about to) into `out`, for a later `--force`.
    manifest: manifest::Manifest,
    /// Why collectives of the suite were left out at this rank count.
    skipped: Vec<String>,
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
            manifest: manifest::Manifest::new(&out),
            skipped: Vec::new(),
            out,
            started,
        })
    }

    /// Runs the suite: the job opened by the first stage, the output directory, the stage
    /// loop, the report; returns the status every process exits with.
    fn run(mut self) -> Result<u8, Error> {
        // An interrupt stops the suite between two rows, so the report is still written.
        crate::core::interrupt::catch();
        let mut perf_max = suite::perf_max_bytes(&self.profile.suite, &self.cfg.flags);
        self.check_ranks()?;
        self.skip_what_cannot_run()?;
        let first_cfg = self.first_stage_config(perf_max)?;
        let on_host = crate::commands::bench::runs_on_host_memory(&first_cfg);
        if on_host && self.cfg.flags.perf_max_bytes.is_none() {
            // The host backend is for trying things out: its default suite ends in about a
            // minute instead of sweeping host memory for many.
            perf_max = suite::bound_for_host(&mut self.profile.suite, perf_max);
        }
        let join = Join::open(&first_cfg)?;
        let mut boot = join.bootstrap();
        let root = boot.is_root();
        if !self.prepared_everywhere(boot.as_mut(), root)? {
            return Ok(model::status::SETUP);
        }
        say(
            root,
            &format!(
                "# ncclbench accept: profile {} ({}), results in {}",
                self.profile.name,
                self.profile.source,
                self.out.display()
            ),
        );
        say(
            root,
            &suite::describe(&self.profile.suite, perf_max, on_host),
        );
        for line in &self.skipped {
            say(root, &format!("# {line}"));
        }
        let progress = self.run_stages(&first_cfg, &join, boot.as_mut(), root, perf_max)?;
        let mut report = root.then(|| {
            self.judge(
                &progress.ran,
                progress.backend.name().to_string(),
                progress.nranks,
                progress.notes,
            )
        });
        let located = if progress.stop.is_none() {
            self.locate_stage(&join, boot.as_mut(), report.as_mut())?
        } else {
            None
        };
        let code = match &mut report {
            Some(report) => {
                if let Some((_, Error::Interrupted(_))) = &progress.stop {
                    // The status the process exits with, so the report does not contradict it.
                    report.verdict.exit_status = crate::core::interrupt::exit_status();
                }
                self.write_report(report)?
            }
            None => model::status::PASS,
        };
        if let Some(located) = &located {
            // Every process takes part in locate's ending; a job with a rank that stopped
            // answering ends there, with the report already written.
            let timeout = suite::timeout_s(&self.profile.suite, &self.cfg.flags);
            let code = crate::commands::locate::end(&join, located, code, timeout)?;
            join.finished();
            return Ok(code);
        }
        exit_status(code, progress.stop, &join, boot.as_mut())
    }

    /// The first stage's configuration, which opens the job.
    fn first_stage_config(&self, perf_max: u64) -> Result<RunConfig, Error> {
        let suite = &self.profile.suite;
        let first = suite::one(
            suite,
            &self.cfg.flags,
            &self.out,
            Stage::Correctness,
            suite.collectives[0],
            perf_max,
        );
        Ok(first.config)
    }

    /// The ranks of the job: its processes (from the launcher) times each one's local ranks.
    fn job_ranks(&self) -> (usize, usize) {
        let procs = crate::bench::job::launcher::detect()
            .and_then(|l| l.world_size)
            .unwrap_or(1);
        (procs, procs * self.cfg.flags.base.config.local_ranks())
    }

    /// Refuses a profile whose thresholds assume another number of ranks than this job has.
    fn check_ranks(&self) -> Result<(), Error> {
        let Some(want) = self.profile.ranks else {
            return Ok(());
        };
        let (procs, have) = self.job_ranks();
        if have != want {
            return Err(Error::usage(format!(
                "profile {} expects {want} ranks, this job has {have} ({procs} process(es) x \
                 {} local ranks); choose a profile for this layout",
                self.profile.name,
                self.cfg.flags.base.config.local_ranks()
            )));
        }
        Ok(())
    }

    /// Takes out of the suite, before its first stage, every collective that cannot run on
    /// this job's rank count (hypercube on 3, 6 or 12 ranks), each with a line saying why (on
    /// stdout and in the report's notes). A suite left with nothing to run is refused.
    fn skip_what_cannot_run(&mut self) -> Result<(), Error> {
        let (_, nranks) = self.job_ranks();
        let root = self.cfg.flags.base.config.root;
        let mut kept = Vec::new();
        for &c in &self.profile.suite.collectives {
            match suite::cannot_run(c, root, nranks) {
                Some(why) => self.skipped.push(format!(
                    "{} skipped (correctness and performance): {why}",
                    c.name()
                )),
                None => kept.push(c),
            }
        }
        if kept.is_empty() {
            return Err(Error::usage(format!(
                "accept: no collective of profile {} can run on {nranks} ranks: {}",
                self.profile.name,
                self.skipped.join("; ")
            )));
        }
        self.profile.suite.collectives = kept;
        Ok(())
    }

    /// Rank 0 makes the output directory, and every process learns whether that failed, so
    /// that all of them stop before any stage. `false`: it failed (rank 0 returns its error).
    fn prepared_everywhere(&self, boot: &mut dyn Bootstrap, root: bool) -> Result<bool, Error> {
        let prepared = if root { self.prepare_dir() } else { Ok(()) };
        if boot.max_u64(u64::from(prepared.is_err()))? > 0 {
            prepared?;
            return Ok(false);
        }
        Ok(true)
    }
}

/// The status every process exits with: rank 0's `code`, agreed over the job. After a hang
/// the job's hang diagnosis runs instead; in a multi-process job it exits 4 everywhere.
fn exit_status(
    code: u8,
    stop: Option<(FailureClass, Error)>,
    join: &Join,
    boot: &mut dyn Bootstrap,
) -> Result<u8, Error> {
    if let Some((FailureClass::Timeout, e)) = stop {
        let e = join.failed(e);
        drop(e);
        return Ok(model::status::TIMEOUT);
    }
    if let Some((_, Error::Interrupted(_))) = stop {
        // The report says what ran; the status says the run was stopped, not judged.
        join.finished();
        return Ok(crate::core::interrupt::exit_status());
    }
    join.finished();
    let agreed = boot.max_u64(u64::from(code))?;
    Ok(u8::try_from(agreed).unwrap_or(model::status::SETUP))
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
