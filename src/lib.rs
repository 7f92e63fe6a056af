//! ncclbench: collective-communication benchmarks in the nccl-tests mould, with exact
//! verification and analysis.
//!
//! Data flows one way: [`cli`] -> [`config`] -> [`plan`] -> [`runner`] -> [`backend`] ->
//! [`result`] rows -> [`output`] sinks.

#![warn(missing_docs)]

pub mod accept;
pub mod analysis;
pub mod app;
pub mod backend;
pub mod bootstrap;
pub mod cli;
pub mod collective;
pub mod compare;
pub mod config;
pub mod cuda;
pub mod dtype;
pub mod environment;
pub mod error;
pub mod launcher;
pub mod logs;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod multi;
pub mod numeric;
pub mod op;
pub mod output;
pub mod plan;
pub mod redact;
pub mod result;
pub mod runner;
pub mod stats;
pub mod tuning;
pub mod verify;
