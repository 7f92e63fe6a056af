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
//! The file never holds a partial document: after `begin`, every row and `finish` the whole
//! document is written to `<file>.tmp` and renamed over the file. An existing file is never
//! overwritten; as nccl-tests does, `<file>.0`, `<file>.1`, ... are tried instead.

use crate::output::Sink;
use crate::result::{Row, RunMeta, Summary};
use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

mod doc;
#[cfg(test)]
mod key_tree;
#[cfg(test)]
mod tests;
mod tuning;
mod value;

use value::J;

/// Writes the JSON document, rewritten whole after every row.
pub struct JsonSink {
    path: PathBuf,
    meta: Option<RunMeta>,
    /// Every completed row's `results` entry, already serialised.
    results: Vec<String>,
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
            results: Vec::new(),
        }
    }

    /// The file written: the requested path before `begin`, the claimed one after it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the document as it stands (`summary` present once finished) and renames it
    /// into place.
    fn write(&self, summary: Option<&Summary>) -> io::Result<()> {
        let Some(meta) = &self.meta else {
            return Ok(());
        };
        let mut fields = doc::head(meta);
        let results = self.results.iter().map(|r| J::Raw(r.clone())).collect();
        fields.push(("results", J::Arr(results)));
        if let Some(s) = summary {
            fields.extend(doc::totals(s));
        }
        fields.push(("ncclbench", doc::ncclbench_with(meta, summary)));
        let mut text = J::Obj(fields).text();
        text.push('\n');
        let tmp = with_suffix(&self.path, ".tmp");
        fs::write(&tmp, text)?;
        fs::rename(&tmp, &self.path)
    }
}

impl Sink for JsonSink {
    fn begin(&mut self, meta: &RunMeta) -> io::Result<()> {
        self.path = claim_free_name(&self.path)?;
        self.meta = Some(meta.clone());
        self.results.clear();
        self.write(None)
    }

    fn row_done(&mut self, row: &Row) -> io::Result<()> {
        if let Some(meta) = &self.meta {
            self.results.push(doc::result(row, meta).text());
        }
        self.write(None)
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        let topo = summary.tuning.as_ref().and_then(|t| t.topology.clone());
        if let (Some(env), Some(topo)) = (
            self.meta.as_mut().and_then(|m| m.environment.as_mut()),
            topo,
        ) {
            env.topology = Some(topo);
        }
        self.write(Some(summary))
    }
}
