//! The command line: nccl-tests-compatible flags in, a validated [`RunConfig`] (or help or
//! version text) out. Nothing past this module sees clap.
//!
//! `ncclbench <collective> [flags]`, `ncclbench <collective>_perf [flags]` and
//! `<collective>_perf [flags]` (the binary called by an nccl-tests name, through a copy or a
//! symlink) are the same command. A mistyped command gets the nearest one named (`suggest`).
//!
//! Unlike nccl-tests, a bad command line is always an error with exit status 2 and one line on
//! stderr: unknown options, stray arguments, malformed numbers, unknown `-o`/`-d` names,
//! out-of-range values, and combinations nccl-tests only warns about or loops forever on.

mod accept;
mod args;
mod compare;
mod locate;
mod stage;
mod suggest;
mod validate;

#[cfg(test)]
mod tests;

use crate::config::{AnalyzeConfig, ReportFormat, RunConfig};
use crate::core::collective::Collective;
use crate::core::error::Error;
use args::{AnalyzeArgs, BenchArgs, Cli, FormatArg, Request};
use clap::error::ErrorKind;
use clap::{Args as _, CommandFactory, FromArgMatches};
use std::ffi::OsString;
use std::path::Path;

/// What the command line asks for.
// One value per process: the size difference between variants costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Run a benchmark.
    Run(RunConfig),
    /// Print this text to stdout and exit 0 (`-h`, `--help`).
    Help(String),
    /// Print this text to stdout and exit 0 (`--version`).
    Version(String),
    /// Analyse result files.
    Analyze(AnalyzeConfig),
    /// Report the environment a run would use.
    Env {
        /// `--json`.
        json: bool,
        /// `--nccl-lib`.
        nccl_lib: Option<std::path::PathBuf>,
        /// `--redact`.
        redact: bool,
    },
    /// Compare two sets of result files.
    Compare(crate::config::compare::CompareConfig),
    /// Read NCCL debug logs.
    Logs(crate::config::logs::LogsConfig),
    /// Run the acceptance suite (or list or make profiles).
    Accept(crate::config::accept::AcceptConfig),
    /// Find the slow node, GPU or link of the job.
    Locate(crate::config::locate::LocateConfig),
}

/// Parses a whole command line; `argv[0]` is the program name.
///
/// When the program's file name (directories and a `.exe` stripped) is `<collective>_perf`,
/// the arguments are that collective's flags, as `ncclbench <collective> ...` would take them.
/// Errors are [`Error::Usage`] with a one-line message.
pub fn parse(argv: &[OsString]) -> Result<Command, Error> {
    let given: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(program) = argv.first() {
        suggest::check_program(program)?;
    }
    let parsed = match argv.first().and_then(perf_collective) {
        Some(collective) => {
            parse_as_perf(collective, argv).map(|a| Request::Bench((collective, a)))
        }
        None => {
            let cmd = command();
            let mut names: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).collect();
            names.push("help");
            match suggest::check_subcommand(argv, &names)? {
                Some(rewritten) => parse_tool_or_collective(&rewritten),
                None => parse_tool_or_collective(argv),
            }
        }
    };
    match parsed {
        Ok(Request::Bench((collective, bench))) => {
            validate::run_config(collective, bench, given).map(Command::Run)
        }
        Ok(Request::Analyze(a)) => analyze_config(a).map(Command::Analyze),
        Ok(Request::Env(a)) => Ok(Command::Env {
            json: a.json,
            nccl_lib: a.nccl_lib,
            redact: a.redact,
        }),
        Ok(Request::Compare(a)) => compare::config(a).map(Command::Compare),
        Ok(Request::Logs(a)) => Ok(Command::Logs(crate::config::logs::LogsConfig {
            files: a.files,
            json: a.json,
            redact: a.redact,
        })),
        Ok(Request::Accept(a)) => accept::config(a).map(Command::Accept),
        Ok(Request::Locate(a)) => locate::config(a).map(Command::Locate),
        Err(e) => from_clap(e),
    }
}

/// Checks `analyze`'s flags.
fn analyze_config(a: AnalyzeArgs) -> Result<AnalyzeConfig, Error> {
    if let Some(p) = a.peak_gbs {
        if !(p.is_finite() && p > 0.0) {
            return Err(Error::usage(format!(
                "invalid value '{p}' for --peak-gbs: must be a positive bandwidth in GB/s"
            )));
        }
    }
    let format = match a.format {
        FormatArg::Text => ReportFormat::Text,
        FormatArg::Markdown => ReportFormat::Markdown,
        FormatArg::Json => ReportFormat::Json,
    };
    Ok(AnalyzeConfig {
        files: a.files,
        out: a.out,
        peak_gbs: a.peak_gbs,
        format,
        nccl_logs: a.nccl_log,
        pool_setups: a.pool_setups,
        baseline: a.baseline,
    })
}

/// The whole `ncclbench` command: the collectives' subcommands first (from their specs, in the
/// nccl-tests binary order), then the tools.
pub(crate) fn command() -> clap::Command {
    let mut cmd = Cli::command();
    let tools: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    cmd = cmd.subcommands(Collective::ALL.map(collective_command));
    for (i, name) in tools.iter().enumerate() {
        cmd = cmd.mut_subcommand(name, |s| s.display_order(Collective::ALL.len() + i));
    }
    cmd
}

/// One collective's subcommand: its name and help line from the spec, nccl-tests' flags.
fn collective_command(collective: Collective) -> clap::Command {
    let order = Collective::ALL
        .iter()
        .position(|&c| c == collective)
        .unwrap_or(0);
    // The args' own doc would become the about text: the spec's line replaces it.
    BenchArgs::augment_args(clap::Command::new(collective.name()))
        .about(collective.spec().about)
        .long_about(None)
        .display_order(order)
}

/// Parses `ncclbench <subcommand> ...`: a collective's flags, or a tool's.
fn parse_tool_or_collective(argv: &[OsString]) -> Result<Request, clap::Error> {
    let matches = command().try_get_matches_from(argv)?;
    if let Some((name, sub)) = matches.subcommand() {
        if let Some(collective) = Collective::parse(name).filter(|c| c.name() == name) {
            return BenchArgs::from_arg_matches(sub).map(|a| Request::Bench((collective, a)));
        }
    }
    Cli::from_arg_matches(&matches).map(|cli| cli.command.into_request())
}

/// The collective a program name stands for: `/usr/bin/all_reduce_perf`, `alltoall_perf.exe`.
fn perf_collective(program: &OsString) -> Option<Collective> {
    let name = Path::new(program).file_name()?.to_str()?;
    let name = name.strip_suffix(".exe").unwrap_or(name);
    let base = name.strip_suffix("_perf")?;
    Collective::ALL.into_iter().find(|c| c.name() == base)
}

/// Parses `argv` with the collective's subcommand as the whole program, so that help and
/// errors show `all_reduce_perf`, not `ncclbench all_reduce`.
fn parse_as_perf(collective: Collective, argv: &[OsString]) -> Result<BenchArgs, clap::Error> {
    let perf = collective.perf_name();
    let command = collective_command(collective)
        .bin_name(&perf)
        .display_name(perf);
    let matches = command.try_get_matches_from(argv)?;
    BenchArgs::from_arg_matches(&matches)
}

/// Help and version requests become their text; every other clap error one usage line.
fn from_clap(err: clap::Error) -> Result<Command, Error> {
    match err.kind() {
        ErrorKind::DisplayHelp => Ok(Command::Help(err.render().to_string())),
        ErrorKind::DisplayVersion => Ok(Command::Version(err.render().to_string())),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            let names: Vec<&str> = Collective::ALL.iter().map(|c| c.name()).collect();
            Err(Error::Usage(format!(
                "no collective given: ncclbench <COLLECTIVE> [flags], with <COLLECTIVE> one of {} \
                 (see --help)",
                names.join(", ")
            )))
        }
        _ => Err(Error::Usage(one_line(&err.render().to_string()))),
    }
}

/// Reduces clap's multi-line error to its first line (without the `error: ` prefix), keeps a
/// `[possible values: ...]` list if clap gave one, and points at `--help`.
fn one_line(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("invalid command line");
    let mut msg = first.strip_prefix("error: ").unwrap_or(first).to_string();
    if msg.ends_with(':') {
        // "the following required arguments were not provided:" names them on the next line.
        if let Some(next) = lines.next() {
            msg.push(' ');
            msg.push_str(next);
        }
    }
    if let Some(values) = lines.find(|l| l.starts_with("[possible values:")) {
        msg.push(' ');
        msg.push_str(values);
    }
    msg.push_str(" (see --help)");
    msg
}
