//! Shared helpers of the integration tests.

pub mod bin;
pub mod fake_nccl;
pub mod fault;
pub mod golden;
pub mod mpi;
pub mod run;
