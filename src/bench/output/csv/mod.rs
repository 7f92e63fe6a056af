//! CSV output (`--csv FILE`): one line per (row, placement), written the moment the placement
//! is measured, so an interrupted run keeps every completed measurement.
//!
//! Records go through the `csv` crate (RFC 4180: a field is quoted only when it holds a comma,
//! quote or line break; `\n` ends every record) and are written one placement at a time,
//! whole: a failed write (a full disk) cuts the file back to the records before it. Numbers use Rust's
//! shortest round-trip spelling (full precision, `NaN` for not-a-number);
//! empty fields mean "not applicable" (`wrong` when unchecked, the `iter_*` columns without
//! per-iteration data, `op` for hypercube, NCCL's decision columns without `--tuning`).
//!
//! Which file is written is decided by [`crate::bench::output::files`] (never an existing
//! file: `FILE.0`, ... instead); the environment sidecar is written next to a regular file
//! only, never next to a stream such as `/dev/null`.

use crate::bench::output::{files, Sink};
use crate::result::{Measurement, Placement, RowKey, RunMeta};
use columns::Line;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Local time as `%Y-%m-%d %H:%M:%S`.
fn local_now() -> String {
    chrono::Local::now().format("%Y-%m-%d %H:%M:%S").to_string()
}

/// `records` as CSV text: the crate's defaults (quote only when needed) with `\n` line ends,
/// as the file has always had.
fn render(records: &[Vec<String>]) -> io::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for r in records {
        w.write_record(r)?;
    }
    w.into_inner().map_err(|e| e.into_error())
}

/// Writes results as CSV to a file claimed at `begin`.
pub struct CsvSink {
    path: PathBuf,
    file: Option<File>,
    /// Bytes of whole records in the file: where a failed write is cut back to.
    whole: u64,
    /// A write failed: nothing more is written.
    failed: bool,
    /// Not a regular file: no sidecar.
    stream: bool,
    backend: &'static str,
    per_iter: bool,
    /// `--per-group`: the groups, whose lines follow each aggregate line.
    groups: Vec<crate::result::GroupInfo>,
    clock: Box<dyn FnMut() -> String>,
    /// The run's environment record, written next to the CSV (`<file>.env.json`).
    environment: Option<crate::result::environment::RunEnvironment>,
}

/// The environment sidecar of a CSV file: `results.csv` -> `results.csv.env.json`.
pub fn sidecar_path(csv: &std::path::Path) -> PathBuf {
    let mut name = csv.as_os_str().to_owned();
    name.push(".env.json");
    PathBuf::from(name)
}

impl CsvSink {
    /// Writes (or rewrites, atomically) the environment sidecar, when there is a record.
    fn write_sidecar(&self) -> io::Result<()> {
        let Some(env) = &self.environment else {
            return Ok(());
        };
        if self.stream {
            return Ok(());
        }
        let path = sidecar_path(&self.path);
        let mut tmp = path.clone().into_os_string();
        tmp.push(".tmp");
        let written =
            std::fs::write(&tmp, env.to_json() + "\n").and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            // A failed write (a full disk) leaves no half-written temporary behind.
            let _ = std::fs::remove_file(&tmp);
            return Err(files::named(&path, e));
        }
        Ok(())
    }

    /// A sink that will write to `path`; nothing is touched before `begin`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        CsvSink {
            path: path.into(),
            file: None,
            whole: 0,
            failed: false,
            stream: false,
            backend: "",
            per_iter: false,
            groups: Vec::new(),
            clock: Box::new(local_now),
            environment: None,
        }
    }

    /// Replaces the local-time clock of the `timestamp` column (for reproducible output).
    pub fn with_clock(mut self, clock: impl FnMut() -> String + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// The file written: the requested path before `begin`, the claimed one after it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `records` whole: on a failed write (a full disk) the file is cut back to the
    /// records before them, so it never ends in half a record, and nothing more is written.
    fn write_records(&mut self, records: &[Vec<String>]) -> io::Result<()> {
        let named = |e| files::named(&self.path, e);
        if self.failed {
            return Err(named(io::Error::other("an earlier write failed")));
        }
        let bytes = render(records).map_err(named)?;
        let file = self.file.as_mut().ok_or_else(|| {
            io::Error::other(format!(
                "CSV output {} written before begin",
                self.path.display()
            ))
        })?;
        // Written unbuffered: the records are in the file once this returns, so a run cut
        // short keeps every completed measurement.
        match file.write_all(&bytes) {
            Ok(()) => {
                self.whole += bytes.len() as u64;
                Ok(())
            }
            Err(e) => {
                self.failed = true;
                if !self.stream {
                    let _ = file.set_len(self.whole);
                }
                Err(named(e))
            }
        }
    }
}

impl Sink for CsvSink {
    fn finish(&mut self, summary: &crate::result::Summary) -> io::Result<()> {
        if let Some(env) = self.environment.as_mut() {
            env.end_time = Some(summary.end_time.clone());
            if let Some(topo) = summary.tuning.as_ref().and_then(|t| t.topology.clone()) {
                env.topology = Some(topo);
            }
        }
        self.write_sidecar()
    }

    fn begin(&mut self, meta: &RunMeta) -> io::Result<()> {
        let claimed = files::claim(&self.path)?;
        self.path = claimed.path;
        self.stream = claimed.stream;
        self.file = Some(claimed.file);
        self.environment = meta.environment.clone();
        self.write_sidecar()?;
        self.backend = meta.backend.name();
        self.per_iter = meta.per_iter;
        self.groups = meta.groups.clone();
        let header = columns::header(&columns::of_file(self.per_iter, !self.groups.is_empty()));
        self.write_records(&[header])
    }

    fn placement_done(&mut self, key: &RowKey, p: Placement, m: &Measurement) -> io::Result<()> {
        let timestamp = (self.clock)();
        let columns = columns::of_file(self.per_iter, !self.groups.is_empty());
        let aggregate = Line {
            key,
            placement: p,
            nranks: key.nranks,
            time_us: m.time_us,
            algbw_gbs: m.algbw_gbs,
            busbw_gbs: m.busbw_gbs,
            wrong: m.wrong,
            backend: self.backend,
            cputime_us: Some(m.cputime_us),
            timestamp: &timestamp,
            tuning: m.tuning.as_ref(),
            iter: m.iter.as_ref(),
            group: None,
        };
        let mut lines = vec![columns::record(&columns, &aggregate)];
        // A group's line follows its aggregate's: the same key with the group's rank count and
        // figures; no host enqueue time, decisions or per-iteration data (those are per process).
        for g in m.groups.iter().filter(|_| !self.groups.is_empty()) {
            let info = self.groups.iter().find(|i| i.group == g.group);
            let line = Line {
                nranks: g.nranks,
                time_us: g.time_us,
                algbw_gbs: g.algbw_gbs,
                busbw_gbs: g.busbw_gbs,
                wrong: g.wrong,
                cputime_us: None,
                tuning: None,
                iter: None,
                group: Some((g.group, info)),
                ..aggregate
            };
            lines.push(columns::record(&columns, &line));
        }
        // The aggregate and its group lines go in as one: all of them or none.
        self.write_records(&lines)
    }
}

mod columns;
pub use columns::{names, Column, CSV_COLUMNS, CSV_GROUP_COLUMNS, CSV_ITER_COLUMNS};
#[cfg(test)]
mod tests;
