//! `ncclbench compare BEFORE AFTER`: the report on stdout and in `--out DIR`, and the exit
//! status that tells a regression (1) from an error (2).

use crate::analysis::compare::{compare, render, write_dir};
use crate::config::compare::CompareConfig;
use crate::config::ReportFormat;
use crate::core::error::{exit, Error};
use std::io::Write;

/// Runs a comparison: the report on stdout (and `--out`), then the exit status (0, or 1 when a
/// size is slower). With no curve in common the report is still printed (its banner says why)
/// and the result is a usage error.
pub fn run(cfg: &CompareConfig) -> Result<u8, Error> {
    let cmp = compare(cfg)?;
    let mut out = std::io::stdout().lock();
    out.write_all(render(&cmp, cfg.format).as_bytes())?;
    out.flush()?;
    if cmp.curves.is_empty() {
        return Err(Error::usage(
            "nothing to compare: no curve (collective, dtype, op, root, nranks, placement) is in \
             both BEFORE and AFTER",
        ));
    }
    if let Some(dir) = &cfg.out {
        let written = write_dir(&cmp, dir)?;
        if cfg.format == ReportFormat::Text {
            let dir = crate::analysis::report::written_dir(&written, dir);
            writeln!(out, "wrote {} files to {}", written.len(), dir.display())?;
        }
    }
    Ok(if cmp.regression {
        exit::FAILURE
    } else {
        exit::OK
    })
}

/// The exit status of a failed comparison given the one the binary reported: 0 stays 0 (the reader
/// of stdout went away), every other error is 2, since 1 means "regression found".
pub fn error_status(reported: u8) -> u8 {
    if reported == exit::OK {
        exit::OK
    } else {
        exit::USAGE
    }
}
