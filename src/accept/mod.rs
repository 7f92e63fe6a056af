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

pub mod checks;
pub mod make_profile;
pub mod model;
pub mod profile;
pub mod report;
pub mod suite;

use crate::analysis::input::InputRow;
use crate::app::{self, Outputs};
use crate::cli::Command;
use crate::error::Error;
use crate::multi::join::Join;
use checks::RunEnd;
use model::{AcceptReport, FailureClass, ProfileRef, Stage, StageRun, Verdict};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;
use suite::{StageFlags, StagePlan};

/// A validated `ncclbench accept` command.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptConfig {
    /// `--profile NAME|FILE` (`None`: the builtin `default`).
    pub profile: Option<String>,
    /// `--out DIR`.
    pub out: Option<PathBuf>,
    /// `--make-profile RUN...`: print a profile made from these result files instead.
    pub make_profile: Vec<PathBuf>,
    /// `--name` of a made profile.
    pub name: String,
    /// `--margin` of a made profile, percent.
    pub margin_pct: f64,
    /// `--baseline RUN...`: replaces the profile's baseline.
    pub baseline: Vec<PathBuf>,
    /// `--threshold` of the baseline comparison, percent (the profile's when `None`).
    pub threshold_pct: Option<f64>,
    /// `--list-profiles`.
    pub list_profiles: bool,
    /// Flags for every stage.
    pub flags: StageFlags,
    /// `--redact`: stage outputs and the report mask identifying text.
    pub redact: bool,
}

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

/// The result files of runs given as files or directories. A directory holding `performance/`
/// (an accept output directory) stands for that; a directory stands for its CSV files when it
/// has any, since a stage's text table holds the same rows as its CSV and reading both would
/// count every sample twice. Files are kept as given.
pub fn result_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let dir = if p.join("performance").is_dir() {
            p.join("performance")
        } else {
            p.clone()
        };
        let mut csvs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "csv"))
                    .collect()
            })
            .unwrap_or_default();
        csvs.sort();
        if csvs.is_empty() {
            out.push(dir);
        } else {
            out.extend(csvs);
        }
    }
    out
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
        let started = crate::runner::local_time();
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
            let procs = crate::launcher::detect()
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
                app::run_joined(&cfg, &join, &outputs, None)
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

    /// The output directory, new or empty, with the profile and the environment in it.
    fn prepare_dir(&self) -> Result<(), Error> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        if self.out.exists() {
            let mut entries = std::fs::read_dir(&self.out).map_err(io(&self.out))?;
            if entries.next().is_some() {
                return Err(Error::usage(format!(
                    "accept: --out {} is not empty; give a new directory (results are never \
                     overwritten)",
                    self.out.display()
                )));
            }
        }
        for sub in ["correctness", "performance"] {
            let d = self.out.join(sub);
            std::fs::create_dir_all(&d).map_err(io(&d))?;
        }
        let p = self.out.join("profile.toml");
        std::fs::write(&p, &self.profile.text).map_err(io(&p))?;
        let mut env = crate::environment::collect(
            self.cfg
                .flags
                .passthrough
                .windows(2)
                .find(|w| w[0] == "--nccl-lib")
                .map(|w| Path::new(&w[1])),
        );
        if self.cfg.redact {
            crate::environment::redact_report(&mut env, &app::process_redactor());
        }
        let p = self.out.join("environment.json");
        let text = serde_json::to_string_pretty(&env).map_err(std::io::Error::from);
        std::fs::write(&p, text.map_err(io(&p))? + "\n").map_err(io(&p))?;
        Ok(())
    }

    /// The performance sweep's end: `perf_max`, bounded by host memory when the backend keeps
    /// its buffers there (the NCCL backend bounds itself by device memory, as nccl-tests).
    /// Every process takes the smallest bound.
    fn perf_end(
        &self,
        perf_max: u64,
        backend: &str,
        cfg: &crate::config::RunConfig,
        boot: &mut dyn crate::bootstrap::Bootstrap,
        notes: &mut Vec<String>,
    ) -> Result<u64, Error> {
        let local = if backend == "nccl" {
            perf_max
        } else {
            suite::mem_available()
                .and_then(|avail| suite::host_memory_cap(perf_max, avail, cfg.local_ranks()))
                .unwrap_or(perf_max)
        };
        let end = u64::MAX - boot.max_u64(u64::MAX - local)?;
        if end < perf_max {
            notes.push(format!(
                "performance sweep ends at {} instead of {}: the {backend} backend's buffers \
                 live in host memory",
                checks::size(end),
                checks::size(perf_max)
            ));
        }
        Ok(end)
    }

    /// Every check, from the stage files.
    fn judge(
        &self,
        ran: &[Ran],
        backend: String,
        nranks: usize,
        mut notes: Vec<String>,
    ) -> AcceptReport {
        let timeout = suite::timeout_s(&self.profile.suite, &self.cfg.flags);
        let mut all_checks = Vec::new();
        let mut runs = Vec::new();
        for r in ran {
            let rows = self.rows_of(r, &mut notes);
            let coll = r.plan.collective.name();
            all_checks.push(checks::completion(
                r.plan.stage,
                coll,
                &r.end,
                &rows,
                timeout,
            ));
            match r.plan.stage {
                Stage::Correctness => all_checks.push(checks::no_wrong(coll, &r.end, &rows)),
                _ => {
                    for b in self
                        .profile
                        .busbw
                        .iter()
                        .filter(|b| b.collective == r.plan.collective)
                    {
                        all_checks.push(checks::busbw(b, &rows, &r.end));
                    }
                    for l in self
                        .profile
                        .latency
                        .iter()
                        .filter(|l| l.collective == r.plan.collective)
                    {
                        all_checks.push(checks::latency(l, &rows, &r.end));
                    }
                }
            }
            let mut files = vec![r.plan.text.clone(), r.plan.csv.clone()];
            files.retain(|f| self.out.join(f).exists());
            runs.push(StageRun {
                stage: r.plan.stage,
                collective: coll.to_string(),
                argv: r.plan.argv.clone(),
                files,
                exit_status: r.exit_status,
                seconds: match r.end {
                    RunEnd::Completed { seconds } => seconds,
                    _ => 0.0,
                },
                error: r.error.clone(),
            });
        }
        let perf_all_ran = ran
            .iter()
            .filter(|r| r.plan.stage == Stage::Performance)
            .all(|r| matches!(r.end, RunEnd::Completed { .. }));
        let perf_csvs = ran
            .iter()
            .filter(|r| r.plan.stage == Stage::Performance)
            .map(|r| self.out.join(&r.plan.csv))
            .collect();
        all_checks.extend(self.baseline_checks(perf_all_ran, perf_csvs, &mut notes));
        if self.profile.typical {
            notes.insert(
                0,
                "thresholds are typical ranges from public material, not guarantees".into(),
            );
        }
        if self.profile.busbw.is_empty() && self.profile.latency.is_empty() {
            notes.push(format!(
                "profile {} has no bandwidth or latency thresholds: performance is recorded, \
                 not judged (see --list-profiles, or --make-profile from a healthy run)",
                self.profile.name
            ));
        }
        let verdict = Verdict::of(&all_checks);
        AcceptReport {
            schema: model::SCHEMA,
            profile: ProfileRef {
                name: self.profile.name.clone(),
                source: self.profile.source.clone(),
                description: self.profile.description.clone(),
                typical: self.profile.typical,
            },
            nranks,
            backend,
            started: self.started.clone(),
            finished: crate::runner::local_time(),
            out_dir: self.out.display().to_string(),
            runs,
            checks: all_checks,
            notes,
            verdict,
        }
    }

    /// The rows a stage wrote (none when it did not run or wrote nothing readable).
    fn rows_of(&self, r: &Ran, notes: &mut Vec<String>) -> Vec<InputRow> {
        if matches!(r.end, RunEnd::NotRun(_)) {
            return Vec::new();
        }
        let path = self.out.join(&r.plan.csv);
        if !path.exists() {
            return Vec::new();
        }
        match crate::analysis::read::read_files(&[path]) {
            Ok(set) => set.rows,
            Err(e) => {
                // A stage stopped before its first row leaves a header-only file.
                if matches!(r.end, RunEnd::Completed { .. }) {
                    notes.push(format!("{}: {e}", r.plan.csv));
                }
                Vec::new()
            }
        }
    }

    /// The baseline comparison, when the profile or `--baseline` names one.
    fn baseline_checks(
        &self,
        perf_all_ran: bool,
        perf_csvs: Vec<PathBuf>,
        notes: &mut Vec<String>,
    ) -> Vec<model::Check> {
        let (paths, threshold) = match (&self.cfg.baseline, &self.profile.baseline) {
            (b, _) if !b.is_empty() => (
                b.clone(),
                self.cfg
                    .threshold_pct
                    .unwrap_or(crate::compare::DEFAULT_THRESHOLD_PCT),
            ),
            (_, Some(p)) => (
                p.paths.clone(),
                self.cfg.threshold_pct.unwrap_or(p.threshold_pct),
            ),
            _ => return Vec::new(),
        };
        let failed = |measured: String, detail: String, class: FailureClass, status| model::Check {
            stage: Stage::Baseline,
            collective: None,
            name: "comparison with the baseline".into(),
            measured,
            expected: "a comparison".into(),
            measured_value: None,
            expected_value: None,
            unit: None,
            status,
            class,
            detail: Some(detail),
        };
        if !perf_all_ran {
            return vec![failed(
                "not run".into(),
                "a performance stage did not complete".into(),
                FailureClass::Performance,
                model::Status::NotRun,
            )];
        }
        let cmp_cfg = crate::compare::CompareConfig {
            before: result_files(&paths),
            after: perf_csvs,
            threshold_pct: threshold,
            format: crate::config::ReportFormat::Text,
            out: None,
        };
        let cmp = match crate::compare::compare(&cmp_cfg) {
            Ok(c) => c,
            Err(e) => {
                return vec![failed(
                    "unreadable".into(),
                    e.to_string(),
                    FailureClass::Setup,
                    model::Status::Fail,
                )]
            }
        };
        notes.extend(cmp.banner.iter().cloned());
        let dir = self.out.join("baseline");
        if let Err(e) = crate::compare::write_dir(&cmp, &dir) {
            notes.push(format!("baseline report not written: {e}"));
        }
        let checks = checks::baseline(&cmp);
        if checks.is_empty() {
            return vec![failed(
                "nothing in common".into(),
                "no out-of-place curve is in both the baseline and this run".into(),
                FailureClass::Setup,
                model::Status::Fail,
            )];
        }
        checks
    }

    /// Writes the report files and prints the table; returns the verdict's status.
    fn write_report(&self, report: &AcceptReport) -> Result<u8, Error> {
        let redactor = self.cfg.redact.then(app::process_redactor);
        let mask = |s: String| match &redactor {
            Some(r) => r.text(&s),
            None => s,
        };
        let text = mask(report::text(report));
        for (name, body) in [
            ("accept.txt", text.clone()),
            ("accept.json", mask(report::json(report))),
            ("junit.xml", mask(report::junit(report))),
        ] {
            let p = self.out.join(name);
            std::fs::write(&p, body).map_err(|source| Error::Io { path: p, source })?;
        }
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        Ok(report.verdict.exit_status)
    }
}
