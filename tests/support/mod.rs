//! Shared helpers of the integration tests.

pub mod bin;
pub mod fake_nccl;
pub mod fault;
pub mod golden;
pub mod json_v3;
pub mod mpi;
pub mod nccl_json;
pub mod run;
