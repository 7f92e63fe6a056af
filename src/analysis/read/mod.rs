//! Readers for `ncclbench analyze`: every result file format turned into [`InputRow`]s.
//!
//! Formats are recognised by content (`detect`): ncclbench CSV (`csv`), ncclbench and
//! nccl-tests JSON (`json`), and nccl-tests text output of any 2.x version (`text`). Rows
//! that cannot be used are never dropped silently: each becomes a [`Skipped`] entry with its
//! file, line and reason (one per unusable text line, CSV record, or JSON result/placement).
//! A file that is structurally broken (invalid JSON, a CSV header without required columns, a
//! table column header that cannot be understood) is an [`Error::Usage`] reading
//! `FILE:LINE: what is wrong`. No input makes a reader panic (see `fuzz/` and the mutation
//! test).
//!
//! [`InputRow`]: crate::analysis::input::InputRow
//! [`Skipped`]: crate::analysis::input::Skipped

mod common;
mod csv;
mod detect;
mod json;
mod source;
mod text;

#[cfg(test)]
mod tests;

use crate::analysis::input::ReadSet;
use crate::core::bounded::{Budget, NO_RECORD_LIMIT};
use crate::core::error::Error;
use crate::core::files::{dir_files, Take};
use detect::{detect, Detected};
use source::Source;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// A result file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// ncclbench `--csv` output.
    Csv,
    /// ncclbench or nccl-tests `-J` output (nccl-tests file versions 1-3).
    Json,
    /// nccl-tests (or ncclbench) text output, possibly inside a larger log.
    Text,
}

/// Reads every file (auto-detecting its format by content, not extension) into one
/// [`ReadSet`]. A directory stands for its regular files (sorted, not recursive) whose first
/// `SNIFF` bytes show a recognised format; a directory holding none is an
/// error. An explicitly named file that is empty, unrecognised, unreadable or yields no rows
/// at all is an [`Error::Usage`] naming it; a named file whose head shows no format is still
/// read through as text, since a log may hold its table anywhere. Every file is streamed:
/// memory holds the rows kept, not the files.
pub fn read_files(paths: &[PathBuf]) -> Result<ReadSet, Error> {
    let mut all = ReadSet::default();
    for path in paths {
        let set = if path.is_dir() {
            read_dir(path)?
        } else {
            read_source(&path.display().to_string(), Source::open(path)?)?
        };
        all.rows.extend(set.rows);
        all.skipped.extend(set.skipped);
        all.inferred.extend(set.inferred);
        all.group_rows += set.group_rows;
    }
    Ok(all)
}

/// Same as [`read_files`] for in-memory text; `name` is used in every
/// [`SourceRef`](crate::analysis::input::SourceRef) and message.
pub fn read_str(name: &str, text: &str) -> Result<ReadSet, Error> {
    let source = Source::new(Box::new(text.as_bytes()))
        .map_err(|e| Error::usage(format!("{name}: cannot read: {e}")))?;
    read_source(name, source)
}

/// Reads a named file (or text) whose head has been read: detects, then streams.
fn read_source(name: &str, source: Source) -> Result<ReadSet, Error> {
    let (format, seen) = match detect(&source.head_text(), source.complete()) {
        Detected::Empty => return Err(Error::usage(format!("{name}: empty file"))),
        Detected::Unrecognised => return Err(not_a_result_file(name)),
        Detected::Format(f) => (f, true),
        Detected::Unseen => (Format::Text, false),
    };
    let set = read_as(name, source.into_reader(), format)?;
    if set.rows.is_empty() && set.skipped.is_empty() {
        return Err(if seen {
            Error::usage(format!("{name}: no result rows in it"))
        } else {
            not_a_result_file(name)
        });
    }
    Ok(set)
}

fn not_a_result_file(name: &str) -> Error {
    Error::usage(format!(
        "{name}: not a result file (expected ncclbench CSV or JSON, or nccl-tests text or JSON output)"
    ))
}

/// Reads `text` as `format`, without detection (fuzz targets drive each parser this way). A
/// file with no rows gives an empty [`ReadSet`].
pub fn read_str_as(name: &str, text: &str, format: Format) -> Result<ReadSet, Error> {
    read_as(name, text.as_bytes(), format)
}

/// Streams `input` through the reader of `format`, which stops once it has read
/// [`NO_RECORD_LIMIT`] bytes after its last row (a CSV: [`csv::MAX_RECORD`] bytes), so an
/// endless input or a file holding no results ends with a message saying so.
fn read_as(name: &str, input: impl BufRead, format: Format) -> Result<ReadSet, Error> {
    let limit = match format {
        Format::Csv => csv::MAX_RECORD,
        Format::Json | Format::Text => NO_RECORD_LIMIT,
    };
    let (input, mark) = Budget::new(input, limit, "result row");
    match format {
        Format::Csv => csv::read(name, input, &mark),
        Format::Json => json::read(name, input, &mark),
        Format::Text => text::read(name, input, &mark),
    }
}

/// The recognised files of a directory, each recognised by its head alone, so a directory of
/// large logs is not read through to find none.
fn read_dir(dir: &Path) -> Result<ReadSet, Error> {
    let files = dir_files(dir, Take::Regular)
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", dir.display())))?;
    let mut all = ReadSet::default();
    let mut recognised = 0;
    for file in files {
        let source = Source::open(&file)?;
        if let Detected::Format(format) = detect(&source.head_text(), source.complete()) {
            let set = read_as(&file.display().to_string(), source.into_reader(), format)?;
            recognised += 1;
            all.rows.extend(set.rows);
            all.skipped.extend(set.skipped);
            all.inferred.extend(set.inferred);
            all.group_rows += set.group_rows;
        }
    }
    if recognised == 0 {
        return Err(Error::usage(format!(
            "{}: no result files in this directory",
            dir.display()
        )));
    }
    Ok(all)
}
