//! Shared helpers of the integration tests.
#![allow(dead_code)]

pub mod bin;
pub mod fake_nccl;
pub mod fault;
pub mod mpi;
pub mod run;
