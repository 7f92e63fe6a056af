//! `ncclbench env [--json] [--nccl-lib PATH] [--redact]`: what a run here would use.

use crate::bench::environment;
use crate::core::error::{exit, Error};
use std::io::Write;
use std::path::Path;

/// Prints the environment report on stdout; returns the exit status.
pub fn run(json: bool, nccl_lib: Option<&Path>, redact: bool) -> Result<u8, Error> {
    let mut r = environment::collect(nccl_lib);
    if redact {
        crate::result::environment::redact_report(&mut r, &environment::process_redactor());
    }
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &r).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        environment::write_text(&r, &mut out)?;
    }
    out.flush()?;
    Ok(exit::OK)
}
