//! `ncclbench logs FILE... [--json] [--redact]`: parse NCCL debug logs (`-` is stdin) and
//! print the eight facts, the findings, the decisions, tables, environment and warnings.

use super::findings::findings;
use super::redact::Redactor;
use super::report::{self, Report};
use super::{parse_files, LogError, ParseOptions};
use crate::error::{exit, Error};
use std::io::Write;
use std::path::PathBuf;

/// A validated `ncclbench logs` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogsConfig {
    /// Log files; `-` is stdin.
    pub files: Vec<PathBuf>,
    /// Print the JSON document (`ncclbench-logs/1`) instead of text.
    pub json: bool,
    /// Hide hostnames, IPs, PIDs, pointers, bus ids and user names.
    pub redact: bool,
}

/// Runs the command; an unreadable input is a usage error (exit 2, one line).
pub fn run(cfg: &LogsConfig) -> Result<u8, Error> {
    let summary = parse_files(&cfg.files, &ParseOptions::default()).map_err(|e| match e {
        LogError::Read { file, source } => Error::usage(format!("cannot read {file}: {source}")),
    })?;
    let found = findings(&summary);
    let redact = if cfg.redact {
        Redactor::new(&summary)
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
