//! What an acceptance run adds up to: the stage runs it made, every check with its measured
//! and expected value, and the verdict with its exit status. Renderers ([`super::report`])
//! read this; nothing here runs or prints anything.

use serde::Serialize;

/// Schema name of `accept.json`.
pub const SCHEMA: &str = "ncclbench-accept/1";

/// Exit statuses of `ncclbench accept` (documented in docs/accept.md). When several classes
/// fail, the first in this order decides: timeout, correctness, backend, performance.
pub mod status {
    /// Every check passed.
    pub const PASS: u8 = 0;
    /// A performance check failed (busbw, latency, baseline regression); data was correct.
    pub const PERFORMANCE: u8 = 1;
    /// Setup error: bad arguments or profile, output not writable, too few GPUs, CUDA or NCCL
    /// could not start, rank count unlike the profile's.
    pub const SETUP: u8 = 2;
    /// NCCL (or the backend) failed during a stage (e.g. an asynchronous NCCL error).
    pub const BACKEND: u8 = 3;
    /// A stage hung: a wait exceeded the timeout.
    pub const TIMEOUT: u8 = 4;
    /// Wrong data: some collective returned wrong elements.
    pub const CORRECTNESS: u8 = 7;
}

/// The part of the suite a check or run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// `-c 1 -d all -o all` over small sizes.
    Correctness,
    /// The size sweep with the profile's bandwidth and latency checks.
    Performance,
    /// The performance results against a saved healthy run (compare rules).
    Baseline,
    /// `ncclbench locate` inside the job: after a failed performance check, or always when the
    /// profile's `[locate]` has floors (the per-node and per-NIC checks).
    Locate,
}

impl Stage {
    /// `correctness`, `performance`, `baseline`, `locate`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Correctness => "correctness",
            Stage::Performance => "performance",
            Stage::Baseline => "baseline",
            Stage::Locate => "locate",
        }
    }
}

/// What kind of failure a failed check is; it decides the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// Timeout/hang (exit 4). Ordered first: it decides the status over every other class.
    Timeout,
    /// Wrong data (exit 7).
    Correctness,
    /// Setup error found while running (exit 2).
    Setup,
    /// Backend failure (exit 3).
    Backend,
    /// Performance below the profile or a baseline regression (exit 1).
    Performance,
}

impl FailureClass {
    /// The exit status of this class.
    pub fn exit_status(self) -> u8 {
        match self {
            FailureClass::Timeout => status::TIMEOUT,
            FailureClass::Correctness => status::CORRECTNESS,
            FailureClass::Setup => status::SETUP,
            FailureClass::Backend => status::BACKEND,
            FailureClass::Performance => status::PERFORMANCE,
        }
    }

    /// `timeout`, `correctness`, `setup`, `backend`, `performance`.
    pub fn name(self) -> &'static str {
        match self {
            FailureClass::Timeout => "timeout",
            FailureClass::Correctness => "correctness",
            FailureClass::Setup => "setup",
            FailureClass::Backend => "backend",
            FailureClass::Performance => "performance",
        }
    }
}

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Met.
    Pass,
    /// Not met (see the check's class).
    Fail,
    /// Not evaluated because an earlier stage stopped the suite (counts as not passed).
    NotRun,
}

impl Status {
    /// `PASS`, `FAIL`, `NOT RUN`.
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::NotRun => "NOT RUN",
        }
    }
}

/// One check: what was measured against what the profile expects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// Stage.
    pub stage: Stage,
    /// Collective it concerns (`all_reduce`, ...), `None` for suite-wide checks.
    pub collective: Option<String>,
    /// What is checked, one short phrase: `no wrong elements`, `busbw 1 GiB..8 GiB`,
    /// `time 8 B..1 KiB`, `completes within 300 s`, `no slower size than baseline`.
    pub name: String,
    /// The measured value as shown to people, with its unit (`412.3 GB/s`, `0 wrong`).
    pub measured: String,
    /// The expectation as shown to people (`>= 350 GB/s (typical 350-480)`).
    pub expected: String,
    /// Measured value as a number, when there is one (unit in `unit`).
    pub measured_value: Option<f64>,
    /// Threshold as a number, when there is one.
    pub expected_value: Option<f64>,
    /// Unit of the two numbers: `GB/s`, `us`, `elements`, `sizes`.
    pub unit: Option<String>,
    /// Result.
    pub status: Status,
    /// Kind of failure when `status` is not `Pass`.
    pub class: FailureClass,
    /// More about a failure (the worst size, the failing dtype/op, the rerun command).
    pub detail: Option<String>,
}

/// One benchmark run the suite made (one collective, one stage).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageRun {
    /// Stage.
    pub stage: Stage,
    /// Collective.
    pub collective: String,
    /// The equivalent command line (`ncclbench all_reduce -b 8 ...`): rerun it by hand.
    pub argv: Vec<String>,
    /// Result files of the run, relative to the output directory.
    pub files: Vec<String>,
    /// Exit status the run would have had as its own command.
    pub exit_status: u8,
    /// Wall time, seconds.
    pub seconds: f64,
    /// The error that stopped it, when one did.
    pub error: Option<String>,
}

/// Which profile judged the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileRef {
    /// Profile name.
    pub name: String,
    /// `builtin` or the file it was read from.
    pub source: String,
    /// One line saying what configuration it describes.
    pub description: String,
    /// True when its thresholds are typical ranges, not guarantees (every shipped profile).
    pub typical: bool,
}

/// The verdict of the whole suite.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// True when every check passed.
    pub passed: bool,
    /// The exit status (see [`status`]).
    pub exit_status: u8,
    /// Classes that failed, in deciding order.
    pub failed_classes: Vec<FailureClass>,
    /// Checks that did not pass.
    pub failed: usize,
    /// All checks.
    pub total: usize,
}

impl Verdict {
    /// The verdict over a list of checks.
    pub fn of(checks: &[Check]) -> Verdict {
        let mut classes: Vec<FailureClass> = checks
            .iter()
            .filter(|c| c.status != Status::Pass)
            .map(|c| c.class)
            .collect();
        classes.sort();
        classes.dedup();
        let failed = checks.iter().filter(|c| c.status != Status::Pass).count();
        Verdict {
            passed: failed == 0,
            exit_status: classes.first().map_or(status::PASS, |c| c.exit_status()),
            failed_classes: classes,
            failed,
            total: checks.len(),
        }
    }
}

/// A whole acceptance run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AcceptReport {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The profile.
    pub profile: ProfileRef,
    /// Ranks in the job.
    pub nranks: usize,
    /// Backend the stages ran on (`nccl`, `host`, `mpi`).
    pub backend: String,
    /// Local start time, `%Y-%m-%d %H:%M:%S`.
    pub started: String,
    /// Local end time.
    pub finished: String,
    /// The output directory.
    pub out_dir: String,
    /// Every stage run, in order.
    pub runs: Vec<StageRun>,
    /// Every check, in order.
    pub checks: Vec<Check>,
    /// Lines worth saying once (sweep clamped to memory, profile rank count, ...).
    pub notes: Vec<String>,
    /// The verdict.
    pub verdict: Verdict,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(status: Status, class: FailureClass) -> Check {
        Check {
            stage: Stage::Performance,
            collective: Some("all_reduce".into()),
            name: "busbw".into(),
            measured: "1 GB/s".into(),
            expected: ">= 2 GB/s".into(),
            measured_value: Some(1.0),
            expected_value: Some(2.0),
            unit: Some("GB/s".into()),
            status,
            class,
            detail: None,
        }
    }

    #[test]
    fn the_worst_failure_class_decides_the_status() {
        let v = Verdict::of(&[
            check(Status::Pass, FailureClass::Performance),
            check(Status::Fail, FailureClass::Performance),
            check(Status::Fail, FailureClass::Correctness),
        ]);
        assert!(!v.passed);
        assert_eq!(v.exit_status, status::CORRECTNESS);
        assert_eq!(v.failed, 2);
        let v = Verdict::of(&[
            check(Status::Fail, FailureClass::Correctness),
            check(Status::NotRun, FailureClass::Timeout),
        ]);
        assert_eq!(v.exit_status, status::TIMEOUT);
        let v = Verdict::of(&[check(Status::Pass, FailureClass::Performance)]);
        assert_eq!((v.passed, v.exit_status), (true, status::PASS));
        assert_eq!(
            Verdict::of(&[check(Status::Fail, FailureClass::Performance)]).exit_status,
            1
        );
    }
}
