//! The nccl-tests text table ([`TextSink`]), byte for byte in the nccl-tests 2.19.6 layout
//! except the first line, which names ncclbench.
//!
//! A row is printed in pieces as it is measured: the key columns when it starts, each
//! placement's columns when that placement is done, and the line end when the row is done.
//! Every piece is flushed, so a partial line shows which case is running. A row that never
//! ends (a `-T` timeout or another failure mid-row) is ended with a line break before the
//! footer, and a notice that comes mid-row waits for the row's end: the output stays whole
//! lines.

use crate::bench::output::format::{c_g, float_str};
use crate::bench::output::Sink;
use crate::core::collective::Traffic;
use crate::result::{Measurement, Placement, Row, RowKey, RunMeta, Summary};
use std::io::{self, Write};
use std::sync::Arc;

mod groups;
mod header;
#[cfg(test)]
mod tests;

use groups::GroupTables;
use header::Columns;

/// Writes the nccl-tests text table to `W` (stdout in production).
pub struct TextSink<W: Write> {
    out: W,
    cols: Columns,
    program: String,
    /// `--per-group`: the group rows, printed after the aggregate.
    groups: GroupTables,
    /// `NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY`: the traffic summarised after each alltoallv row.
    summary: Option<Arc<Traffic>>,
    /// Whether a row's first pieces are out without its line end.
    open_row: bool,
    /// Notices given while a row was open, printed after it.
    held: String,
}

impl TextSink<io::Stdout> {
    /// A sink printing to standard output.
    pub fn stdout() -> Self {
        TextSink::new(io::stdout())
    }
}

impl<W: Write> TextSink<W> {
    /// A sink printing to `out`.
    pub fn new(out: W) -> Self {
        TextSink {
            out,
            cols: Columns::default(),
            program: String::new(),
            groups: GroupTables::default(),
            summary: None,
            open_row: false,
            held: String::new(),
        }
    }

    /// Follows each alltoallv row with the per-rank summary of `traffic`, when given.
    pub fn alltoallv_summary(mut self, traffic: Option<Arc<Traffic>>) -> Self {
        self.summary = traffic;
        self
    }

    /// The writer, e.g. to read what a test sink printed.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn emit(&mut self, s: &str) -> io::Result<()> {
        self.out
            .write_all(s.as_bytes())
            .and_then(|()| self.out.flush())
            .map_err(reader_gone)
    }
}

/// A reader that went away (`| head`) stops the run out loud, with a status that is not 0:
/// the rows not yet measured would otherwise be lost without a word.
fn reader_gone(e: io::Error) -> io::Error {
    if e.kind() != io::ErrorKind::BrokenPipe {
        return e;
    }
    io::Error::other(
        "the text table's reader went away (broken pipe, e.g. `| head`): the run stopped \
         there; --csv/--json files keep the rows measured so far and say complete: false",
    )
}

/// The key columns of a data line: `%12li  %12li  %8s  %6s  %6s`.
pub(crate) fn preamble(key: &RowKey) -> String {
    format!(
        "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}",
        key.bytes,
        key.count,
        key.dtype.name(),
        key.op_label(),
        key.root_value()
    )
}

/// One placement's columns: time, algbw, busbw, #wrong (or `N/A`), then with `-I` the
/// per-iteration minimum, maximum, p99 and coefficient of variation.
pub(crate) fn body(cols: Columns, m: &Measurement) -> String {
    let time = if cols.cputime {
        m.cputime_us
    } else {
        m.time_us
    };
    let mut s = format!(
        "  {}  {}  {}",
        float_str(time, 7),
        float_str(m.algbw_gbs, 6),
        float_str(m.busbw_gbs, 6)
    );
    match m.wrong {
        Some(w) => s += &format!("  {:>6}", c_g(w as f64)),
        None => s += "    N/A",
    }
    if cols.per_iter {
        match &m.iter {
            Some(it) => {
                for v in [it.min_us, it.max_us, it.p99_us, it.cv_pct] {
                    s += "  ";
                    s += &float_str(v, 7);
                }
            }
            None => s += &format!("{:36}", ""),
        }
    }
    s
}

/// `--show-algo`: NCCL's decision of each placement (`Ring/LL128/0-3`, `mixed:...`, or `-`
/// when none was found), after the standard columns.
pub(crate) fn algo_columns(row: &Row) -> String {
    let one = |m: &Measurement| m.tuning.as_ref().map_or("-".into(), |t| t.short());
    format!(
        "  {:>18}  {:>18}",
        one(&row.out_of_place),
        one(&row.in_place)
    )
}

/// `NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY`'s lines for an alltoallv row, one block per
/// placement (nccl-tests prints them inside the row, before each placement's columns; here
/// they follow it, so the row stays one line for parsers).
fn alltoallv_summary(row: &Row, traffic: Option<&Traffic>) -> String {
    use crate::core::collective::{alltoallv, Collective};
    let Some(t) = traffic.filter(|_| row.key.collective == Collective::AllToAllv) else {
        return String::new();
    };
    let k = &row.key;
    [&row.out_of_place, &row.in_place]
        .into_iter()
        .flat_map(|m| {
            alltoallv::summary_lines(t, k.count as usize, k.dtype.size(), k.nranks, m.time_us)
        })
        .map(|l| l + "\n")
        .collect()
}

impl<W: Write> Sink for TextSink<W> {
    fn begin(&mut self, meta: &RunMeta) -> io::Result<()> {
        self.cols = Columns::of(meta);
        self.program = meta.program.clone();
        self.groups = GroupTables::new(&meta.groups);
        let text = header::run_header(meta) + &header::column_header(self.cols);
        self.emit(&text)
    }

    fn row_started(&mut self, key: &RowKey) -> io::Result<()> {
        self.open_row = true;
        self.emit(&preamble(key))
    }

    fn placement_done(&mut self, _key: &RowKey, _p: Placement, m: &Measurement) -> io::Result<()> {
        self.emit(&body(self.cols, m))
    }

    fn row_done(&mut self, row: &Row) -> io::Result<()> {
        let mut s = String::new();
        if self.cols.timestamps {
            s += &format!("{:>21}", row.timestamp);
        }
        if self.cols.show_algo {
            s += &algo_columns(row);
        }
        s += "\n";
        s += &alltoallv_summary(row, self.summary.as_deref());
        s += &std::mem::take(&mut self.held);
        self.groups.add(self.cols, row);
        self.open_row = false;
        self.emit(&s)
    }

    fn notice(&mut self, line: &str) -> io::Result<()> {
        if self.open_row {
            self.held += &format!("{line}\n");
            return Ok(());
        }
        self.emit(&format!("{line}\n"))
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        // A row cut short by the failure ends here, so the footer starts its own line.
        let mut text = if std::mem::take(&mut self.open_row) {
            "\n".to_string()
        } else {
            String::new()
        };
        text += &std::mem::take(&mut self.held);
        text += &self.groups.render(self.cols);
        for line in summary.tuning.iter().flat_map(|t| t.lines()) {
            text += &line;
            text += "\n";
        }
        text += &header::footer(summary, &self.program);
        self.emit(&text)
    }
}
