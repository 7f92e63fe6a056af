//! `ncclbench locate`'s flags and their check into a [`LocateConfig`]. The benchmark flags
//! (`--backend`, `-t`, `-g`, `--nccl-lib`, `--devices`; [`StageArgs`]) mean what they mean for
//! a benchmark and are checked by the benchmark's own validation.

use super::stage::{self, StageArgs};
use crate::config::locate::LocateConfig;
use crate::core::collective::Collective;
use crate::core::error::Error;
use crate::core::units::parse_size;
use clap::Args;
use std::path::PathBuf;

/// Flags of `ncclbench locate`.
#[derive(Debug, Args)]
pub(crate) struct LocateArgs {
    /// What every group runs: all_reduce or sendrecv
    #[arg(long, value_name = "COLLECTIVE", default_value = "all_reduce")]
    pub collective: String,
    /// Bytes per rank buffer, a bandwidth-bound size [default: 256M on GPUs, 1M on host
    /// memory]
    #[arg(short = 'b', long = "bytes", value_name = "SIZE", value_parser = parse_size)]
    pub bytes: Option<u64>,
    /// Rail rounds: how many partners every node meets (at most nodes - 1)
    #[arg(long, value_name = "N", default_value = "3")]
    pub rounds: usize,
    /// Timed iterations per group
    #[arg(short = 'n', long = "iters", value_name = "N", default_value = "10")]
    pub iters: usize,
    /// Warm-up iterations per group
    #[arg(
        short = 'w',
        long = "warmup_iters",
        value_name = "N",
        default_value = "2"
    )]
    pub warmup: usize,
    /// Bound of every wait, seconds; a rank whose partners wait longer is reported as hung
    #[arg(
        short = 'T',
        long = "timeout",
        value_name = "SECONDS",
        default_value = "60"
    )]
    pub timeout: u64,
    /// Output directory for locate.txt, locate.json and hostfile [default:
    /// ncclbench-locate-<date>-<time>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A profile (shipped name or TOML file) whose [locate] floors also judge the groups
    #[arg(long, value_name = "NAME|FILE")]
    pub profile: Option<String>,
    /// NCCL debug logs of this job (NCCL_DEBUG=INFO), to name the NIC of a slow rail
    #[arg(long = "nccl-log", value_name = "FILE")]
    pub nccl_log: Vec<PathBuf>,
    /// The benchmark flags of the job.
    #[command(flatten)]
    pub stage: StageArgs,
    /// Mask host names and PIDs in the report, locate.json and hostfile (for sharing the
    /// evidence; the exclude line then names masked hosts)
    #[arg(long)]
    pub redact: bool,
}

/// Checks `locate`'s flags.
pub(crate) fn config(a: LocateArgs) -> Result<LocateConfig, Error> {
    let collective = match a.collective.as_str() {
        "all_reduce" => Collective::AllReduce,
        "sendrecv" => Collective::SendRecv,
        other => {
            return Err(Error::usage(format!(
                "invalid value '{other}' for --collective: all_reduce or sendrecv"
            )))
        }
    };
    for (flag, v) in [("--rounds", a.rounds), ("-n", a.iters)] {
        if v == 0 {
            return Err(Error::usage(format!(
                "invalid value '0' for {flag}: must be at least 1"
            )));
        }
    }
    if a.timeout == 0 {
        return Err(Error::usage(
            "invalid value '0' for -T: locate always bounds its waits",
        ));
    }
    if a.bytes == Some(0) {
        return Err(Error::usage(
            "invalid value '0' for -b: must be at least 1 byte",
        ));
    }
    // `--redact` masks locate's own report; the job's benchmark outputs are not written.
    let base = stage::base(a.stage, false, collective)?;
    Ok(LocateConfig {
        collective,
        bytes: a.bytes,
        rounds: a.rounds,
        iters: a.iters,
        warmup: a.warmup,
        timeout_s: a.timeout,
        out: a.out,
        profile: a.profile,
        nccl_logs: a.nccl_log,
        base,
        redact: a.redact,
    })
}
