//! The op counter behind the hang diagnosis: every backend collective and bootstrap step
//! enters and leaves it, so the sequence numbers agree across ranks; the out-of-band thread
//! reads a snapshot at any time (also while the main thread is stuck inside MPI).
//!
//! Three hidden test switches act here ([`crate::core::test_hooks`]: `test-hooks` builds only): `NCCLBENCH_TEST_STALL_RANK=r` stalls world rank r
//! before op `NCCLBENCH_TEST_STALL_OP` (default 10), `NCCLBENCH_TEST_DIE_RANK=r` kills it
//! with SIGKILL there (`NCCLBENCH_TEST_DIE_OP`, default 10), and `NCCLBENCH_TEST_SLOW_RANK=r`
//! holds it for `NCCLBENCH_TEST_SLOW_MS` (default 300) after op `NCCLBENCH_TEST_SLOW_OP`
//! (default 10) completes: its data is already with its peers, so that iteration is long on
//! rank r alone (a straggler in `-I` per-process times), not on every rank.

use crate::bench::job::hang::Progress;
use crate::core::test_hooks;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// A rank's progress, shared with the out-of-band thread.
pub struct Tracker {
    state: Mutex<Progress>,
    stall_at: Option<u64>,
    die_at: Option<u64>,
    slow_at: Option<u64>,
}

fn switch(rank: usize, rank_var: &str, op_var: &str) -> Option<u64> {
    let r: usize = test_hooks::var(rank_var)?.trim().parse().ok()?;
    let op = test_hooks::var(op_var)
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(10);
    (r == rank).then_some(op)
}

impl Tracker {
    /// The tracker of world rank `rank`.
    pub fn new(rank: usize, host: String) -> Tracker {
        Tracker {
            state: Mutex::new(Progress {
                rank,
                host,
                pid: std::process::id(),
                phase: "starting".into(),
                ..Progress::default()
            }),
            stall_at: switch(rank, "NCCLBENCH_TEST_STALL_RANK", "NCCLBENCH_TEST_STALL_OP"),
            die_at: switch(rank, "NCCLBENCH_TEST_DIE_RANK", "NCCLBENCH_TEST_DIE_OP"),
            slow_at: switch(rank, "NCCLBENCH_TEST_SLOW_RANK", "NCCLBENCH_TEST_SLOW_OP"),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Progress> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the start of the next op; returns its sequence number.
    pub fn enter(&self, what: &str, bytes: u64, phase: &str) -> u64 {
        let seq = self.lock().completed + 1;
        if self.die_at == Some(seq) {
            // SAFETY: sending a signal to this very process.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        if self.stall_at == Some(seq) {
            self.lock().phase = "host (stalled by NCCLBENCH_TEST_STALL_RANK)".into();
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        let mut s = self.lock();
        s.inside = Some(seq);
        s.what = what.to_string();
        s.bytes = bytes;
        s.phase = format!("waiting in {phase}");
        seq
    }

    /// Marks op `seq` complete.
    pub fn done(&self, seq: u64) {
        if self.slow_at == Some(seq) {
            let ms = test_hooks::var("NCCLBENCH_TEST_SLOW_MS")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(300);
            std::thread::sleep(Duration::from_millis(ms));
        }
        let mut s = self.lock();
        s.completed = seq;
        s.inside = None;
        s.phase = "host".into();
    }

    /// The current progress.
    pub fn snapshot(&self) -> Progress {
        self.lock().clone()
    }
}
