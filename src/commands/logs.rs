//! `ncclbench logs FILE... [--json] [--redact]`: parse NCCL debug logs (`-` is stdin) and
//! print the eight facts, the findings, the decisions, tables, environment and warnings.

use crate::config::logs::LogsConfig;
use crate::core::error::{exit, Error};
use crate::logs::findings::findings;
use crate::logs::redact::Redactor;
use crate::logs::report::{self, Report};
use crate::logs::{parse_files, LogError, ParseOptions};
use std::io::Write;

/// Runs the command; an unreadable input is a usage error (exit 2, one line).
pub fn run(cfg: &LogsConfig) -> Result<u8, Error> {
    let summary = parse_files(&cfg.files, &ParseOptions::default()).map_err(|e| match e {
        LogError::Read { file, source } => Error::usage(format!("cannot read {file}: {source}")),
    })?;
    let found = findings(&summary);
    let redact = if cfg.redact {
        summary.redactor()
    } else {
        Redactor::none()
    };
    let rep = Report {
        summary: &summary,
        findings: &found,
        redact: &redact,
    };
    let text = if cfg.json {
        report::json::render(&rep)
    } else {
        report::text::render(&rep)
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(exit::OK)
}
