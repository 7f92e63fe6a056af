//! `ncclbench compare`'s flags and their check into a [`CompareConfig`].
//!
//! The two sides are given either as two positionals, `BEFORE AFTER` (each a result file or a
//! directory of them), or, to put several files or directories on a side, as repeated
//! `--before PATH` and `--after PATH` with no positionals. Mixing the forms is an error, so a
//! path can never land on the wrong side by accident.

use super::args::FormatArg;
use crate::config::compare::{CompareConfig, DEFAULT_THRESHOLD_PCT};
use crate::config::ReportFormat;
use crate::core::error::Error;
use clap::Args;
use std::path::PathBuf;

/// Flags of `ncclbench compare`.
#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// The reference results: a result file or a directory of them
    #[arg(value_name = "BEFORE")]
    pub before_path: Option<PathBuf>,
    /// The results to judge against BEFORE
    #[arg(value_name = "AFTER")]
    pub after_path: Option<PathBuf>,
    /// A before file or directory; repeat for more (use with --after, without BEFORE AFTER)
    #[arg(long, value_name = "PATH")]
    pub before: Vec<PathBuf>,
    /// An after file or directory; repeat for more
    #[arg(long, value_name = "PATH")]
    pub after: Vec<PathBuf>,
    /// Smallest time change called, in percent (only when also statistically supported)
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    #[arg(default_value_t = DEFAULT_THRESHOLD_PCT)]
    pub threshold: f64,
    /// What to print on stdout
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
    /// Write the report (text, markdown, JSON) and one busbw chart per collective (SVG, PNG)
    /// into this directory
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Checks `compare`'s flags.
pub(crate) fn config(a: CompareArgs) -> Result<CompareConfig, Error> {
    if !(a.threshold.is_finite() && a.threshold >= 0.0) {
        return Err(Error::usage(format!(
            "invalid value '{}' for --threshold: must be a percentage >= 0",
            a.threshold
        )));
    }
    let (before, after) = match (a.before_path, a.after_path) {
        (Some(b), Some(f)) if a.before.is_empty() && a.after.is_empty() => (vec![b], vec![f]),
        (None, None) if !a.before.is_empty() && !a.after.is_empty() => (a.before, a.after),
        _ => {
            return Err(Error::usage(
                "compare needs BEFORE AFTER, or --before PATH... and --after PATH... without \
                 positionals (see --help)",
            ))
        }
    };
    Ok(CompareConfig {
        before,
        after,
        threshold_pct: a.threshold,
        format: match a.format {
            FormatArg::Text => ReportFormat::Text,
            FormatArg::Markdown => ReportFormat::Markdown,
            FormatArg::Json => ReportFormat::Json,
        },
        out: a.out,
    })
}
