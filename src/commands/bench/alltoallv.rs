//! alltoallv's settings from nccl-tests' environment variables, read once before the run:
//! `NCCL_TESTS_ALLTOALLV_MATRIX_FILE` (matrix mode) and `_MATRIX_SCALE`, else
//! `NCCL_TESTS_ALLTOALLV_SPREAD` (generated mode), and `_PRINT_SUMMARY`. A value that is not
//! a number, or a matrix file that cannot be read or parsed, is one line and exit 2 (nccl-tests
//! silently keeps a default for a bad number and fails a bad matrix with status 1).

use crate::config::{Alltoallv, RunConfig};
use crate::core::collective::alltoallv::{read_matrix, Traffic};
use crate::core::collective::Collective;
use crate::core::error::Error;
use std::borrow::Cow;
use std::sync::Arc;

/// `cfg` with its alltoallv settings read from the environment (`cfg` itself for the other
/// collectives).
pub(super) fn configure(cfg: &RunConfig) -> Result<Cow<'_, RunConfig>, Error> {
    if cfg.collective != Collective::AllToAllv {
        return Ok(Cow::Borrowed(cfg));
    }
    let var = |name: &str| std::env::var(name).ok();
    let print_summary = var("NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY").is_some_and(|v| atoi(&v) != 0);
    let traffic = match var("NCCL_TESTS_ALLTOALLV_MATRIX_FILE") {
        Some(path) => {
            let scale = number("NCCL_TESTS_ALLTOALLV_MATRIX_SCALE")?.unwrap_or(1.0);
            read(&path, scale.max(0.0))?
        }
        None => Traffic::Generated {
            spread: number("NCCL_TESTS_ALLTOALLV_SPREAD")?
                .unwrap_or(1.0)
                .clamp(0.0, 1.0),
        },
    };
    let mut cfg = cfg.clone();
    cfg.alltoallv = Alltoallv {
        traffic: Arc::new(traffic),
        print_summary,
    };
    Ok(Cow::Owned(cfg))
}

/// A float variable, `None` when unset.
fn number(name: &str) -> Result<Option<f64>, Error> {
    let Ok(v) = std::env::var(name) else {
        return Ok(None);
    };
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(Some(x)),
        _ => Err(Error::usage(format!("{name}={v:?} is not a number"))),
    }
}

/// C's `atoi`: the leading optional sign and digits, 0 when there are none.
fn atoi(v: &str) -> i64 {
    let t = v.trim_start();
    let (sign, digits) = match t.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse::<i64>().map_or(0, |x| sign * x)
}

/// Streams the matrix file (bounded: see [`read_matrix`]); a device is refused up front.
fn read(path: &str, scale: f64) -> Result<Traffic, Error> {
    let cannot = |e: std::io::Error| {
        Error::usage(format!(
            "cannot read the alltoallv traffic matrix file {path}: {e}"
        ))
    };
    let file = crate::core::fifo::open_input(std::path::Path::new(path)).map_err(cannot)?;
    let matrix = read_matrix(std::io::BufReader::new(file), path, scale).map_err(Error::usage)?;
    Ok(Traffic::Matrix(matrix))
}
