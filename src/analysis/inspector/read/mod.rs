//! Readers for NCCL Inspector output: JSON record files (`json`, one object at a time through
//! serde on borrowed structs; objects found by `split`, the file read in blocks and each block
//! parsed in parallel pieces by `stream`) and Prometheus textfile snapshots (`prometheus`),
//! plain or gzip-compressed, named one by one or as dump directories read recursively
//! (`files`). Sizes are put in nccl-tests' convention by `convention`; what records share is
//! kept once per piece by `intern`; `tally` counts what the notes say.
//!
//! Files are read with plain reads (no mapping: a file truncated while it is read then reads
//! as shorter, never as a fault). Nothing is dropped silently: an object that is no usable
//! record is a skipped entry (file, byte offset or line, reason), and a broken record costs
//! only itself (the read resumes at the next record start); a file cut mid-object keeps
//! every complete record and says how many bytes were dropped; verbose traces, other record
//! kinds and unknown format versions are notes. A named file that cannot be read or is not
//! Inspector output, and a directory holding none, are an [`Error::Usage`] naming it.

mod convention;
mod files;
mod intern;
mod json;
mod prometheus;
mod split;
mod stream;
mod tally;

#[cfg(test)]
mod tests;

use crate::analysis::inspector::record::Record;
use crate::core::error::Error;
use files::Kind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tally::Tally;

/// Everything read from a set of Inspector files.
#[derive(Debug, Default)]
pub struct InspectorSet {
    /// The records, file by file (in path order) and in file order within each.
    pub records: Vec<Record>,
    /// How many files were read.
    pub files: usize,
    /// One line per fact worth knowing: a file cut mid-record (`FILE: cut mid-record at byte
    /// N: M bytes dropped`), records of a kind ignored, unknown format versions, directory
    /// entries that are not Inspector output.
    pub notes: Vec<String>,
    /// Unusable entries: file, byte offset (JSON) or line (Prometheus), reason.
    pub skipped: Vec<(PathBuf, u64, String)>,
    /// The files of `skipped` that are Prometheus textfiles (their positions are lines).
    pub prometheus_files: Vec<PathBuf>,
}

impl InspectorSet {
    /// The skipped entries as one line each: `FILE: byte N: reason` (JSON) or `FILE:N:
    /// reason` (a Prometheus textfile's line).
    pub fn skipped_lines(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|(file, at, why)| {
                if self.prometheus_files.contains(file) {
                    format!("{}:{at}: {why}", file.display())
                } else {
                    format!("{}: byte {at}: {why}", file.display())
                }
            })
            .collect()
    }
}

/// Whether `path` is Inspector output: a directory holding an Inspector file anywhere below
/// it, or a file whose first bytes (after gunzip) start a record object (first key `header`,
/// `coll_perf` or `p2p_perf`) or a Prometheus textfile with `nccl_` metrics.
pub fn looks_like_inspector(path: &Path) -> bool {
    if path.is_dir() {
        files::dir_has_inspector(path)
    } else {
        files::open(path).is_ok_and(|o| o.kind.is_some())
    }
}

/// Reads every path (a file, or a directory read recursively for its Inspector files) into
/// one [`InspectorSet`]; files are parsed in parallel, large files in parallel pieces.
pub fn read_paths(paths: &[PathBuf]) -> Result<InspectorSet, Error> {
    let mut set = InspectorSet::default();
    let mut todo: Vec<PathBuf> = Vec::new();
    for path in paths {
        if path.is_dir() {
            let all = files::walk(path)
                .map_err(|e| Error::usage(format!("{}: cannot read: {e}", path.display())))?;
            // A file that cannot be read is an error naming it, not a file left out: a rank's
            // lost records would otherwise vanish from the analysis unsaid.
            let kinds = crate::core::parallel::map(&all, |f| files::open(f).map(|o| o.kind));
            let mut found: Vec<PathBuf> = Vec::new();
            for (kind, f) in kinds.into_iter().zip(&all) {
                match kind {
                    Ok(Some(_)) => found.push(f.clone()),
                    Ok(None) => {}
                    Err(e) => {
                        return Err(Error::usage(format!("{}: cannot read: {e}", f.display())))
                    }
                }
            }
            if found.is_empty() {
                return Err(Error::usage(format!(
                    "{}: no NCCL Inspector files in this directory (JSON records or a \
                     Prometheus textfile, plain or gzip)",
                    path.display()
                )));
            }
            if found.len() < all.len() {
                set.notes.push(format!(
                    "{}: {} files that are not Inspector output left out",
                    path.display(),
                    all.len() - found.len()
                ));
            }
            todo.extend(found);
        } else {
            todo.push(path.clone());
        }
    }
    let results = crate::core::parallel::map(&todo, |path| read_file(path))
        .into_iter()
        .collect::<Result<Vec<_>, Error>>()?;
    let total: usize = results.iter().map(|(t, _)| t.records.len()).sum();
    for (path, (mut tally, json)) in todo.iter().zip(results) {
        let name = path.display().to_string();
        set.notes.extend(tally.notes(&name, json));
        if !json && !tally.skipped.is_empty() {
            set.prometheus_files.push(path.clone());
        }
        set.skipped.extend(
            tally
                .skipped
                .into_iter()
                .map(|(at, why)| (path.clone(), at, why)),
        );
        if set.records.is_empty() {
            // Moved, not copied: a single file's records are most of the memory read.
            set.records = tally.records;
            set.records.reserve_exact(total - set.records.len());
        } else {
            set.records.extend(tally.records);
        }
        set.files += 1;
    }
    Ok(set)
}

/// Reads one file; the flag says whether it was JSON (for its notes).
fn read_file(path: &Path) -> Result<(Tally, bool), Error> {
    let name = path.display();
    let opened =
        files::open(path).map_err(|e| Error::usage(format!("{name}: cannot read: {e}")))?;
    let file = Arc::new(path.to_path_buf());
    match opened.kind {
        Some(Kind::Json) => Ok((stream::read_json(file, opened.reader), true)),
        Some(Kind::Prometheus) => Ok((prometheus::read(file, opened.reader), false)),
        None if opened.empty => Err(Error::usage(format!("{name}: empty file"))),
        None => Err(Error::usage(format!(
            "{name}: not NCCL Inspector output (neither JSON records starting with \
             \"header\", \"coll_perf\" or \"p2p_perf\" nor a Prometheus textfile of nccl_ \
             metrics{})",
            if opened.gzip { ", after gunzip" } else { "" }
        ))),
    }
}
