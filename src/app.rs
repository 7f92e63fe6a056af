//! The binary's top level: parse the command line, hand the command to its module under
//! [`crate::commands`], and turn the outcome into the process's exit status. Every error
//! becomes one `ncclbench: ...` line on stderr.

use crate::cli::{self, Command};
use crate::commands;
use crate::core::error::{exit, Error};
use std::io::Write;
use std::process::ExitCode;

/// Runs the program with the process's arguments.
pub fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let code = match cli::parse(&argv) {
        Ok(command) => dispatch(command),
        Err(e) => report_once(&e),
    };
    ExitCode::from(code)
}

/// Runs one parsed command; returns its exit status.
fn dispatch(command: Command) -> u8 {
    match command {
        Command::Help(text) | Command::Version(text) => {
            print!("{text}");
            exit::OK
        }
        Command::Run(cfg) => status(commands::bench::run(&cfg)),
        Command::Analyze(cfg) => status(commands::analyze::run(&cfg)),
        Command::Env {
            json,
            nccl_lib,
            redact,
        } => status(commands::env::run(json, nccl_lib.as_deref(), redact)),
        Command::Compare(cfg) => commands::compare::run(&cfg)
            .unwrap_or_else(|e| commands::compare::error_status(report(&e))),
        Command::Logs(cfg) => status(commands::logs::run(&cfg)),
        Command::Accept(cfg) => commands::accept::run(&cfg)
            .unwrap_or_else(|e| commands::accept::error_status(&e, report(&e))),
        Command::Locate(cfg) => status(commands::locate::run(&cfg)),
    }
}

/// A command's own status, or the one its error maps to.
fn status(outcome: Result<u8, Error>) -> u8 {
    outcome.unwrap_or_else(|e| report(&e))
}

/// A command-line error is the same on every process of a job: only the launcher's rank 0
/// prints it, every process exits with its status. The other ranks first give rank 0 time to
/// print: a launcher that sees one process fail kills the rest (mpirun aborts the job at the
/// first non-zero exit), which could otherwise take rank 0 down before its line is out. Once
/// rank 0 has failed, the launcher ends the wait; where it does not, the wait is bounded.
fn report_once(e: &Error) -> u8 {
    match crate::bench::job::launcher::detect().and_then(|l| l.rank) {
        Some(rank) if rank != 0 => {
            std::thread::sleep(crate::bench::job::launcher::OTHER_RANKS_WAIT);
            e.exit_code()
        }
        _ => report(e),
    }
}

/// Prints the error as one line and returns its exit status; a reader that went away (`| head`)
/// is not an error.
fn report(e: &Error) -> u8 {
    if let Error::Output(io) = e {
        if io.kind() == std::io::ErrorKind::BrokenPipe {
            // The reader went away: nothing left to say to it.
            return exit::OK;
        }
    }
    let _ = std::io::stdout().flush();
    eprintln!("ncclbench: {e}");
    e.exit_code()
}
