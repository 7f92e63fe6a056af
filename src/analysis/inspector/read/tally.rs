//! What a file (or a piece of one) yielded: its records, its skipped entries, and the counts
//! its notes are written from (verbose traces, other record kinds, format versions), so that
//! one file's notes are one line per fact, not one per record.

use crate::analysis::inspector::record::{Record, Source};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The format versions this reader knows: JSON output format v4.x (the only one the plugin
/// has written with these field names), Prometheus metric format minor 1 (`v<profiler
/// interface version>.1`; the major follows NCCL's profiler interface, not the labels).
fn known_version(version: &str, json: bool) -> bool {
    if json {
        version.starts_with("v4.")
    } else {
        version.starts_with('v') && version.ends_with(".1")
    }
}

/// One file's yield, in file order.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub(super) records: Vec<Record>,
    /// Byte offset (JSON) or line (Prometheus), and the reason.
    pub(super) skipped: Vec<(u64, String)>,
    pub(super) notes: Vec<String>,
    verbose: u64,
    kinds: BTreeMap<String, u64>,
    /// Records per format version written (but those of `run`).
    versions: BTreeMap<String, u64>,
    unversioned: u64,
    /// The last records' shared source and how many records in a row had it: consecutive
    /// records mostly share one, and a map lookup by version string per record was a
    /// measurable part of reading.
    run: Option<(Arc<Source>, u64)>,
    ignored_metrics: BTreeMap<String, u64>,
}

impl Tally {
    pub(super) fn record(&mut self, r: Record, verbose: bool) {
        self.verbose += u64::from(verbose);
        match &mut self.run {
            Some((run, n)) if Arc::ptr_eq(run, &r.source) => *n += 1,
            _ => {
                self.end_run();
                self.run = Some((Arc::clone(&r.source), 1));
            }
        }
        self.records.push(r);
    }

    /// Counts the records of `run` by their format version.
    fn end_run(&mut self) {
        let Some((source, n)) = self.run.take() else {
            return;
        };
        match &source.format_version {
            Some(v) => match self.versions.get_mut(&**v) {
                Some(count) => *count += n,
                None => {
                    self.versions.insert(v.to_string(), n);
                }
            },
            None => self.unversioned += n,
        }
    }

    pub(super) fn other_kind(&mut self, kind: String) {
        *self.kinds.entry(kind).or_default() += 1;
    }

    pub(super) fn skip(&mut self, at: u64, reason: String) {
        self.skipped.push((at, reason));
    }

    pub(super) fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    pub(super) fn ignored_metric(&mut self, name: &str) {
        if let Some(n) = self.ignored_metrics.get_mut(name) {
            *n += 1;
        } else {
            self.ignored_metrics.insert(name.to_string(), 1);
        }
    }

    /// Appends `other` (the piece after this one).
    pub(super) fn merge(&mut self, mut other: Tally) {
        self.end_run();
        other.end_run();
        self.records.extend(other.records);
        self.skipped.extend(other.skipped);
        self.notes.extend(other.notes);
        self.verbose += other.verbose;
        self.unversioned += other.unversioned;
        for (map, from) in [
            (&mut self.kinds, other.kinds),
            (&mut self.versions, other.versions),
            (&mut self.ignored_metrics, other.ignored_metrics),
        ] {
            for (k, n) in from {
                *map.entry(k).or_default() += n;
            }
        }
    }

    /// The notes of file `name`: the counted facts first, then those noted as they happened.
    pub(super) fn notes(&mut self, name: &str, json: bool) -> Vec<String> {
        self.end_run();
        let mut out = Vec::new();
        if self.verbose > 0 {
            out.push(format!(
                "{name}: {} records carry verbose event traces (event_trace_sn/event_trace_ts): \
                 traces ignored, their start time kept",
                self.verbose
            ));
        }
        for (kind, n) in &self.kinds {
            out.push(format!("{name}: {n} records of kind `{kind}` ignored"));
        }
        let known = if json {
            "JSON output format v4.x"
        } else {
            "Prometheus metric format v<N>.1"
        };
        for (v, n) in self
            .versions
            .iter()
            .filter(|(v, _)| !known_version(v, json))
        {
            out.push(format!(
                "{name}: {n} records of format version {v}, which this reader does not know \
                 ({known}): read by the fields it knows"
            ));
        }
        if self.unversioned > 0 {
            out.push(format!(
                "{name}: {} records without a format version: read as {known}",
                self.unversioned
            ));
        }
        for (metric, n) in &self.ignored_metrics {
            out.push(format!("{name}: {n} samples of metric `{metric}` ignored"));
        }
        out.extend(self.notes.iter().cloned());
        out
    }
}
