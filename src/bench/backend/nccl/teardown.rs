//! Tearing the NCCL backend down in nccl-tests' order: deregister the buffers, finalize and
//! destroy the communicators, and only then free the buffers; on a context poisoned by a
//! sticky CUDA error (a kernel fault) the communicators are aborted instead. NCCL may use a communicator's
//! buffers (registrations, graph-registered memory) until the communicator is gone, so
//! freeing them first could leave it to deregister or touch freed memory at destroy.

use super::error::nccl_err;
use super::NcclBackend;
use crate::core::error::Error;

impl NcclBackend {
    /// Tears down once (later calls do nothing). A failure does not stop the later steps:
    /// every communicator is destroyed and every buffer freed; the first failure is returned.
    pub(super) fn shutdown(&mut self) -> Result<(), Error> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        if !self.aborted && self.poisoned() {
            // Finalizing flushes NCCL's work through CUDA calls that fail (or hang) on a
            // poisoned context; only an abort tears the communicators down cleanly.
            self.abort();
        }
        self.gates.free();
        self.events.clear();
        self.graphs.clear();
        let result = if self.aborted {
            // Aborted communicators took their registrations with them.
            for r in &mut self.ranks {
                r.registrations.clear();
            }
            Ok(())
        } else {
            let dereg = self.deregister();
            dereg.and(self.destroy_comms())
        };
        for r in &mut self.ranks {
            r.send = None;
            r.recv = None;
        }
        result
    }

    /// Whether a local rank's context holds a sticky CUDA error (a kernel fault), whichever
    /// call met it first.
    fn poisoned(&self) -> bool {
        self.ranks
            .iter()
            .any(|r| r.stream.is_complete().is_err_and(|e| e.is_sticky()))
    }

    /// `ncclCommFinalize` (where the library has it) and `ncclCommDestroy` of every live
    /// communicator; each is destroyed even after a failure.
    fn destroy_comms(&mut self) -> Result<(), Error> {
        let mut first = self.finalize_comms();
        let destroy = self.nccl.api().ncclCommDestroy;
        for r in &mut self.ranks {
            if r.comm.is_null() {
                continue;
            }
            let _ = r.context.set_current();
            // SAFETY: a live communicator, destroyed once.
            let code = unsafe { destroy(r.comm) };
            r.comm = std::ptr::null_mut();
            let destroyed = self.nccl.check("ncclCommDestroy", code).map_err(nccl_err);
            first = first.and(destroyed);
        }
        first
    }

    /// `ncclCommFinalize` of every communicator in one group (so a process driving several
    /// ranks does not deadlock), where the library has it.
    fn finalize_comms(&self) -> Result<(), Error> {
        let Some(finalize) = self.caps.finalize else {
            return Ok(());
        };
        let api = self.nccl.api();
        // SAFETY: no arguments.
        self.nccl
            .check("ncclGroupStart", unsafe { (api.ncclGroupStart)() })
            .map_err(nccl_err)?;
        let mut result = Ok(());
        for r in self.ranks.iter().filter(|r| !r.comm.is_null()) {
            let _ = r.context.set_current();
            // SAFETY: a live communicator, finalized once.
            let code = unsafe { finalize(r.comm) };
            if let Err(e) = self.nccl.check("ncclCommFinalize", code) {
                result = Err(nccl_err(e));
                break;
            }
        }
        // SAFETY: closes the group above.
        let end = self
            .nccl
            .check("ncclGroupEnd", unsafe { (api.ncclGroupEnd)() })
            .map_err(nccl_err);
        result.and(end)
    }
}
