//! Where the line parser's records go: a [`Sink`] takes each [`Record`], and COLL calls (nearly
//! every line of a large log) may be taken as they are, with where they were logged ([`At`]),
//! so that a sink that only counts them is spared a record per line.

use super::event::{CollCall, Event, Origin, Record};
use std::sync::Arc;

/// Where a line was logged, with its host borrowed: an [`Origin`] not yet made (making one
/// clones the host's shared name, which a sink that only counts the line does not need).
#[derive(Debug, Clone, Copy)]
pub(super) struct At<'a> {
    /// 1-based physical line.
    pub line: u64,
    /// Hostname.
    pub host: &'a Arc<str>,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// `[cudaDev]`.
    pub dev: Option<u32>,
}

impl At<'_> {
    /// The origin of a line attributed to `comm`.
    pub fn origin(&self, comm: Option<u64>) -> Origin {
        Origin {
            line: self.line,
            host: self.host.clone(),
            pid: self.pid,
            tid: self.tid,
            dev: self.dev,
            comm,
        }
    }
}

/// Where the parser's records go: any `FnMut(Record)`, or a sink that takes COLL calls (nearly
/// every line of a large log) as they are, without the [`Record`] that would clone the host's
/// name and move the whole event for a line the sink only counts.
pub(super) trait Sink {
    /// One record.
    fn record(&mut self, rec: Record);

    /// A COLL line's call and where it was logged; by default the record of any other line.
    fn coll(&mut self, at: At<'_>, call: CollCall) {
        self.record(Record {
            origin: at.origin(Some(call.comm)),
            event: Event::Coll(call),
        });
    }
}

impl<F: FnMut(Record) + ?Sized> Sink for F {
    fn record(&mut self, rec: Record) {
        self(rec)
    }
}
