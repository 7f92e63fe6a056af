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
//! two writes leaves a valid document with every completed row. An existing file is never
//! overwritten; as nccl-tests does, `<file>.0`, `<file>.1`, ... are tried instead.

use crate::bench::output::Sink;
use crate::result::{Row, RunMeta, Summary};
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

mod doc;
#[cfg(test)]
mod key_tree;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_per_process;
mod tuning;
mod value;

use value::J;

/// Writes the JSON document, extended in place after every row.
pub struct JsonSink {
    path: PathBuf,
    meta: Option<RunMeta>,
    /// The claimed file, from `begin`.
    file: Option<File>,
    /// Where the next result goes: the end of the `results` entries written so far.
    results_end: u64,
    /// Results written.
    results: u64,
}

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = OsString::from(path.as_os_str());
    s.push(suffix);
    PathBuf::from(s)
}

/// Creates the first of `path`, `path.0`, `path.1`, ... that does not exist yet (exclusively,
/// so two runs cannot pick the same name) and returns its name.
fn claim_free_name(path: &Path) -> io::Result<PathBuf> {
    let mut candidate = path.to_path_buf();
    for n in 0..u32::MAX {
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(_) => return Ok(candidate),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                candidate = with_suffix(path, &format!(".{n}"));
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free JSON output name"))
}

impl JsonSink {
    /// A sink for `path`; the actual file name is chosen at `begin` (see [`JsonSink::path`]).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        JsonSink {
            path: path.into(),
            meta: None,
            file: None,
            results_end: 0,
            results: 0,
        }
    }

    /// The file written: the requested path before `begin`, the claimed one after it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The document after the `results` entries: the array's end, the totals once finished
    /// (`summary`), and our `ncclbench` object.
    fn closing(meta: &RunMeta, summary: Option<&Summary>) -> String {
        let mut fields = Vec::new();
        if let Some(s) = summary {
            fields.extend(doc::totals(s));
        }
        fields.push(("ncclbench", doc::ncclbench_with(meta, summary)));
        // The closing part of an object whose first key is `results`: `],"key":...}`.
        let rest = J::Obj(fields).text();
        format!("],{}\n", &rest[1..])
    }

    /// Writes `entry` (a result, or nothing) after the results so far, followed by the
    /// closing part, in one write; then cuts off whatever the old closing part left beyond.
    fn extend(&mut self, entry: Option<String>, summary: Option<&Summary>) -> io::Result<()> {
        let (Some(meta), Some(file)) = (&self.meta, &self.file) else {
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
        text.push_str(&Self::closing(meta, summary));
        file.write_all_at(text.as_bytes(), self.results_end)?;
        file.set_len(self.results_end + text.len() as u64)?;
        if entry.is_some() {
            self.results_end += entry_len;
            self.results += 1;
        }
        Ok(())
    }
}

impl Sink for JsonSink {
    fn begin(&mut self, meta: &RunMeta) -> io::Result<()> {
        self.path = claim_free_name(&self.path)?;
        let file = OpenOptions::new().write(true).open(&self.path)?;
        // The head up to the `results` array's opening bracket.
        let mut fields = doc::head(meta);
        fields.push(("results", J::Arr(Vec::new())));
        let head = J::Obj(fields).text();
        let head = &head[..head.len() - "]}".len()];
        file.write_all_at(head.as_bytes(), 0)?;
        self.results_end = head.len() as u64;
        self.results = 0;
        self.file = Some(file);
        self.meta = Some(meta.clone());
        self.extend(None, None)
    }

    fn row_done(&mut self, row: &Row) -> io::Result<()> {
        let Some(meta) = &self.meta else {
            return Ok(());
        };
        let entry = doc::result(row, meta).text();
        self.extend(Some(entry), None)
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        let topo = summary.tuning.as_ref().and_then(|t| t.topology.clone());
        if let (Some(env), Some(topo)) = (
            self.meta.as_mut().and_then(|m| m.environment.as_mut()),
            topo,
        ) {
            env.topology = Some(topo);
        }
        self.extend(None, Some(summary))
    }
}
