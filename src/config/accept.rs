//! The validated `ncclbench accept` command: what the suite runs with and where it writes.

use super::stage::StageBase;
use std::path::PathBuf;

/// A validated `ncclbench accept` command.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptConfig {
    /// `--profile NAME|FILE` (`None`: the builtin `default`).
    pub profile: Option<String>,
    /// `--out DIR`.
    pub out: Option<PathBuf>,
    /// `--force`: an `--out` holding an earlier acceptance run may be reused.
    pub force: bool,
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
    /// `--locate`: run `ncclbench locate` when a performance check fails, with the profile's
    /// `[locate]` settings or locate's defaults.
    pub locate: bool,
}

/// What every stage gets from the `accept` command line.
#[derive(Debug, Clone, PartialEq)]
pub struct StageFlags {
    /// The benchmark flags (`--backend`, `-t`, `-g`, `--nccl-lib`, `--devices`, `--redact`)
    /// and the configuration every stage starts from.
    pub base: StageBase,
    /// `-T` in seconds (the profile's `timeout_s` when not given).
    pub timeout_s: Option<u64>,
    /// `-e` for the performance stages (the profile's `perf_max_bytes` when not given).
    pub perf_max_bytes: Option<u64>,
}
