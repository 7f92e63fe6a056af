//! The benchmark engine: the [`plan`] of a run, the [`runner`] that measures it on a
//! [`backend`] (host threads, NCCL on GPUs through [`cuda`]), its [`verify`]cation, NCCL's
//! decisions joined to the rows ([`tuning`]), the [`output`] sinks, the [`environment`]
//! record, and the [`job`] a launcher started (bootstrap, split, hang diagnosis, MPI).

pub mod backend;
pub mod cuda;
pub mod environment;
pub mod job;
pub mod observe;
pub mod output;
pub mod plan;
pub mod runner;
pub mod tuning;
pub mod verify;
