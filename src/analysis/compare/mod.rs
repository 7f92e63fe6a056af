//! `ncclbench compare BEFORE AFTER`: a noise-aware comparison of two sets of result files
//! (typically before and after an NCCL, driver or firmware upgrade).
//!
//! Each side is read with the analysis readers ([`crate::analysis::read`]: ncclbench CSV/JSON,
//! nccl-tests text/JSON, `-N` cycles, several runs and files, directories). Rows align on
//! (collective, dtype, op, root, nranks, placement, bytes); every cycle, run and file of a side
//! is one sample of its size. Per size [`stats`] tests the change (Welch on log time, BH over
//! the curve's sizes) and calls it only when significant *and* beyond the threshold; per
//! curve [`build`] compares the analysis' latency floor, plateau and half-performance size
//! and lists NCCL decision changes; [`headers`] and [`setup`] report unlike setups loudly.
//!
//! Flow: [`side`] (read, group) -> [`build`] -> [`model::Comparison`] -> `text`, [`json`],
//! `chart`, `dir`. Exit status: 0 no size slower, 1 some size slower (a regression), 2 any
//! error (bad arguments, unreadable or empty input, nothing in common, a report that cannot be
//! written).

pub mod build;
mod chart;
mod dir;
pub mod headers;
pub mod json;
pub mod model;
pub mod setup;
pub mod side;
pub mod stats;
mod tables;
pub mod tdist;
mod text;

#[cfg(test)]
mod tests;

use crate::analysis::read::read_files;
use crate::config::compare::CompareConfig;
use crate::config::ReportFormat;
use crate::core::error::Error;
use model::Comparison;
use std::path::PathBuf;

pub use json::SCHEMA;

/// Reads both sides and compares them (no output).
pub fn compare(cfg: &CompareConfig) -> Result<Comparison, Error> {
    let read = |which: &str, paths: &[PathBuf]| {
        let set = read_files(paths).map_err(|e| Error::usage(format!("{which}: {e}")))?;
        if set.rows.is_empty() {
            return Err(Error::usage(format!(
                "{which}: no result rows in {}",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(set)
    };
    let (sb, sa) = (read("before", &cfg.before)?, read("after", &cfg.after)?);
    let (gb, ga) = (side::group(&sb), side::group(&sa));
    let before = side::summary(&cfg.before, &sb, headers::gather(&cfg.before));
    let after = side::summary(&cfg.after, &sa, headers::gather(&cfg.after));
    Ok(build::compare(
        (&gb, before),
        (&ga, after),
        cfg.threshold_pct / 100.0,
    ))
}

/// Writes the report in every format and the charts into `dir` (what `--out DIR` writes);
/// returns the files written.
pub fn write_dir(cmp: &Comparison, dir: &std::path::Path) -> Result<Vec<PathBuf>, Error> {
    dir::write(cmp, dir)
}

/// The report in a format.
pub fn render(cmp: &Comparison, format: ReportFormat) -> String {
    match format {
        ReportFormat::Text => text::render(cmp),
        ReportFormat::Markdown => text::render_markdown(cmp),
        ReportFormat::Json => json::render(cmp),
    }
}
