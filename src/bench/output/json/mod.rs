//! JSON output (`-J FILE` / `--json FILE`) in the nccl-tests v3 layout, with its quirks kept
//! for existing consumers: booleans as the strings `"true"`/`"false"`, `root` as a `%6i`-padded
//! string, doubles with six decimals, NaN as `"nan"`.
//!
//! Differences from nccl-tests: strings are escaped by serde_json (no `\/`, non-ASCII kept
//! instead of cutting the string there), non-finite numbers other than NaN are strings too,
//! `config.devices` lists every rank (nccl-tests lists one per process), `env` holds only the
//! selected variables, and our own keys are added where nccl-tests has none: a top-level
//! `ncclbench` object and `collective`, `cycle`, `nranks`, `timestamp` in each result.
//!
//! The file is a whole document after `begin`, every row and `finish`. It is written whole
//! once; then each row is one positioned write of the row and the document's closing part
//! over the old closing part, so a row costs its own size and not the file's (a `-N 0` soak
//! stays cheap) and nothing but the current row is kept in memory. A process killed between
//! two writes leaves a valid document with every completed row, and a write that fails (a
//! full disk) is undone by putting the previous closing part back over the same bytes, which
//! needs no new space: the document stays whole, with every row before the failure. Which file
//! is written, and what a stream (`/dev/stderr`, a FIFO) gets instead, is decided by
//! [`crate::bench::output::files`]; a stream gets the document front to back, whole only once
//! the run ends.
//!
//! `ncclbench.complete` is true only once the run ended normally ([`Sink::seal`]): never after
//! a failed write, a closed stdout, or a job that did not agree on its end.

use crate::bench::output::files::{self, named};
use crate::bench::output::Sink;
use crate::result::{Row, RunMeta, Summary};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

mod doc;
mod groups;
#[cfg(test)]
mod tests;
mod tuning;
mod value;

use value::J;

/// Writes the JSON document, extended in place after every row.
pub struct JsonSink {
    path: PathBuf,
    meta: Option<RunMeta>,
    /// The claimed file, from `begin`.
    file: Option<File>,
    /// Not a regular file: written front to back, the closing part once at the end.
    stream: bool,
    /// Where the next result goes: the end of the `results` entries written so far.
    results_end: u64,
    /// The closing part now in the file after `results_end`.
    closing_now: String,
    /// Results written.
    results: u64,
    /// The totals of `finish`, kept for the closing part that `seal` rewrites.
    summary: Option<Summary>,
}

impl JsonSink {
    /// A sink for `path`; the actual file name is chosen at `begin` (see [`JsonSink::path`]).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        JsonSink {
            path: path.into(),
            meta: None,
            file: None,
            stream: false,
            results_end: 0,
            closing_now: String::new(),
            results: 0,
            summary: None,
        }
    }

    /// The file written: the requested path before `begin`, the claimed one after it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The document after the `results` entries: the array's end, the totals once finished
    /// (`summary`), and our `ncclbench` object (`complete` when `sealed`).
    fn closing(meta: &RunMeta, summary: Option<&Summary>, sealed: bool) -> String {
        let mut fields = Vec::new();
        if let Some(s) = summary {
            fields.extend(doc::totals(s));
        }
        fields.push(("ncclbench", doc::ncclbench_with(meta, summary, sealed)));
        // The closing part of an object whose first key is `results`: `],"key":...}`.
        let rest = J::Obj(fields).text();
        format!("],{}\n", &rest[1..])
    }

    /// Writes `entry` (a result, or nothing) after the results so far, followed by the
    /// closing part, in one write; then cuts off whatever the old closing part left beyond.
    /// A failed write puts the old closing part back, so the file stays a whole document.
    /// A stream gets the closing part only when it is the `last` write.
    fn extend(&mut self, entry: Option<String>, sealed: bool, last: bool) -> io::Result<()> {
        let (Some(meta), Some(file)) = (&self.meta, &mut self.file) else {
            return Ok(());
        };
        let mut text = String::new();
        if let Some(e) = &entry {
            if self.results > 0 {
                text.push(',');
            }
            text.push_str(e);
        }
        let entry_len = text.len() as u64;
        let closing = Self::closing(meta, self.summary.as_ref(), sealed);
        if self.stream {
            // A stream cannot be rewritten: rows as they come, the closing part once.
            if last {
                text.push_str(&closing);
            }
            file.write_all(text.as_bytes())
                .map_err(|e| named(&self.path, e))?;
        } else {
            text.push_str(&closing);
            let at = self.results_end;
            let written = file
                .write_all_at(text.as_bytes(), at)
                .and_then(|()| file.set_len(at + text.len() as u64));
            if let Err(e) = written {
                // The old closing part fits in the bytes it already had.
                let _ = file.write_all_at(self.closing_now.as_bytes(), at);
                let _ = file.set_len(at + self.closing_now.len() as u64);
                return Err(named(&self.path, e));
            }
            self.closing_now = closing;
        }
        if entry.is_some() {
            self.results_end += entry_len;
            self.results += 1;
        }
        Ok(())
    }
}

impl Sink for JsonSink {
    fn begin(&mut self, meta: &RunMeta) -> io::Result<()> {
        let claimed = files::claim(&self.path)?;
        self.path = claimed.path;
        self.stream = claimed.stream;
        let mut file = claimed.file;
        // The head up to the `results` array's opening bracket.
        let mut fields = doc::head(meta);
        fields.push(("results", J::Arr(Vec::new())));
        let head = J::Obj(fields).text();
        let head = &head[..head.len() - "]}".len()];
        let written = if self.stream {
            file.write_all(head.as_bytes())
        } else {
            file.write_all_at(head.as_bytes(), 0)
        };
        written.map_err(|e| named(&self.path, e))?;
        self.results_end = head.len() as u64;
        self.closing_now.clear();
        self.results = 0;
        self.file = Some(file);
        self.meta = Some(meta.clone());
        self.extend(None, false, false)
    }

    fn row_done(&mut self, row: &Row) -> io::Result<()> {
        let Some(meta) = &self.meta else {
            return Ok(());
        };
        let entry = doc::result(row, meta).text();
        self.extend(Some(entry), false, false)
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        let topo = summary.tuning.as_ref().and_then(|t| t.topology.clone());
        if let (Some(env), Some(topo)) = (
            self.meta.as_mut().and_then(|m| m.environment.as_mut()),
            topo,
        ) {
            env.topology = Some(topo);
        }
        self.summary = Some(summary.clone());
        // A failed run is never sealed: a stream gets its closing part now.
        self.extend(None, false, summary.error.is_some())
    }

    fn seal(&mut self) -> io::Result<()> {
        if self.summary.as_ref().is_some_and(|s| s.error.is_none()) {
            self.extend(None, true, true)
        } else {
            Ok(())
        }
    }
}
