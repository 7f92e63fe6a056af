//! `ncclbench analyze` on a training job's NCCL Inspector output: records -> aggregates ->
//! held against the `--baseline` benchmark's curves -> the production report on stdout (and
//! `--out DIR`).
//!
//! The inputs are Inspector output whenever `--baseline` is given (so a pipe can carry a
//! dump), and otherwise when every input is: regular files and directories are told by their
//! content; inputs of both kinds are a usage error that says where benchmark results go.

use crate::analysis::inspector::{looks_like_inspector, read_paths};
use crate::analysis::production::{self, baseline::Baseline, model::Inputs, report};
use crate::config::{AnalyzeConfig, ReportFormat};
use crate::core::error::Error;
use std::path::{Path, PathBuf};

/// Whether `cfg` asks for the production report (see the module documentation).
pub(super) fn wanted(cfg: &AnalyzeConfig) -> Result<bool, Error> {
    if !cfg.baseline.is_empty() {
        return Ok(true);
    }
    let sniffable = |p: &Path| p.is_dir() || p.is_file();
    let (job, other): (Vec<&PathBuf>, Vec<&PathBuf>) = cfg
        .files
        .iter()
        .partition(|p| sniffable(p) && looks_like_inspector(p));
    match (job.first(), other.first()) {
        (None, _) => Ok(false),
        (Some(_), None) => Ok(true),
        (Some(j), Some(o)) => Err(Error::usage(format!(
            "{} is NCCL Inspector output and {} is not: give the job's records as inputs and \
             benchmark results with --baseline (ncclbench analyze {} --baseline {})",
            j.display(),
            o.display(),
            j.display(),
            o.display()
        ))),
    }
}

/// Runs the production report; returns the exit status (0; unreadable inputs are errors).
pub(super) fn run(cfg: &AnalyzeConfig) -> Result<u8, Error> {
    if cfg.peak_gbs.is_some() {
        return Err(Error::usage(
            "--peak-gbs applies to benchmark curves; the production report holds NCCL Inspector \
             records against the --baseline benchmark instead",
        ));
    }
    let set = read_paths(&cfg.files).map_err(|e| match e {
        Error::Usage(m) if !cfg.baseline.is_empty() => Error::Usage(format!(
            "{m} (with --baseline, the inputs are a training job's NCCL Inspector output and \
             the benchmark results follow --baseline)"
        )),
        e => e,
    })?;
    let skipped = set.skipped_lines();
    if set.records.is_empty() {
        return Err(Error::usage(format!(
            "no NCCL Inspector records in {} ({} entries could not be used{})",
            names(&cfg.files),
            skipped.len(),
            skipped
                .first()
                .map(|s| format!("; first: {s}"))
                .unwrap_or_default()
        )));
    }
    let base = if cfg.baseline.is_empty() {
        None
    } else {
        Some(baseline(cfg)?)
    };
    let inputs = Inputs {
        paths: cfg.files.iter().map(|p| p.display().to_string()).collect(),
        files: set.files,
        skipped,
        ..Inputs::default()
    };
    let mut r = production::build(&set.records, inputs, base.as_ref().map(|b| &b.0));
    // What the readers and the benchmark said first: they qualify every number after them.
    let mut notes = set.notes;
    if let Some((_, base_notes)) = &base {
        notes.extend(base_notes.iter().cloned());
    }
    notes.append(&mut r.notes);
    r.notes = notes;
    let format = match cfg.format {
        ReportFormat::Text => report::Format::Text,
        ReportFormat::Markdown => report::Format::Markdown,
        ReportFormat::Json => report::Format::Json,
    };
    let text = report::render(&r, format);
    let base = base.map(|b| b.0);
    super::emit(cfg, text, "production.json", |dir| {
        report::write_dir(&r, base.as_ref(), dir)
    })
}

/// The benchmark curves of `--baseline`, built as `analyze` builds them (setups kept apart
/// unless `--pool-setups`), and the notes on them.
fn baseline(cfg: &AnalyzeConfig) -> Result<(Baseline, Vec<String>), Error> {
    let set = super::read_rows(&cfg.baseline, "--baseline: ")?;
    let setups = crate::analysis::compare::headers::per_file(&cfg.baseline)
        .into_iter()
        .map(|(file, facts)| (file, facts.label()))
        .collect();
    let analysis = crate::analysis::build::analyze_setups(&set, None, &setups, cfg.pool_setups);
    let mut notes: Vec<String> = analysis
        .notes
        .iter()
        .map(|n| format!("baseline: {n}"))
        .collect();
    if !set.skipped.is_empty() {
        notes.push(format!(
            "baseline: {} benchmark row(s) could not be read (first: {}:{}: {})",
            set.skipped.len(),
            set.skipped[0].source.file,
            set.skipped[0].source.line,
            set.skipped[0].reason
        ));
    }
    let files: std::collections::BTreeSet<&str> =
        set.rows.iter().map(|r| r.source.file.as_str()).collect();
    let files = files.into_iter().map(str::to_string).collect();
    Ok((
        Baseline {
            files,
            curves: analysis.curves,
        },
        notes,
    ))
}

/// `a, b, c` of paths.
fn names(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
