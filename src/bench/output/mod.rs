//! Output sinks: one file per format (text, CSV, JSON, Prometheus textfile) behind the [`Sink`]
//! hooks, fanned out by [`Sinks`].
//!
//! Every hook is called as soon as its data exists, and file sinks flush before returning, so a
//! run that dies keeps every completed row in every output. On a fatal error `finish` is still
//! called with what was measured (so JSON stays valid), but no further rows arrive; `seal`
//! follows only when the run ended normally. Which file each sink may write is decided in
//! [`files`], for all of them alike.

use crate::result::{Measurement, Placement, Row, RowKey, RunMeta, Summary};
use std::io;

pub mod csv;
pub mod files;
pub mod format;
pub mod json;
pub mod progress;
pub mod prom;
pub mod redact;
pub mod text;

#[cfg(test)]
mod testdata;
#[cfg(test)]
mod tests;

/// Receives a run's results as they are measured. All hooks default to doing nothing.
pub trait Sink {
    /// Before the first row.
    fn begin(&mut self, _meta: &RunMeta) -> io::Result<()> {
        Ok(())
    }
    /// A row's measurements are about to start.
    fn row_started(&mut self, _key: &RowKey) -> io::Result<()> {
        Ok(())
    }
    /// One placement of the row has been measured (and checked).
    fn placement_done(&mut self, _key: &RowKey, _p: Placement, _m: &Measurement) -> io::Result<()> {
        Ok(())
    }
    /// Both placements are done.
    fn row_done(&mut self, _row: &Row) -> io::Result<()> {
        Ok(())
    }
    /// A free-form line to show to the user in the text output (e.g. a skipped case).
    fn notice(&mut self, _line: &str) -> io::Result<()> {
        Ok(())
    }
    /// After the last row, or after a fatal error.
    fn finish(&mut self, _summary: &Summary) -> io::Result<()> {
        Ok(())
    }
    /// After `finish`, only when the run ended normally (every process agreed on its status):
    /// the outputs may now say they are complete.
    fn seal(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Fans every hook out to several sinks, in order.
#[derive(Default)]
pub struct Sinks(pub Vec<Box<dyn Sink>>);

impl Sink for Sinks {
    fn begin(&mut self, meta: &RunMeta) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|s| s.begin(meta))
    }
    fn row_started(&mut self, key: &RowKey) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|s| s.row_started(key))
    }
    fn placement_done(&mut self, key: &RowKey, p: Placement, m: &Measurement) -> io::Result<()> {
        self.0
            .iter_mut()
            .try_for_each(|s| s.placement_done(key, p, m))
    }
    fn row_done(&mut self, row: &Row) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|s| s.row_done(row))
    }
    fn notice(&mut self, line: &str) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|s| s.notice(line))
    }
    /// Every sink is finished even when one fails (a full disk must not cost the other files
    /// their totals); the first error is returned.
    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        first_error(self.0.iter_mut().map(|s| s.finish(summary)))
    }
    fn seal(&mut self) -> io::Result<()> {
        first_error(self.0.iter_mut().map(|s| s.seal()))
    }
}

/// Runs every step of `results` and returns the first error.
fn first_error(results: impl Iterator<Item = io::Result<()>>) -> io::Result<()> {
    let mut first = Ok(());
    for r in results {
        if first.is_ok() {
            first = r;
        }
    }
    first
}
