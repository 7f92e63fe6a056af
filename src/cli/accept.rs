//! `ncclbench accept`'s flags and their check into an [`AcceptConfig`].
//!
//! The benchmark flags (`--backend`, `-t`, `-g`, `--nccl-lib`, `--devices`; [`StageArgs`]) are
//! checked as a benchmark's are and start every stage's configuration; `-T` and `-e` replace
//! the profile's timeout and sweep end.

use super::stage::{self, StageArgs};
use crate::config::accept::AcceptConfig;
use crate::config::accept::StageFlags;
use crate::core::collective::Collective;
use crate::core::error::Error;
use crate::core::units::parse_size;
use clap::Args;
use std::path::PathBuf;

/// Flags of `ncclbench accept`.
#[derive(Debug, Args)]
pub(crate) struct AcceptArgs {
    /// A shipped profile (see --list-profiles) or a profile TOML file [default: default, which
    /// has no performance thresholds]
    #[arg(long, value_name = "NAME|FILE")]
    pub profile: Option<String>,
    /// Output directory, new or empty [default: ncclbench-accept-<date>-<time>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Reuse an --out directory that holds an earlier acceptance run: its files are replaced
    #[arg(long)]
    pub force: bool,
    /// List the shipped profiles and exit
    #[arg(long = "list-profiles")]
    pub list_profiles: bool,
    /// Print a profile made from a healthy run's result files or directories (repeatable)
    /// instead of running the suite
    #[arg(long = "make-profile", value_name = "RUN")]
    pub make_profile: Vec<PathBuf>,
    /// Name of a profile made with --make-profile
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Margin of a made profile, percent: busbw at least (100-PCT)% and small-message time at
    /// most (100+PCT)% of the run's [default: 10]
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub margin: Option<f64>,
    /// Compare the performance results with this healthy run's files or directories
    /// (repeatable; replaces the profile's [baseline])
    #[arg(long, value_name = "RUN")]
    pub baseline: Vec<PathBuf>,
    /// Smallest time change called a regression against the baseline, percent
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub threshold: Option<f64>,
    /// The benchmark flags of every stage.
    #[command(flatten)]
    pub stage: StageArgs,
    /// Per-wait timeout of every stage in seconds [default: the profile's timeout_s]
    #[arg(short = 'T', long = "timeout", value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// Largest size of the performance sweep [default: the profile's perf_max_bytes]
    #[arg(short = 'e', long = "maxbytes", value_name = "SIZE", value_parser = parse_size)]
    pub maxbytes: Option<u64>,
    /// Mask host names, IPs, PIDs, user names in paths and secret-looking variables in every
    /// output file
    #[arg(long)]
    pub redact: bool,
    /// When a performance check fails, run `ncclbench locate` before reporting and name the
    /// suspect nodes, GPUs and links (the profile's [locate] settings, else locate's defaults)
    #[arg(long)]
    pub locate: bool,
}

/// Checks `accept`'s flags.
pub(crate) fn config(a: AcceptArgs) -> Result<AcceptConfig, Error> {
    if a.make_profile.is_empty() {
        // They shape only a made profile: silently ignoring them would hide a mistyped command.
        for (flag, given) in [
            ("--name", a.name.is_some()),
            ("--margin", a.margin.is_some()),
        ] {
            if given {
                return Err(Error::usage(format!(
                    "{flag} applies only with --make-profile (it names or shapes the profile \
                     made)"
                )));
            }
        }
    }
    for (flag, v) in [("--margin", a.margin), ("--threshold", a.threshold)] {
        if let Some(v) = v {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::usage(format!(
                    "invalid value '{v}' for {flag}: must be a percentage >= 0"
                )));
            }
        }
    }
    if a.timeout == Some(0) {
        return Err(Error::usage(
            "invalid value '0' for -T: an acceptance run always bounds its waits",
        ));
    }
    if a.maxbytes == Some(0) {
        return Err(Error::usage(
            "invalid value '0' for -e: must be at least 1 byte",
        ));
    }
    // Checked here, before anything runs, as a benchmark's own flags are.
    let base = stage::base(a.stage, a.redact, Collective::AllReduce)
        .map_err(|e| Error::usage(format!("accept: {e}")))?;
    Ok(AcceptConfig {
        profile: a.profile,
        out: a.out,
        force: a.force,
        make_profile: a.make_profile,
        name: a.name.unwrap_or_else(|| "local".into()),
        margin_pct: a.margin.unwrap_or(10.0),
        baseline: a.baseline,
        threshold_pct: a.threshold,
        list_profiles: a.list_profiles,
        flags: StageFlags {
            base,
            timeout_s: a.timeout,
            perf_max_bytes: a.maxbytes,
        },
        redact: a.redact,
        locate: a.locate,
    })
}
