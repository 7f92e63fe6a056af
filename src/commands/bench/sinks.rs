//! Rank 0's sinks of a run: the `--json`, `--csv` and `--prom` files, the text table (stdout or
//! a file) and the progress line, each begun before the first measurement.

use super::Outputs;
use crate::bench::output::csv::CsvSink;
use crate::bench::output::files::{check_outputs, claim};
use crate::bench::output::json::JsonSink;
use crate::bench::output::progress::ProgressSink;
use crate::bench::output::prom::PromSink;
use crate::bench::output::text::TextSink;
use crate::bench::output::{Sink, Sinks};
use crate::config::RunConfig;
use crate::core::collective::{Collective, Traffic};
use crate::core::error::Error;
use crate::result::RunMeta;
use std::io::Write;
use std::sync::Arc;

/// Rank 0's sinks: files first, so a path that cannot be written stops the run before any
/// output; outputs that cannot all be written (a directory, two naming one file, one naming
/// the table's file) are a usage error before any is opened.
pub(super) fn open_sinks(
    cfg: &RunConfig,
    meta: &RunMeta,
    outputs: &Outputs,
    sinks: &mut Sinks,
    redactor: Option<&crate::core::redact::Redactor>,
) -> Result<(), Error> {
    let mut files: Vec<(&str, &std::path::Path)> = Vec::new();
    if let Some(p) = &cfg.csv {
        files.push(("--csv", p));
    }
    if let Some(p) = &cfg.json {
        files.push(("--json", p));
    }
    if let Some(p) = &cfg.prom {
        files.push(("--prom", p));
    }
    check_outputs(&files, outputs.text_file.as_deref()).map_err(Error::Usage)?;
    // Named before the table, as nccl-tests names its JSON file: the name may be numbered.
    let mut named = Vec::new();
    let mut announce = |what: &str, path: &std::path::Path| {
        let path = path.display().to_string();
        let path = redactor.map_or_else(|| path.clone(), |r| r.text(&path));
        named.push(format!("# Writing {what} output to {path}\n"));
    };
    if let Some(path) = &cfg.json {
        let mut json = JsonSink::new(path);
        // The policy's errors name the file already.
        json.begin(meta).map_err(Error::Output)?;
        announce("JSON", json.path());
        sinks.0.push(Box::new(BegunSink(json)));
    }
    if let Some(path) = &cfg.csv {
        let mut csv = CsvSink::new(path);
        csv.begin(meta).map_err(Error::Output)?;
        announce("CSV", csv.path());
        sinks.0.push(Box::new(BegunSink(csv)));
    }
    if let Some(path) = &cfg.prom {
        let mut prom = PromSink::new(path).redacted(redactor);
        prom.begin(meta).map_err(Error::Output)?;
        announce("Prometheus textfile", prom.path());
        sinks.0.push(Box::new(BegunSink(prom)));
    }
    match &outputs.text_file {
        Some(path) => {
            let io_err = |source| Error::Io {
                path: path.clone(),
                source,
            };
            let mut file = std::io::BufWriter::new(claim(path).map_err(io_err)?.file);
            file.write_all(named.concat().as_bytes()).map_err(io_err)?;
            let mut text = TextSink::new(file).alltoallv_summary(summary(cfg));
            text.begin(meta).map_err(io_err)?;
            sinks.0.push(Box::new(BegunSink(text)));
        }
        None => {
            let _ = std::io::stdout().write_all(named.concat().as_bytes());
            let mut text = TextSink::stdout().alltoallv_summary(summary(cfg));
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
    fn seal(&mut self) -> std::io::Result<()> {
        self.0.seal()
    }
}

/// The traffic the text sink summarises after each alltoallv row, when asked to.
fn summary(cfg: &RunConfig) -> Option<Arc<Traffic>> {
    let a = &cfg.alltoallv;
    (cfg.collective == Collective::AllToAllv && a.print_summary).then(|| a.traffic.clone())
}
