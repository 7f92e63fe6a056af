//! A one-line progress indicator on stderr ([`ProgressSink`]): which case is running, updated
//! in place with `\r` as each row starts, and erased at the end. It only writes when stderr is
//! a terminal, so logs and pipes never see it.

use crate::bench::output::Sink;
use crate::result::{RowKey, Summary};
use std::io::{self, IsTerminal, Write};

/// Shows the current row on a single self-overwriting line.
pub struct ProgressSink<W: Write> {
    out: W,
    enabled: bool,
    rows: u64,
    /// Length of the line on screen, so a shorter one can blank out its tail.
    shown: usize,
}

impl ProgressSink<io::Stderr> {
    /// A sink on stderr, enabled only when stderr is a terminal.
    pub fn stderr() -> Self {
        let err = io::stderr();
        let enabled = err.is_terminal();
        ProgressSink::new(err, enabled)
    }
}

impl<W: Write> ProgressSink<W> {
    /// A sink on `out`; when `enabled` is false it writes nothing at all.
    pub fn new(out: W, enabled: bool) -> Self {
        ProgressSink {
            out,
            enabled,
            rows: 0,
            shown: 0,
        }
    }

    /// The writer, e.g. to read what a test sink printed.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Replaces the line on screen with `line` (an empty line erases it).
    fn show(&mut self, line: &str) -> io::Result<()> {
        let blank = self.shown.saturating_sub(line.len());
        write!(self.out, "\r{line}{:blank$}", "")?;
        if blank > 0 {
            // Put the cursor back at the end of the new text.
            write!(self.out, "\r{line}")?;
        }
        self.shown = line.len();
        self.out.flush()
    }
}

/// `ncclbench: all_reduce float sum 1048576 B, row 12` (op only where it applies, root only
/// for rooted collectives).
fn status(key: &RowKey, row: u64) -> String {
    let mut s = format!("ncclbench: {} {}", key.collective.name(), key.dtype.name());
    if key.collective.iterates_ops() {
        s += " ";
        s += key.op.name();
    }
    if let Some(root) = key.root {
        s += &format!(" root {root}");
    }
    s + &format!(" {} B, row {row}", key.bytes)
}

impl<W: Write> Sink for ProgressSink<W> {
    fn row_started(&mut self, key: &RowKey) -> io::Result<()> {
        self.rows += 1;
        if !self.enabled {
            return Ok(());
        }
        let line = status(key, self.rows);
        self.show(&line)
    }

    fn finish(&mut self, _summary: &Summary) -> io::Result<()> {
        if !self.enabled || self.shown == 0 {
            return Ok(());
        }
        self.show("")
    }
}

#[cfg(test)]
mod tests {
    use super::ProgressSink;
    use crate::bench::output::testdata::{drive, meta, rows, summary};
    use crate::bench::output::Sink;
    use crate::core::collective::Collective;

    #[test]
    fn disabled_sink_writes_nothing() {
        let mut sink = ProgressSink::new(Vec::new(), false);
        drive(&mut sink, &meta(), &rows(), &summary());
        assert!(sink.into_inner().is_empty());
    }

    #[test]
    fn enabled_sink_overwrites_one_line_and_erases_it_at_the_end() {
        let mut sink = ProgressSink::new(Vec::new(), true);
        drive(&mut sink, &meta(), &rows(), &summary());
        let out = String::from_utf8(sink.into_inner()).unwrap();
        let first = "ncclbench: all_reduce float sum 8 B, row 1";
        let second = "ncclbench: all_reduce float sum 134217728 B, row 2";
        let erase = format!("\r{:1$}\r", "", second.len());
        assert_eq!(out, format!("\r{first}\r{second}{erase}"));
        assert!(!out.contains('\n'));
    }

    #[test]
    fn a_shorter_line_blanks_the_tail_of_the_longer_one() {
        let mut sink = ProgressSink::new(Vec::new(), true);
        let mut long = rows()[1].key.clone();
        long.collective = Collective::Broadcast;
        long.root = Some(5);
        let short = rows()[0].key.clone();
        sink.row_started(&long).unwrap();
        sink.row_started(&short).unwrap();
        let out = String::from_utf8(sink.into_inner()).unwrap();
        let first = "ncclbench: broadcast float root 5 134217728 B, row 1";
        let second = "ncclbench: all_reduce float sum 8 B, row 2";
        let pad = " ".repeat(first.len() - second.len());
        assert_eq!(out, format!("\r{first}\r{second}{pad}\r{second}"));
    }

    #[test]
    fn finish_without_rows_writes_nothing() {
        let mut sink = ProgressSink::new(Vec::new(), true);
        sink.begin(&meta()).unwrap();
        sink.finish(&summary()).unwrap();
        assert!(sink.into_inner().is_empty());
    }
}
