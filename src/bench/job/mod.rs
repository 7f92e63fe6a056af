//! The job this process belongs to: which launcher started it ([`launcher`], [`join::sanity`]),
//! how it joins ([`join`]) and exchanges small values with the other processes
//! ([`bootstrap`]), a failure of some processes said once ([`failure`]), the split colour of `NCCL_TESTS_SPLIT*` ([`split`]), the host identity
//! behind local ranks ([`host`]), and the `-T` hang verdict ([`hang`]). With the cargo feature
//! `mpi`, `mpi` joins an MPI job and runs `--backend mpi` and the hang side channel on it.
//!
//! [`join`] sits in a folder of its own because it is the one module that uses `mpi`, while
//! `mpi` uses the shared pieces here: so no two folders import each other.

pub mod bootstrap;
pub mod coord;
pub mod failure;
pub mod hang;
pub mod host;
pub mod join;
pub mod launcher;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod split;
