//! `ncclbench analyze`: files -> rows -> curve reports -> stdout (and `--out DIR`).

use crate::config::{AnalyzeConfig, ReportFormat};
use crate::core::error::{exit, Error};
use std::io::Write;

mod production;

/// Runs an analysis; returns the exit status (0; inputs that cannot be read are errors).
/// A training job's NCCL Inspector output gets the production report instead (`production`).
pub fn run(cfg: &AnalyzeConfig) -> Result<u8, Error> {
    if production::wanted(cfg)? {
        return production::run(cfg);
    }
    let set = read_rows(&cfg.files, "")?;
    let setups = crate::analysis::compare::headers::per_file(&cfg.files)
        .into_iter()
        .map(|(file, facts)| (file, facts.label()))
        .collect();
    let analysis =
        crate::analysis::build::analyze_setups(&set, cfg.peak_gbs, &setups, cfg.pool_setups);
    let format = match cfg.format {
        ReportFormat::Text => crate::analysis::report::Format::Text,
        ReportFormat::Markdown => crate::analysis::report::Format::Markdown,
        ReportFormat::Json => crate::analysis::report::Format::Json,
    };
    let report = crate::analysis::report::render(&analysis, format);
    emit(cfg, report, "analysis.json", |dir| {
        crate::analysis::report::write_dir(&analysis, dir)
    })
}

/// The result rows of `paths`; none is a usage error naming the files (after `prefix`) and the
/// first row that could not be read.
fn read_rows(
    paths: &[std::path::PathBuf],
    prefix: &str,
) -> Result<crate::analysis::input::ReadSet, Error> {
    let set = crate::analysis::read::read_files(paths)?;
    if set.rows.is_empty() {
        return Err(Error::usage(format!(
            "{prefix}no result rows found in {} ({} row(s) could not be read{})",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            set.skipped.len(),
            set.skipped
                .first()
                .map(|s| format!("; first: {}:{}: {}", s.source.file, s.source.line, s.reason))
                .unwrap_or_default()
        )));
    }
    Ok(set)
}

/// Prints `report` with the `--nccl-log` findings after it and, with `--out DIR`, writes the
/// directory through `write` and adds the findings to its `report.md` and `json` file.
fn emit(
    cfg: &AnalyzeConfig,
    mut report: String,
    json: &str,
    write: impl FnOnce(&std::path::Path) -> Result<Vec<std::path::PathBuf>, Error>,
) -> Result<u8, Error> {
    let findings = if cfg.nccl_logs.is_empty() {
        None
    } else {
        Some(
            crate::logs::findings::findings_for_files(&cfg.nccl_logs)
                .map_err(|e| Error::usage(e.to_string()))?,
        )
    };
    if let Some(f) = &findings {
        report = crate::analysis::log_findings::append(report, f, cfg.format);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(report.as_bytes())?;
    out.flush()?;
    if let Some(dir) = &cfg.out {
        let written = write(dir)?;
        // A directory that held something is kept; the report went to a numbered one.
        let dir = crate::analysis::report::written_dir(&written, dir);
        if let Some(f) = &findings {
            add_findings(
                &dir,
                f,
                &[
                    ("report.md", ReportFormat::Markdown),
                    (json, ReportFormat::Json),
                ],
            )?;
        }
        if cfg.format == ReportFormat::Text {
            writeln!(out, "wrote {} files to {}", written.len(), dir.display())?;
        }
    }
    Ok(exit::OK)
}

/// `--nccl-log` with `--out DIR`: the findings go into the markdown and JSON reports of `files`
/// too (the HTML report does not carry them yet).
fn add_findings(
    dir: &std::path::Path,
    findings: &[crate::logs::findings::Finding],
    files: &[(&str, ReportFormat)],
) -> Result<(), Error> {
    for &(name, format) in files {
        let path = dir.join(name);
        let io = |source| Error::Io {
            path: path.clone(),
            source,
        };
        let text = std::fs::read_to_string(&path).map_err(io)?;
        let text = crate::analysis::log_findings::append(text, findings, format);
        // Replaces the file this run just wrote, whole or not at all.
        let tmp = crate::bench::output::files::with_suffix(&path, ".tmp");
        let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map_err(io)?;
    }
    Ok(())
}
