//! Hidden test switches of the host backend ([`crate::core::test_hooks`]: `test-hooks` builds
//! only), read once per backend from the environment (the
//! MPI backend has its own, see `src/mpi/track.rs`). They let end-to-end tests of whole
//! commands (`accept`) produce a hang and wrong data without a GPU:
//!
//! * `NCCLBENCH_TEST_HOST_STALL_OP=N`: launch N (0-based, counted per backend) waits behind a
//!   closed gate on every rank, so the next wait runs into `-T`. The gate opens when the
//!   backend is dropped (or after an hour).
//! * `NCCLBENCH_TEST_HOST_CORRUPT_OP=N`: after launch N, one byte of rank 0's receive buffer
//!   is flipped when it is next inspected, as if the device had written a wrong value there.

use super::gate::Gate;
use crate::bench::backend::{BufPtr, Call};
use crate::core::test_hooks;
use std::sync::Arc;
use std::time::Duration;

/// The switches and their progress.
#[derive(Default)]
pub(super) struct Switches {
    stall_at: Option<u64>,
    corrupt_at: Option<u64>,
    launches: u64,
    /// The gate a stalled launch waits behind.
    pub(super) stall: Option<Arc<Gate>>,
    /// Rank 0's output of the corrupted launch, until it is inspected.
    corrupt: Option<BufPtr>,
}

fn number(name: &str) -> Option<u64> {
    test_hooks::var(name)?.trim().parse().ok()
}

impl Switches {
    /// The switches the environment sets.
    pub(super) fn from_env() -> Switches {
        Switches {
            stall_at: number("NCCLBENCH_TEST_HOST_STALL_OP"),
            corrupt_at: number("NCCLBENCH_TEST_HOST_CORRUPT_OP"),
            ..Switches::default()
        }
    }

    /// Counts a launch; returns the gate to queue in front of it when it is the stalled one.
    pub(super) fn launched(&mut self, call: &Call) -> Option<Arc<Gate>> {
        let n = self.launches;
        self.launches += 1;
        if self.corrupt_at == Some(n) && call.count > 0 {
            self.corrupt = call.ranks.first().map(|r| r.recv);
        }
        (self.stall_at == Some(n)).then(|| {
            let gate = Arc::new(Gate::new(Duration::from_secs(3600)));
            self.stall = Some(gate.clone());
            gate
        })
    }

    /// The offset of the byte to flip, when rank `local`'s `buf` bytes at `offset..+len` hold
    /// the corrupted output (once).
    pub(super) fn corrupt_in(
        &mut self,
        local: usize,
        buf: crate::bench::backend::Buf,
        offset: usize,
        len: usize,
    ) -> Option<usize> {
        let at = self.corrupt?;
        let hit = local == 0 && at.buf == buf && (offset..offset + len).contains(&at.offset);
        hit.then(|| {
            self.corrupt = None;
            at.offset
        })
    }
}
