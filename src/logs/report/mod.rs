//! Rendering a [`LogSummary`] and its findings: the terminal text ([`text`]) and the JSON
//! document ([`json`], schema [`SCHEMA`]). Both take a [`Redactor`] and pass every
//! identifying value through it.

pub mod json;
pub mod text;

use super::findings::Finding;
use super::redact::Redactor;
use super::summary::{CommKey, Evidence, LogSummary};

pub use json::SCHEMA;

/// What to render.
pub struct Report<'a> {
    /// The parsed logs.
    pub summary: &'a LogSummary,
    /// Their findings.
    pub findings: &'a [Finding],
    /// Redaction (or none).
    pub redact: &'a Redactor,
}

impl Report<'_> {
    /// A communicator as shown: its commId, or `host:pid:ptr`, or `host:pid` when unknown.
    pub fn comm(&self, k: &CommKey) -> String {
        let r = self.redact;
        match k {
            CommKey::Id(id) => r.comm_id(*id),
            CommKey::Local { host, pid, comm } => {
                format!("{}:{}:{}", r.host(host), r.pid(*pid), r.ptr(*comm))
            }
            CommKey::Process { host, pid } => format!("{}:{}:?", r.host(host), r.pid(*pid)),
        }
    }

    /// A host as shown (`(no prefix)` for unprefixed lines).
    pub fn host(&self, h: &str) -> String {
        if h.is_empty() {
            "(no prefix)".into()
        } else {
            self.redact.host(h)
        }
    }

    /// `file:line`.
    pub fn place(&self, file: &str, line: u64) -> String {
        format!("{}:{line}", self.redact.text(file))
    }

    /// `file:line: text`.
    pub fn quote(&self, e: &Evidence) -> String {
        format!(
            "{}: {}",
            self.place(&e.file, e.line),
            self.redact.text(&e.text)
        )
    }
}
