//! Prometheus textfile output (`--prom FILE`): the run's latest result per size and placement
//! as gauges, rewritten atomically after every row, so a soak run shows on the dashboards that
//! plot a training job's NCCL Inspector metrics (`nccl_bus_bandwidth_gbs`, ...) beside it.
//!
//! A textfile is a snapshot, not a record: every rewrite holds one value per series (the
//! latest cycle's; the CSV and JSON keep every measurement). The file is written whole into a
//! hidden temporary in the same directory (`.NAME.PID.tmp`, a name the node exporter's
//! textfile collector does not read) and renamed over the target, so a scrape never sees half
//! a file. Every series carries `file` (the textfile's name), so two runs exporting into one
//! collector directory never produce the same series.
//!
//! Which file is written follows [`crate::bench::output::files`] with one difference that
//! follows from the format: an existing file whose first line is this sink's [`MARKER`] (an
//! earlier ncclbench textfile, whose run's results are in its CSV/JSON) is replaced, since a
//! collector reads only the name it was given; any other existing file is never overwritten
//! (`FILE.0`, ... instead). A stream (`/dev/null`, a FIFO) gets each snapshot written in turn.
//!
//! Whether the run completed is in the file: `ncclbench_run_complete` turns 1 only when the
//! run ended normally (every process agreed on its status), `ncclbench_run_ended` turns 1 when
//! it stopped at all, so `ended 1, complete 0` is a failed or interrupted run, and a run that
//! was killed is told by `ncclbench_last_update_timestamp_seconds` standing still.

use crate::bench::output::{files, Sink};
use crate::result::{Measurement, Placement, Row, RowKey, RunMeta, Summary};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};

/// The first line of every textfile this sink writes.
pub const MARKER: &str = "# ncclbench Prometheus textfile";

/// One series of results: the labels of a (row, placement) except the cycle, whose latest
/// measurement is kept.
type SeriesKey = (String, String, String, String, u64, String);

/// What a series shows.
#[derive(Debug, Clone, Copy)]
struct Values {
    busbw_gbs: f64,
    algbw_gbs: f64,
    time_us: f64,
    wrong: Option<u64>,
}

/// Writes the textfile; see the module documentation.
pub struct PromSink {
    path: PathBuf,
    /// Open for writing when the path is a stream, `None` for a regular file (renamed over).
    stream: Option<File>,
    /// Labels every series carries: `backend`, `host`, `file`.
    common: Vec<(&'static str, String)>,
    /// `ncclbench_run_info`'s extra labels.
    info: Vec<(&'static str, String)>,
    nranks: usize,
    series: BTreeMap<SeriesKey, Values>,
    rows: u64,
    cycle: u32,
    start: f64,
    ended: bool,
    complete: bool,
    avg_busbw: Option<f64>,
    clock: Box<dyn FnMut() -> f64>,
    /// Masks the `file` label (a redacted run's host names and PIDs in the name).
    mask: Option<crate::core::redact::Redactor>,
}

/// Seconds since the Unix epoch.
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Whether `path` is a regular file whose first line is [`MARKER`].
fn is_ours(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut first = String::new();
    io::BufReader::new(file.take(256))
        .read_line(&mut first)
        .is_ok_and(|_| first.starts_with(MARKER))
}

impl PromSink {
    /// The sink of a redacted run: its `file` label masked with `r`.
    pub fn redacted(mut self, r: Option<&crate::core::redact::Redactor>) -> Self {
        self.mask = r.cloned();
        self
    }

    /// A sink that will write to `path`; nothing is touched before `begin`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        PromSink {
            path: path.into(),
            mask: None,
            stream: None,
            common: Vec::new(),
            info: Vec::new(),
            nranks: 0,
            series: BTreeMap::new(),
            rows: 0,
            cycle: 0,
            start: 0.0,
            ended: false,
            complete: false,
            avg_busbw: None,
            clock: Box::new(unix_now),
        }
    }

    /// Replaces the wall clock of the timestamp gauges (for reproducible output).
    pub fn with_clock(mut self, clock: impl FnMut() -> f64 + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// The file written: the requested path before `begin`, the claimed one after it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the current snapshot: whole into a temporary renamed over the file, or in turn
    /// into a stream.
    fn write(&mut self) -> io::Result<()> {
        let text = self.render();
        if let Some(stream) = self.stream.as_mut() {
            return stream
                .write_all(text.as_bytes())
                .and_then(|()| stream.flush())
                .map_err(|e| files::named(&self.path, e));
        }
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &self.path));
        if let Err(e) = written {
            // A failed write (a full disk) leaves no temporary behind.
            let _ = std::fs::remove_file(&tmp);
            return Err(files::named(&self.path, e));
        }
        Ok(())
    }
}

impl Sink for PromSink {
    fn begin(&mut self, meta: &RunMeta) -> io::Result<()> {
        if std::fs::metadata(&self.path).is_ok_and(|m| m.is_file()) && is_ours(&self.path) {
            self.stream = None;
        } else {
            let claimed = files::claim(&self.path)?;
            self.path = claimed.path;
            self.stream = claimed.stream.then_some(claimed.file);
        }
        let host = meta
            .devices
            .first()
            .map_or_else(|| "unknown".to_string(), |d| d.hostname.clone());
        let file = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .map(|n| self.mask.as_ref().map_or_else(|| n.clone(), |r| r.text(&n)))
            .unwrap_or_default();
        self.common = vec![
            ("backend", meta.backend.name().to_string()),
            ("host", host),
            ("file", file),
        ];
        let collective = meta
            .program
            .strip_suffix("_perf")
            .unwrap_or(&meta.program)
            .to_string();
        self.info = vec![
            ("version", meta.version.clone()),
            ("collective", collective),
            ("nccl_version", meta.nccl_library.unwrap_or(0).to_string()),
        ];
        self.nranks = meta.nranks;
        self.start = (self.clock)();
        self.write()
    }

    fn placement_done(&mut self, key: &RowKey, p: Placement, m: &Measurement) -> io::Result<()> {
        self.series.insert(
            (
                key.collective.name().to_string(),
                key.dtype.name().to_string(),
                key.op_label().to_string(),
                key.root_value().to_string(),
                key.bytes,
                p.name().to_string(),
            ),
            Values {
                busbw_gbs: m.busbw_gbs,
                algbw_gbs: m.algbw_gbs,
                time_us: m.time_us,
                wrong: m.wrong,
            },
        );
        self.nranks = key.nranks;
        Ok(())
    }

    fn row_done(&mut self, row: &Row) -> io::Result<()> {
        self.rows += 1;
        self.cycle = row.key.cycle;
        self.write()
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        self.ended = true;
        self.avg_busbw = summary.avg_busbw.is_finite().then_some(summary.avg_busbw);
        self.write()
    }

    fn seal(&mut self) -> io::Result<()> {
        self.complete = true;
        self.write()
    }
}

mod render;
#[cfg(test)]
mod tests;
