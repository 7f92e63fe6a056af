//! Rank 0's sinks of a run: the `--json` and `--csv` files, the text table (stdout or a file)
//! and the progress line, each begun before the first measurement.

use super::Outputs;
use crate::bench::output::csv::CsvSink;
use crate::bench::output::json::JsonSink;
use crate::bench::output::progress::ProgressSink;
use crate::bench::output::text::TextSink;
use crate::bench::output::{Sink, Sinks};
use crate::config::RunConfig;
use crate::core::error::Error;
use crate::result::RunMeta;

/// Rank 0's sinks: files first, so a path that cannot be written stops the run before any
/// output.
pub(super) fn open_sinks(
    cfg: &RunConfig,
    meta: &RunMeta,
    outputs: &Outputs,
    sinks: &mut Sinks,
) -> Result<(), Error> {
    if let Some(path) = &cfg.json {
        let mut json = JsonSink::new(path);
        json.begin(meta).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        // The JSON sink picks its file (no-clobber) at begin; nccl-tests announces it first.
        println!("# Writing JSON output to {}", json.path().display());
        sinks.0.push(Box::new(BegunSink(json)));
    }
    if let Some(path) = &cfg.csv {
        let mut csv = CsvSink::new(path);
        csv.begin(meta).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        sinks.0.push(Box::new(BegunSink(csv)));
    }
    match &outputs.text_file {
        Some(path) => {
            let io_err = |source| Error::Io {
                path: path.clone(),
                source,
            };
            let file = std::fs::File::create(path).map_err(io_err)?;
            let mut text = TextSink::new(std::io::BufWriter::new(file));
            text.begin(meta).map_err(io_err)?;
            sinks.0.push(Box::new(BegunSink(text)));
        }
        None => {
            let mut text = TextSink::stdout();
            text.begin(meta)?;
            sinks.0.push(Box::new(BegunSink(text)));
        }
    }
    if !outputs.quiet {
        let mut progress = ProgressSink::stderr();
        progress.begin(meta)?;
        sinks.0.push(Box::new(BegunSink(progress)));
    }
    Ok(())
}

/// A sink whose `begin` already ran; it ignores the fan-out's `begin`.
struct BegunSink<S: Sink>(S);

impl<S: Sink> Sink for BegunSink<S> {
    fn row_started(&mut self, key: &crate::result::RowKey) -> std::io::Result<()> {
        self.0.row_started(key)
    }
    fn placement_done(
        &mut self,
        key: &crate::result::RowKey,
        p: crate::result::Placement,
        m: &crate::result::Measurement,
    ) -> std::io::Result<()> {
        self.0.placement_done(key, p, m)
    }
    fn row_done(&mut self, row: &crate::result::Row) -> std::io::Result<()> {
        self.0.row_done(row)
    }
    fn notice(&mut self, line: &str) -> std::io::Result<()> {
        self.0.notice(line)
    }
    fn finish(&mut self, summary: &crate::result::Summary) -> std::io::Result<()> {
        self.0.finish(summary)
    }
}
