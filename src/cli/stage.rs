//! The benchmark flags `accept` and `locate` share (one clap group, flattened into both) and
//! their check into the [`StageBase`] every run they start is made from. The flags are checked
//! by the benchmark's own validation, so they mean exactly what they mean for
//! `ncclbench <collective>`.

use super::args::{parse_devices, BenchArgs, DeviceList};
use super::validate;
use crate::config::stage::{GivenFlags, StageBase};
use crate::config::BackendChoice;
use crate::core::collective::Collective;
use crate::core::error::Error;
use crate::core::units::parse_int;
use clap::{Args, FromArgMatches};
use std::path::PathBuf;

/// The benchmark flags of `accept` and `locate`.
#[derive(Debug, Clone, Args)]
pub(crate) struct StageArgs {
    /// Backend of every run, as for a benchmark
    #[arg(long, value_name = "BACKEND")]
    pub backend: Option<BackendChoice>,
    /// Threads per process, as for a benchmark
    #[arg(short = 't', long = "nthreads", value_name = "N")]
    #[arg(value_parser = parse_int, allow_hyphen_values = true)]
    pub nthreads: Option<i64>,
    /// GPUs per thread, as for a benchmark
    #[arg(short = 'g', long = "ngpus", value_name = "N")]
    #[arg(value_parser = parse_int, allow_hyphen_values = true)]
    pub ngpus: Option<i64>,
    /// The libnccl to load, as for a benchmark
    #[arg(long = "nccl-lib", value_name = "PATH")]
    pub nccl_lib: Option<PathBuf>,
    /// CUDA devices of the local ranks, as for a benchmark
    #[arg(long, value_name = "LIST", value_parser = parse_devices)]
    pub devices: Option<DeviceList>,
}

/// The configuration `collective` runs with under these flags (and `--redact` when `redact`):
/// a benchmark's defaults with the flags applied, checked as a benchmark's command line is.
pub(crate) fn base(s: StageArgs, redact: bool, collective: Collective) -> Result<StageBase, Error> {
    let mut a = defaults()?;
    if let Some(b) = s.backend {
        a.backend = b;
    }
    a.nthreads = s.nthreads.unwrap_or(a.nthreads);
    a.ngpus = s.ngpus.unwrap_or(a.ngpus);
    a.nccl_lib = s.nccl_lib.clone();
    a.devices = s.devices;
    a.redact = redact;
    let config = validate::run_config(collective, a, Vec::new())?;
    let given = GivenFlags {
        backend: s.backend.map(|_| config.backend),
        nthreads: s.nthreads.map(|_| config.nthreads),
        ngpus: s.ngpus.map(|_| config.ngpus),
        nccl_lib: s.nccl_lib,
        devices: config.devices.clone(),
        redact,
    };
    Ok(StageBase { config, given })
}

/// A benchmark's flags with nothing given: the defaults, as the flags declare them.
fn defaults() -> Result<BenchArgs, Error> {
    let cmd = BenchArgs::augment_args(clap::Command::new("defaults"));
    cmd.try_get_matches_from(["defaults"])
        .and_then(|m| BenchArgs::from_arg_matches(&m))
        .map_err(|e| Error::usage(format!("the benchmark flags' defaults: {e}")))
}
