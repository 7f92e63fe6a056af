//! `--redact` for benchmark output: a sink adapter that masks identifying text (host names,
//! PIDs, IPs, pointers, user names in paths, secret-looking variables; see [`crate::core::redact`])
//! in everything a run writes — the header facts, notices and the final error — before the
//! text, CSV (and its environment sidecar) and JSON sinks see it. Measurements carry nothing
//! identifying and pass through unchanged.

use std::io;

use super::Sink;
use crate::core::redact::Redactor;
use crate::result::{Measurement, Placement, Row, RowKey, RunMeta, Summary};

/// Wraps a sink; see the module documentation.
pub struct Redacting<S: Sink> {
    inner: S,
    redactor: Redactor,
}

impl<S: Sink> Redacting<S> {
    /// Masks what reaches `inner` with `redactor`.
    pub fn new(inner: S, redactor: Redactor) -> Self {
        Redacting { inner, redactor }
    }
}

/// `meta` with identifying text masked.
pub fn redact_meta(meta: &RunMeta, r: &Redactor) -> RunMeta {
    let mut m = meta.clone();
    for d in &mut m.devices {
        d.hostname = r.host(&d.hostname);
        d.pid = u32::try_from(r.pid_number(d.pid)).unwrap_or(0);
    }
    for g in &mut m.groups {
        g.hosts = g.hosts.iter().map(|h| r.host(h)).collect();
    }
    m.argv = m.argv.iter().map(|a| r.text(a)).collect();
    m.env = m.env.iter().map(|e| r.env_entry(e)).collect();
    m.backend_lines = m.backend_lines.iter().map(|l| r.text(l)).collect();
    if let Some(env) = m.environment.as_mut() {
        env.redact(r);
    }
    m
}

impl<S: Sink> Sink for Redacting<S> {
    fn begin(&mut self, meta: &RunMeta) -> io::Result<()> {
        self.inner.begin(&redact_meta(meta, &self.redactor))
    }
    fn row_started(&mut self, key: &RowKey) -> io::Result<()> {
        self.inner.row_started(key)
    }
    fn placement_done(&mut self, key: &RowKey, p: Placement, m: &Measurement) -> io::Result<()> {
        self.inner.placement_done(key, p, m)
    }
    fn row_done(&mut self, row: &Row) -> io::Result<()> {
        self.inner.row_done(row)
    }
    fn notice(&mut self, line: &str) -> io::Result<()> {
        self.inner.notice(&self.redactor.text(line))
    }
    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        let mut s = summary.clone();
        s.error = s.error.map(|e| self.redactor.text(&e));
        if let Some(topo) = s.tuning.as_mut().and_then(|t| t.topology.as_mut()) {
            topo.redact(&self.redactor);
        }
        self.inner.finish(&s)
    }
    fn seal(&mut self) -> io::Result<()> {
        self.inner.seal()
    }
}
