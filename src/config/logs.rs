//! The validated `ncclbench logs` command.

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
