//! Facts whose line does not name its owner, held until a later line does.
//!
//! * Channel lines (connections, ring orders, channel counts, `Connected all ...`) of a thread
//!   that has not logged `Init START` (NCCL 2.18.1 and older print only `Init COMPLETE`, at
//!   the end of init, on the initialising thread) belong to the communicator that thread names
//!   next: its `Init COMPLETE`, or a COLL line. Lines no later line claims go to the process's
//!   only communicator, or are counted as a parse warning; they never make a communicator up.
//! * The bare `NCCL version` line (up to 2.21, printed by the process holding rank 0, without
//!   a prefix) belongs to the process that logs rank 0's Init line next in the same file
//!   (else the last one before it, else the file's only host); otherwise it stays a version of
//!   the log with no host.

use super::summary::{CommFacts, Evidence};
use rustc_hash::FxHashMap as FxMap;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Most rank-0 Init lines and per-process communicators remembered per file: enough for the
/// versions and leftovers they resolve, bounded however many communicators a log makes.
const REMEMBERED: usize = 4096;

/// A thread's channel facts waiting for their communicator.
#[derive(Debug, Default)]
pub struct Pending {
    /// Highest channel count implied.
    pub channels: u32,
    /// `Connected all ...` lines.
    pub connected: BTreeMap<String, Evidence>,
    /// Lines held.
    pub lines: u64,
    /// The first of them.
    pub first_line: u64,
}

impl Pending {
    /// Adds these facts to the communicator they turned out to belong to.
    pub fn fold_into(self, comm: &mut CommFacts) {
        comm.channels = comm.channels.max(self.channels);
        for (text, ev) in self.connected {
            comm.connected.entry(text).or_insert(ev);
        }
    }
}

/// Thread key: (interned host address, pid, tid).
pub type Thread = (usize, u32, u32);

/// What one file's lines left unowned so far.
#[derive(Default)]
pub struct Owners {
    /// Per thread, its channel facts with the thread's host.
    pub pending: FxMap<Thread, (Arc<str>, Pending)>,
    /// Per process (host address, pid): the communicator pointers its Init lines named.
    proc_comms: FxMap<(usize, u32), Vec<u64>>,
    /// (line, host, pid) of rank-0 Init lines, in file order.
    rank0: Vec<(u64, Arc<str>, u32)>,
    /// Bare version lines: (version text, the line).
    pub bare: Vec<(String, Evidence)>,
}

impl Owners {
    /// Holds a channel fact of `thread` until a line names its communicator.
    pub fn hold(&mut self, thread: Thread, host: &Arc<str>, line: u64) -> &mut Pending {
        let (_, p) = self
            .pending
            .entry(thread)
            .or_insert_with(|| (host.clone(), Pending::default()));
        if p.lines == 0 {
            p.first_line = line;
        }
        p.lines += 1;
        p
    }

    /// The facts `thread` holds, now that one of its lines names a communicator.
    pub fn claim(&mut self, thread: Thread) -> Option<Pending> {
        if self.pending.is_empty() {
            return None;
        }
        self.pending.remove(&thread).map(|(_, p)| p)
    }

    /// Notes an Init line: its process's communicator, and where rank 0 lives.
    pub fn init(
        &mut self,
        process: (usize, u32),
        host: &Arc<str>,
        comm: u64,
        rank: u32,
        line: u64,
    ) {
        let comms = self.proc_comms.entry(process).or_default();
        if !comms.contains(&comm) && comms.len() < REMEMBERED {
            comms.push(comm);
        }
        if rank == 0 && self.rank0.len() < REMEMBERED {
            self.rank0.push((line, host.clone(), process.1));
        }
    }

    /// The process's communicator when its Init lines named exactly one.
    pub fn only_comm(&self, process: (usize, u32)) -> Option<u64> {
        match self.proc_comms.get(&process).map(Vec::as_slice) {
            Some([one]) => Some(*one),
            _ => None,
        }
    }

    /// The (host, pid) that printed a bare version line at `line`: the process of the next
    /// rank-0 Init line, else of the last one before it.
    pub fn version_owner(&self, line: u64) -> Option<(Arc<str>, u32)> {
        self.rank0
            .iter()
            .find(|(l, _, _)| *l >= line)
            .or_else(|| self.rank0.last())
            .map(|(_, h, p)| (h.clone(), *p))
    }
}
