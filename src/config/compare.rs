//! The validated `ncclbench compare` command.

use super::ReportFormat;
use std::path::PathBuf;

/// Default `--threshold`, percent.
pub const DEFAULT_THRESHOLD_PCT: f64 = 5.0;

/// A validated `ncclbench compare` command.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareConfig {
    /// Files and directories of the before side.
    pub before: Vec<PathBuf>,
    /// Files and directories of the after side.
    pub after: Vec<PathBuf>,
    /// `--threshold`, percent (finite, >= 0).
    pub threshold_pct: f64,
    /// `--format` on stdout.
    pub format: ReportFormat,
    /// `--out DIR`.
    pub out: Option<PathBuf>,
}
