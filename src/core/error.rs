//! Typed errors of the library and the exit status each maps to.
//!
//! Exit statuses follow nccl-tests where it has one (3 NCCL failure, 4 timeout, 5 not enough
//! GPUs, 7 wrong data or bandwidth below `NCCL_TESTS_MIN_BW`); bad arguments exit 2 (nccl-tests
//! exits 0 or 255 there, see the README).

use std::path::PathBuf;

/// Everything that can stop a run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad command line or input; the message is the whole explanation.
    #[error("{0}")]
    Usage(String),
    /// A wait exceeded the `-T` deadline.
    #[error("Test timeout ({seconds}s) while waiting for {what}")]
    Timeout {
        /// The `-T` value.
        seconds: u64,
        /// What was being waited for.
        what: String,
    },
    /// The backend (NCCL, MPI, host threads) failed.
    #[error("{0}")]
    Backend(String),
    /// A CUDA driver call failed, or there is no driver (nccl-tests' testCudaError).
    #[error("{0}")]
    Cuda(String),
    /// Fewer devices than ranks requested.
    #[error("{0}")]
    NotEnoughDevices(String),
    /// A file could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// SIGINT or SIGTERM asked a command that catches them to stop (`accept`).
    #[error("interrupted by {0}: stopped before the next measurement")]
    Interrupted(&'static str),
    /// Writing to an output stream failed (stdout closed, disk full).
    #[error("writing output: {0}")]
    Output(#[from] std::io::Error),
}

/// Process exit statuses.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// Internal or I/O failure.
    pub const FAILURE: u8 = 1;
    /// Bad arguments or input.
    pub const USAGE: u8 = 2;
    /// A CUDA failure (nccl-tests' testCudaError shares the value with usage errors).
    pub const CUDA: u8 = 2;
    /// NCCL (or other backend) failure.
    pub const BACKEND: u8 = 3;
    /// `-T` timeout.
    pub const TIMEOUT: u8 = 4;
    /// Not enough GPUs.
    pub const DEVICES: u8 = 5;
    /// Wrong data, or average bus bandwidth below `NCCL_TESTS_MIN_BW`.
    pub const RESULTS: u8 = 7;
    /// Stopped by SIGINT (128 + 2, as a shell reports it).
    pub const INTERRUPTED: u8 = 130;
}

impl Error {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => exit::USAGE,
            Error::Timeout { .. } => exit::TIMEOUT,
            Error::Backend(_) => exit::BACKEND,
            Error::Cuda(_) => exit::CUDA,
            Error::NotEnoughDevices(_) => exit::DEVICES,
            Error::Io { .. } | Error::Output(_) => exit::FAILURE,
            Error::Interrupted(_) => exit::INTERRUPTED,
        }
    }

    /// Shorthand for a usage error.
    pub fn usage(msg: impl Into<String>) -> Error {
        Error::Usage(msg.into())
    }
}
