//! The locate stage: after the stages are judged, `ncclbench locate` runs inside the same job
//! when a performance check failed (so the report names where the job is slow), or always when
//! the profile's `[locate]` has floors: then it is the per-node and per-NIC stage, every rail
//! measured with one GPU per node per communicator against the per-NIC figure. Its files go to
//! `locate/` in the output directory; the report gets one check naming the suspects and the
//! Slurm exclude line.

use super::Acceptance;
use crate::accept::checks;
use crate::accept::model::{AcceptReport, Check, FailureClass, Stage, StageRun, Status, Verdict};
use crate::accept::profile::LocateStage;
use crate::bench::job::bootstrap::Bootstrap;
use crate::bench::job::join::Join;
use crate::commands::locate::{self, Located};
use crate::config::locate::LocateConfig;
use crate::core::collective::Collective;
use crate::core::error::Error;
use crate::locate::render;
use crate::locate::run::Finding;
use crate::locate::verdict::Floors;
use std::time::Instant;

/// The output directory's subdirectory for locate's files.
pub(super) const DIR: &str = "locate";

impl Acceptance<'_> {
    /// The stage's settings: the profile's `[locate]`, or locate's defaults under `--locate`;
    /// `None` when neither asks for it.
    fn locate_settings(&self) -> Option<LocateStage> {
        self.profile.locate.clone().or_else(|| {
            self.cfg.locate.then_some(LocateStage {
                collective: Collective::AllReduce,
                bytes: None,
                rounds: 3,
                intra_node_min_gbs: None,
                inter_node_min_gbs: None,
            })
        })
    }

    /// Runs the stage when it is due (rank 0 decides from its `report`, every process learns
    /// the answer) and adds its check and run to the report. `None`: it did not run.
    pub(super) fn locate_stage(
        &self,
        join: &Join,
        boot: &mut dyn Bootstrap,
        report: Option<&mut AcceptReport>,
    ) -> Result<Option<Located>, Error> {
        let Some(settings) = self.locate_settings() else {
            return Ok(None);
        };
        let floors = Floors {
            intra_gbs: settings.intra_node_min_gbs,
            inter_gbs: settings.inter_node_min_gbs,
        };
        let perf_failed = report.as_ref().is_some_and(|r| {
            r.checks
                .iter()
                .any(|c| c.status == Status::Fail && c.class == FailureClass::Performance)
        });
        let has_floors = floors.intra_gbs.is_some() || floors.inter_gbs.is_some();
        if boot.max_u64(u64::from(perf_failed || has_floors))? == 0 {
            if let Some(r) = report {
                r.notes.push(
                    "locate stage not run: every performance check passed and [locate] sets no \
                     floors"
                        .into(),
                );
            }
            return Ok(None);
        }
        let cfg = self.locate_config(&settings);
        let run_cfg = locate::job_config(&cfg);
        let out = self.out.join(DIR);
        let made = match &report {
            Some(_) => std::fs::create_dir_all(&out).map_err(|source| Error::Io {
                path: out.clone(),
                source,
            }),
            None => Ok(()),
        };
        if boot.max_u64(u64::from(made.is_err()))? > 0 {
            made?;
            return Err(Error::Backend(
                "rank 0 could not make the locate directory".into(),
            ));
        }
        super::stages::say(
            report.is_some(),
            &format!(
                "# locate      {} ({}): finding where the job is slow",
                settings.collective.name(),
                if perf_failed {
                    "a performance check failed"
                } else {
                    "the profile's [locate] floors"
                }
            ),
        );
        let t0 = Instant::now();
        let result = locate::measure(&cfg, &run_cfg, join, &out, floors);
        let seconds = t0.elapsed().as_secs_f64();
        if let Some(r) = report {
            let status = result.as_ref().map_or(0, |l| l.status);
            r.runs.push(StageRun {
                stage: Stage::Locate,
                collective: settings.collective.name().into(),
                argv: argv(&cfg, &out),
                files: ["locate.txt", "locate.json", "hostfile"]
                    .iter()
                    .filter(|f| out.join(f).exists())
                    .map(|f| format!("{DIR}/{f}"))
                    .collect(),
                exit_status: result.as_ref().map_or_else(|e| e.exit_code(), |_| status),
                seconds,
                error: result.as_ref().err().map(ToString::to_string),
            });
            let mut c = match &result {
                Ok(l) => check(&settings, l.finding.as_deref()),
                Err(e) => failed(&settings, e),
            };
            if let (
                true,
                Ok(Located {
                    finding: Some(f), ..
                }),
            ) = (self.cfg.redact, &result)
            {
                // The report's own redaction knows this process's host, not the job's.
                let mask = locate::redactor(f);
                c.measured = mask.text(&c.measured);
                c.detail = c.detail.map(|d| mask.text(&d));
            }
            r.checks.push(c);
            r.verdict = Verdict::of(&r.checks);
            r.finished = crate::bench::runner::local_time();
        }
        result.map(Some)
    }

    /// `ncclbench locate`'s configuration for the stage: the settings, the stages' placement
    /// flags and timeout, locate's defaults for the rest.
    fn locate_config(&self, s: &LocateStage) -> LocateConfig {
        LocateConfig {
            collective: s.collective,
            bytes: s.bytes,
            rounds: s.rounds,
            iters: 10,
            warmup: 2,
            timeout_s: crate::accept::suite::timeout_s(&self.profile.suite, &self.cfg.flags),
            out: Some(self.out.join(DIR)),
            profile: None,
            nccl_logs: Vec::new(),
            base: self.cfg.flags.base.clone(),
            redact: self.cfg.redact,
        }
    }
}

/// The equivalent `ncclbench locate` command line, to rerun by hand.
fn argv(cfg: &LocateConfig, out: &std::path::Path) -> Vec<String> {
    let mut a: Vec<String> = ["ncclbench", "locate", "--collective", cfg.collective.name()]
        .map(String::from)
        .into();
    if let Some(b) = cfg.bytes {
        a.extend(["-b".into(), b.to_string()]);
    }
    a.extend([
        "--rounds".into(),
        cfg.rounds.to_string(),
        "-w".into(),
        cfg.warmup.to_string(),
        "-n".into(),
        cfg.iters.to_string(),
        "-T".into(),
        cfg.timeout_s.to_string(),
    ]);
    a.extend(cfg.base.given.args());
    a.extend(["--out".into(), out.display().to_string()]);
    a
}

/// What the stage expects, in words: no suspect, and the floors it judged by.
fn expected(s: &LocateStage) -> String {
    let mut floors = Vec::new();
    if let Some(f) = s.intra_node_min_gbs {
        floors.push(format!("nodes >= {f} GB/s"));
    }
    if let Some(f) = s.inter_node_min_gbs {
        floors.push(format!("rail pairs >= {f} GB/s"));
    }
    if floors.is_empty() {
        "none".into()
    } else {
        format!("none ({})", floors.join(", "))
    }
}

fn base(s: &LocateStage) -> Check {
    Check {
        stage: Stage::Locate,
        collective: Some(s.collective.name().into()),
        name: "no suspect node, GPU or link".into(),
        measured: String::new(),
        expected: expected(s),
        measured_value: None,
        expected_value: Some(0.0),
        unit: Some("suspects".into()),
        status: Status::Pass,
        class: FailureClass::Performance,
        detail: None,
    }
}

/// The stage's check from rank 0's finding: every suspect named, the exclude line in the
/// detail.
fn check(s: &LocateStage, f: Option<&Finding>) -> Check {
    let mut c = base(s);
    let Some(f) = f else {
        c.measured = "no finding".into();
        c.status = Status::Fail;
        return c;
    };
    let n = f.verdict.suspects.len();
    c.measured_value = Some(n as f64);
    if n == 0 {
        c.measured = "none".into();
        return c;
    }
    let named: Vec<String> = f
        .verdict
        .suspects
        .iter()
        .map(|s| format!("{} {}", s.what.name(), s.place))
        .collect();
    c.measured = format!("{n} suspect(s): {}", named.join("; "));
    c.status = Status::Fail;
    let mut detail = format!("evidence in {DIR}/locate.txt");
    if let Some(x) = render::slurm_exclude(f) {
        detail = format!("slurm: {x}; hostfile without them: {DIR}/hostfile; {detail}");
    }
    c.detail = Some(detail);
    c
}

/// The stage's check when locate itself stopped on an error.
fn failed(s: &LocateStage, e: &Error) -> Check {
    let mut c = base(s);
    c.measured = "stopped".into();
    c.status = Status::Fail;
    c.class = checks::class_of(e);
    c.detail = Some(e.to_string());
    c
}
