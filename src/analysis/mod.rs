//! `ncclbench analyze`: read result files (ours and nccl-tests'), fit each curve's
//! alpha-beta regimes, and report the numbers an engineer reasons with.
//!
//! Data flows one way: [`read`] (files -> [`input::InputRow`]s) -> [`build`] with the pure
//! [`fit`] (rows -> [`curve::CurveReport`]s) -> [`report`] and [`plot`] (reports -> text, markdown, HTML,
//! JSON, SVG/PNG).

// Analysis reads untrusted files offline: no `unsafe` (the FFI edges live elsewhere).
#![forbid(unsafe_code)]

pub mod build;
pub mod compare;
pub mod curve;
pub mod fit;
pub mod input;
pub mod inspector;
pub mod log_findings;
pub(crate) mod out_dir;
pub mod plot;
pub mod production;
pub mod read;
pub mod report;
#[cfg(test)]
pub(crate) mod testdata;
pub(crate) mod units;
