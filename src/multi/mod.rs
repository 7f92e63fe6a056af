//! Multi-process runs: the pieces that do not need MPI itself (so the default build has them
//! too and tests them): the split colour of `NCCL_TESTS_SPLIT*` ([`split`]), the host identity
//! behind local ranks ([`host`]), the launcher sanity check ([`sanity`]), and the hang verdict
//! of `-T` ([`hang`]). The MPI bootstrap and backend live in `crate::mpi` (feature `mpi`).

pub mod hang;
pub mod host;
pub mod join;
pub mod sanity;
pub mod split;
