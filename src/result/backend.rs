//! Which backend runs the collectives: the one type the configuration asks with, the backends
//! report themselves as, and the outputs print the name of.

use std::fmt;

/// A backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// NCCL on GPUs.
    Nccl,
    /// Threads of this process, host memory.
    Host,
    /// One rank per MPI process, host memory, MPI collectives (cargo feature `mpi`).
    Mpi,
}

impl BackendKind {
    /// The name `--backend` takes and every output prints.
    pub const fn name(self) -> &'static str {
        match self {
            BackendKind::Nccl => "nccl",
            BackendKind::Host => "host",
            BackendKind::Mpi => "mpi",
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
