//! ncclbench: collective-communication benchmarks in the nccl-tests mould, with exact
//! verification and analysis.
//!
//! Layers, top to bottom; a module imports only from the layers below its own (the test
//! `layering` in tests/ holds the table and enforces it):
//!
//! * [`app`]: parse, dispatch, exit status.
//! * [`commands`]: one module per subcommand.
//! * [`cli`]: clap types in, validated [`config`] out.
//! * engines: [`accept`] (profiles, checks, verdict) over [`mod@bench`] (plan, runner, verify,
//!   tuning, output, environment, job, backends) and [`analysis`] (readers, fit, plot, report,
//!   compare), over [`logs`] (NCCL debug logs).
//! * [`config`]: every validated configuration, plain data the engines read.
//! * [`result`]: plain data: rows, run metadata, devices, run environment, tuning annotations.
//! * [`core`]: collective specs, dtype, op, numeric element code, error, units, stats, host
//!   facts, redaction.

#![warn(missing_docs)]

pub mod accept;
pub mod analysis;
pub mod app;
pub mod bench;
pub mod cli;
pub mod commands;
pub mod config;
pub mod core;
pub mod locate;
pub mod logs;
pub mod result;
