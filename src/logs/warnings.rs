//! What the parser could not understand, counted by kind with the first line of each, so a
//! report can say "12 malformed TUNING lines, first at line 345" instead of failing or
//! staying silent.

use serde::Serialize;
use std::collections::BTreeMap;

/// A kind of parse problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// A COLL or TUNING line that does not parse (cut off, or an unknown variant).
    MalformedDecision,
    /// An algorithm number or name outside the version's table.
    UnknownAlgorithm,
    /// A protocol number or name outside LL/LL128/Simple.
    UnknownProtocol,
    /// A TUNING line with no COLL line before it on its thread (COLL not logged): its
    /// communicator and rank are unknown.
    DecisionWithoutColl,
    /// A tuning-table function row before any `Algorithm` header on its thread.
    TableRowWithoutHeader,
    /// The pre-2.18 single-block tuning table, which is not parsed.
    OldTableLayout,
    /// Channel or connection lines of a thread that never named its communicator (no Init
    /// line or COLL line after them), in a process with several communicators.
    UnattributedChannelLines,
    /// An NCCL version outside 2.18-2.30 (parsed with the newest known formats).
    UnknownVersion,
    /// The input did not end with a newline: the last line may be cut off.
    TruncatedLastLine,
    /// A line longer than the parser keeps (its end is ignored).
    OverlongLine,
}

impl WarningKind {
    /// One-line explanation.
    pub fn describe(self) -> &'static str {
        match self {
            WarningKind::MalformedDecision => "COLL/TUNING lines that do not parse",
            WarningKind::UnknownAlgorithm => "decisions with an unknown algorithm",
            WarningKind::UnknownProtocol => "decisions with an unknown protocol",
            WarningKind::DecisionWithoutColl => {
                "decisions without a COLL line before them (communicator unknown)"
            }
            WarningKind::TableRowWithoutHeader => "tuning-table rows without a header",
            WarningKind::OldTableLayout => "pre-2.18 tuning tables (not parsed)",
            WarningKind::UnattributedChannelLines => {
                "channel lines whose communicator no later line names (not counted per communicator)"
            }
            WarningKind::UnknownVersion => "NCCL versions this parser does not know",
            WarningKind::TruncatedLastLine => "input not ending with a newline",
            WarningKind::OverlongLine => "over-long lines (cut)",
        }
    }
}

/// Counts per kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseWarnings {
    /// Kind -> (count, first line).
    pub counts: BTreeMap<WarningKind, (u64, u64)>,
}

impl ParseWarnings {
    /// Counts one problem at `line`.
    pub fn add(&mut self, kind: WarningKind, line: u64) {
        let e = self.counts.entry(kind).or_insert((0, line));
        e.0 += 1;
    }

    /// Total count.
    pub fn total(&self) -> u64 {
        self.counts.values().map(|c| c.0).sum()
    }
}
