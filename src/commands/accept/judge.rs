//! Judging a finished suite: every stage's CSV read back and checked against the profile, the
//! baseline comparison, and the report that results.

use super::outdir::result_files;
use super::{Acceptance, Ran};
use crate::accept::checks::{self, RunEnd};
use crate::accept::model::{
    self, AcceptReport, FailureClass, ProfileRef, Stage, StageRun, Verdict,
};
use crate::accept::suite;
use crate::analysis::input::InputRow;
use std::path::PathBuf;

impl Acceptance<'_> {
    /// Every check, from the stage files.
    pub(super) fn judge(
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
            finished: crate::bench::runner::local_time(),
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
                    .unwrap_or(crate::config::compare::DEFAULT_THRESHOLD_PCT),
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
        let cmp_cfg = crate::config::compare::CompareConfig {
            before: result_files(&paths),
            after: perf_csvs,
            threshold_pct: threshold,
            format: crate::config::ReportFormat::Text,
            out: None,
        };
        let cmp = match crate::analysis::compare::compare(&cmp_cfg) {
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
        match crate::analysis::compare::write_dir(&cmp, &dir) {
            Ok(written) => {
                let rel = written
                    .iter()
                    .filter_map(|p| p.strip_prefix(&self.out).ok())
                    .map(|p| p.to_string_lossy().into_owned());
                if let Err(e) = self.manifest.record(rel) {
                    notes.push(format!("baseline report's files not recorded: {e}"));
                }
            }
            Err(e) => notes.push(format!("baseline report not written: {e}")),
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
}
