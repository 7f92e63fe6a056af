//! `manifest.json`: the record of every file an acceptance run writes into its output
//! directory, kept so that `--force` removes those files and nothing else.
//!
//! The record is written before the files it names (the stage tables as soon as the directory
//! is made, the baseline report's files once they exist), each time whole (a temporary file
//! renamed over it), so a run killed at any point leaves a directory `--force` can replace.
//! `--force` decides from the whole directory before it touches anything: any entry the record
//! does not name (a user's notes beside the results or inside `performance/`, a directory the
//! run did not make, a link), or no record at all, refuses the directory with nothing removed.

use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io;
use std::path::{Component, Path, PathBuf};

/// The record's file name in the output directory.
pub(super) const NAME: &str = "manifest.json";

/// The record's schema.
const SCHEMA: &str = "ncclbench-accept-manifest/1";

/// The record as written.
#[derive(Serialize, Deserialize)]
struct Doc {
    schema: String,
    /// Paths relative to the output directory, `/`-separated.
    files: BTreeSet<String>,
}

/// The record of a run in progress.
pub(super) struct Manifest {
    dir: PathBuf,
    files: RefCell<BTreeSet<String>>,
}

impl Manifest {
    /// An empty record for the output directory `dir`.
    pub(super) fn new(dir: &Path) -> Self {
        Manifest {
            dir: dir.to_path_buf(),
            files: RefCell::new(BTreeSet::new()),
        }
    }

    /// Adds `files` (relative to the directory) and rewrites the record whole.
    pub(super) fn record<I, S>(&self, files: I) -> io::Result<()>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.files
            .borrow_mut()
            .extend(files.into_iter().map(Into::into));
        let doc = Doc {
            schema: SCHEMA.into(),
            files: self.files.borrow().clone(),
        };
        let text = serde_json::to_string_pretty(&doc).map_err(io::Error::from)? + "\n";
        let path = self.dir.join(NAME);
        let tmp = self.dir.join(format!("{NAME}.tmp"));
        let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map_err(|e| crate::bench::output::files::named(&path, e))
    }
}

/// What `--force` may remove from `dir`: the files an earlier run recorded (those still
/// there), the directories it made for them, deepest first, and the record itself last. `Err`:
/// why the directory is refused, one line; nothing has been touched.
pub(super) fn earlier_run(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let record = dir.join(NAME);
    let recorded = match std::fs::read_to_string(&record) {
        Ok(text) => parse(&text)
            .ok_or_else(|| format!("{} is not an acceptance run's record", record.display()))?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => BTreeSet::new(),
        Err(e) => return Err(format!("{}: {e}", record.display())),
    };
    let mut owned: BTreeSet<String> = recorded.clone();
    owned.insert(NAME.into());
    // A temporary file of a recorded one is the run's too (a run killed while writing it).
    owned.extend(recorded.iter().map(|f| format!("{f}.tmp")));
    owned.insert(format!("{NAME}.tmp"));
    let dirs: BTreeSet<String> = owned
        .iter()
        .flat_map(|f| {
            let parts: Vec<&str> = f.split('/').collect();
            (1..parts.len()).map(move |n| parts[..n].join("/"))
        })
        .collect();
    let mut found = Vec::new();
    walk(dir, "", &mut found).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    let mut made = Vec::new();
    for (rel, kind) in &found {
        let ours = match kind {
            Kind::File => owned.contains(rel),
            Kind::Dir => dirs.contains(rel),
            Kind::Other => false,
        };
        if !ours {
            let why = if recorded.is_empty() && !record.exists() {
                format!("no acceptance run recorded its files there ({NAME})")
            } else {
                format!("the earlier acceptance run did not write it ({NAME})")
            };
            return Err(format!("it holds {}, {why}", dir.join(rel).display()));
        }
        match kind {
            Kind::Dir => made.push(dir.join(rel)),
            _ if rel != NAME => files.push(dir.join(rel)),
            _ => {}
        }
    }
    // Deepest directories first, so each is empty when its turn comes.
    made.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    files.extend(made);
    if record.exists() {
        files.push(record);
    }
    Ok(files)
}

/// Removes what [`earlier_run`] returned: files, then directories, then the record.
pub(super) fn remove(paths: &[PathBuf]) -> io::Result<()> {
    for p in paths {
        let md = std::fs::symlink_metadata(p)?;
        if md.is_dir() {
            std::fs::remove_dir(p)
        } else {
            std::fs::remove_file(p)
        }
        .map_err(|e| crate::bench::output::files::named(p, e))?;
    }
    Ok(())
}

/// The recorded files, when `text` is a record whose every path stays inside the directory.
fn parse(text: &str) -> Option<BTreeSet<String>> {
    let doc: Doc = serde_json::from_str(text).ok()?;
    let inside = |f: &String| {
        !f.is_empty()
            && Path::new(f)
                .components()
                .all(|c| matches!(c, Component::Normal(_)))
    };
    (doc.schema == SCHEMA && doc.files.iter().all(inside)).then_some(doc.files)
}

/// What an entry of the directory is; a link is never followed.
enum Kind {
    File,
    Dir,
    Other,
}

/// Every entry under `dir` (relative, `/`-separated, sorted), directories before their
/// contents.
fn walk(dir: &Path, prefix: &str, found: &mut Vec<(String, Kind)>) -> io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let ty = e.file_type()?;
        if ty.is_dir() {
            found.push((rel.clone(), Kind::Dir));
            walk(&e.path(), &rel, found)?;
        } else if ty.is_file() {
            found.push((rel, Kind::File));
        } else {
            found.push((rel, Kind::Other));
        }
    }
    Ok(())
}
