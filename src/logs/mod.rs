//! NCCL debug logs (`NCCL_DEBUG=INFO`, any subsystems, NCCL 2.18 through 2.30): what the
//! library says about itself, parsed as a byte stream.
//!
//! Two levels of API:
//!
//! * **Per line** ([`LineParser`]): physical lines in, typed [`Record`]s out, in file order,
//!   each with its [`Origin`] (line, host, pid, tid, device, communicator pointer). A
//!   [`Decision`] (one per-call TUNING line) carries the collective, bytes, algorithm,
//!   protocol, channel range, model time where the format has it, and the communicator, rank
//!   and process it belongs to. A joiner walks these per (host, pid, comm) in order.
//! * **Per file set** ([`parse_reader`], [`parse_files`]): a [`LogSummary`] with the facts per
//!   host and communicator, decisions counted per (communicator, collective, bytes), the
//!   tuning-model tables, WARN lines by kind and counted parse warnings; [`findings`] turns
//!   it into rule-based findings; [`report`] renders text or JSON (`ncclbench-logs/1`), with
//!   optional [`redact`]ion.
//!
//! Lines from many processes may interleave or glue together, sit inside benchmark output,
//! carry launcher tags or CRLF, or be cut off: prefixes are found anywhere in a line and what
//! cannot be read is counted ([`warnings`]), never a panic.

mod attribute;
mod collect;
mod decision;
pub mod event;
pub mod findings;
mod lines;
mod merge;
pub mod names;
mod parser;
mod prefix;
/// Redaction lives at the crate level (benchmark runs use it too).
pub use crate::core::redact;
pub mod report;
mod scan;
mod sink;
pub mod summary;
mod table;
mod topo;
pub mod topology;
pub mod warnings;

#[cfg(test)]
mod tests;

pub use collect::Collector;
pub use event::{
    CollCall, CommInit, Connection, Decision, DecisionPath, Event, Origin, Record, Transport,
};
pub use lines::{for_each_line, LineEnd};
pub use names::{Algo, Func, NcclVersion, Proto};
pub use parser::LineParser;
pub use summary::LogSummary;

use crate::core::bounded::{Budget, NO_RECORD_LIMIT};
use std::io::{self, BufRead};
use std::path::Path;
use warnings::WarningKind;

/// Lines longer than this are cut (their rest is skipped): NCCL itself cuts at 1024 bytes up
/// to 2.28, so only garbage or a binary file gets here.
pub const MAX_LINE: usize = 1 << 20;

/// The NCCL version a line of captured output names: `NCCL version 2.20.3+cuda12.2` bare (as
/// 2.18-2.21 print it for rank 0), behind a launcher tag (`[1,0]<stdout>:`, `0: `), or after
/// an INFO prefix.
pub fn version_in_line(line: &[u8]) -> Option<NcclVersion> {
    let at = memchr::memmem::find(line, b"NCCL version ")?;
    NcclVersion::parse(&line[at + b"NCCL version ".len()..])
}

/// How to parse.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// Keep every decision in file order in [`LogSummary::decision_log`] (for joiners).
    pub keep_decisions: bool,
}

/// Errors reading a log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The input could not be read.
    #[error("{file}: {source}")]
    Read {
        /// File label.
        file: String,
        /// The cause.
        source: io::Error,
    },
}

/// Parses one input into a summary. `file` labels evidence lines.
pub fn parse_reader<R: BufRead>(
    reader: R,
    file: &str,
    opts: &ParseOptions,
) -> Result<LogSummary, LogError> {
    let mut c = Collector::new(opts);
    add_reader(&mut c, reader, file)?;
    Ok(c.finish())
}

/// Parses one more input into `collector`.
pub fn add_reader<R: BufRead>(
    collector: &mut Collector,
    reader: R,
    file: &str,
) -> Result<(), LogError> {
    let mut parser = LineParser::new();
    collector.begin_file(file);
    // An endless input holding no NCCL line (`/dev/urandom` through a FIFO) stops here.
    let (reader, mark) = Budget::new(reader, NO_RECORD_LIMIT, "NCCL line");
    lines::for_each_line_hits(reader, |line, end, hits| {
        if parser.line_hits(line, hits, &mut collector.sink(line)) {
            collector.nccl_line();
            mark.record();
        }
        match end {
            LineEnd::Newline => {}
            LineEnd::Cut => parser.warn(WarningKind::OverlongLine, parser.lines()),
            LineEnd::Missing { overlong } => {
                parser.warn(WarningKind::TruncatedLastLine, parser.lines());
                if overlong {
                    parser.warn(WarningKind::OverlongLine, parser.lines());
                }
            }
        }
    })
    .map_err(|source| LogError::Read {
        file: file.to_string(),
        source,
    })?;
    collector.end_file(&parser);
    Ok(())
}

/// Parses files (`-` is stdin) into one summary; each file is labelled with its path.
///
/// Files are parsed in parallel on all cores (a job of 1,000 ranks writes one
/// `NCCL_DEBUG_FILE` per process), each into its own summary, joined in the order given; the
/// result is the same whatever the number of threads. On errors, the first file's in order.
pub fn parse_files(
    paths: &[impl AsRef<Path> + Sync],
    opts: &ParseOptions,
) -> Result<LogSummary, LogError> {
    if let [one] = paths {
        let mut c = Collector::new(opts);
        add_path(&mut c, one.as_ref())?;
        return Ok(c.finish());
    }
    let parts: Vec<Result<_, LogError>> = crate::core::parallel::map(paths, |p| {
        let mut c = Collector::new(opts);
        add_path(&mut c, p.as_ref())?;
        Ok(c.finish_with_ids())
    });
    Ok(merge::merge(parts.into_iter().collect::<Result<_, _>>()?))
}

/// Parses the file at `p` (`-`: stdin) into `c`.
fn add_path(c: &mut Collector, p: &Path) -> Result<(), LogError> {
    let label = p.display().to_string();
    if label == "-" {
        return add_reader(c, io::stdin().lock(), "<stdin>");
    }
    let file = crate::core::fifo::open_input(p).map_err(|source| LogError::Read {
        file: label.clone(),
        source,
    })?;
    add_reader(c, io::BufReader::with_capacity(1 << 20, file), &label)
}
