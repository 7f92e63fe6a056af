//! Runs the library pipeline (CLI parse -> plan -> runner -> host backend) in-process and
//! captures the rows, for tests that check results rather than text.

use ncclbench::bench::backend::host::HostBackend;
use ncclbench::bench::backend::Backend;
use ncclbench::bench::job::bootstrap::SingleProcess;
use ncclbench::bench::output::Sink;
use ncclbench::bench::plan;
use ncclbench::bench::runner::{Outcome, Runner};
use ncclbench::cli::{self, Command};
use ncclbench::config::RunConfig;
use ncclbench::core::error::Error;
use ncclbench::result::{Row, Summary};
use std::ffi::OsString;

/// Parses `ncclbench <args>` into a RunConfig (panics on a usage error: tests pass valid args).
pub fn config(args: &str) -> RunConfig {
    let argv: Vec<OsString> = std::iter::once("ncclbench")
        .chain(args.split_whitespace())
        .map(OsString::from)
        .collect();
    match cli::parse(&argv).unwrap_or_else(|e| panic!("{args}: {e}")) {
        Command::Run(cfg) => cfg,
        _ => panic!("{args}: not a run"),
    }
}

/// A sink that keeps every completed row.
#[derive(Default)]
pub struct Capture {
    pub rows: Vec<Row>,
    pub notices: Vec<String>,
    pub finished: Option<Summary>,
}

impl Sink for Capture {
    fn row_done(&mut self, row: &Row) -> std::io::Result<()> {
        self.rows.push(row.clone());
        Ok(())
    }
    fn notice(&mut self, line: &str) -> std::io::Result<()> {
        self.notices.push(line.to_string());
        Ok(())
    }
    fn finish(&mut self, summary: &Summary) -> std::io::Result<()> {
        self.finished = Some(summary.clone());
        Ok(())
    }
}

/// Runs `cfg` on `backend`, returning the outcome and what the sink saw.
pub fn run_captured(
    cfg: &RunConfig,
    backend: &mut dyn Backend,
) -> (Result<Outcome, Error>, Capture) {
    let info = backend.info().clone();
    let (plan, _) = plan::build(cfg, &info, |d, o| backend.supports(d, o)).expect("valid plan");
    let mut sink = Capture::default();
    let mut boot = SingleProcess;
    let out = Runner::new(cfg, &plan, backend, &mut boot, &mut sink).run(None, None);
    (out, sink)
}

/// Runs `cfg` on `backend`, returning the outcome.
pub fn run_with(cfg: &RunConfig, backend: &mut dyn Backend) -> Result<Outcome, Error> {
    run_captured(cfg, backend).0
}

/// Runs `ncclbench <args>` on a host backend with `-t x -g` ranks.
pub fn run_host(args: &str) -> Result<Outcome, Error> {
    let cfg = config(args);
    let mut backend = HostBackend::new(cfg.local_ranks()).unwrap();
    run_with(&cfg, &mut backend)
}
