//! A communicator's rendezvous as this process knows it ([`Rdv`]): which process holds each
//! rank (from the member files, [`crate::rendezvous`]), and telling the other processes that
//! a rank left or that the communicator's init was refused ([`crate::link`] messages).

use std::path::PathBuf;

use crate::link;
use crate::rendezvous as rv;
use crate::wire::{Body, Msg, WireKey};

/// A communicator's rendezvous and what this process learnt from it.
#[derive(Debug)]
pub struct Rdv {
    pub dir: PathBuf,
    /// What messages call the communicator (a hash of `dir`).
    pub tag: u64,
    /// Each rank's process once known (from its member file, or its join here).
    pub(crate) pids: Vec<Option<u32>>,
    /// Every member file was read (and the departures and failure that came before).
    pub(crate) caught_up: bool,
}

impl Rdv {
    pub fn new(dir: PathBuf, nranks: usize) -> Rdv {
        Rdv {
            tag: crate::comm::fnv(dir.as_os_str().as_encoded_bytes()),
            dir,
            pids: vec![None; nranks],
            caught_up: false,
        }
    }

    /// Rank joins here: this process listens, then writes the member file.
    pub fn join(&mut self, rank: usize, device: usize) -> std::io::Result<()> {
        link::listen()?;
        rv::join(&self.dir, rank, device)?;
        self.pids[rank] = Some(std::process::id());
        Ok(())
    }

    /// Another process's rank on this host and `device`, other than `rank`.
    pub fn same_gpu_elsewhere(&self, rank: usize, device: usize) -> Option<usize> {
        let (me, host) = (std::process::id(), rv::host_hash());
        (0..self.pids.len()).filter(|&r| r != rank).find(|&r| {
            rv::member(&self.dir, r)
                .is_some_and(|m| m.pid != me && m.host == host && m.device == device)
        })
    }

    /// The other processes that have joined so far.
    fn other_pids(&self) -> Vec<u32> {
        let me = std::process::id();
        let mut pids: Vec<u32> = (0..self.pids.len())
            .filter_map(|r| self.pids[r].or_else(|| rv::member(&self.dir, r).map(|m| m.pid)))
            .filter(|&p| p != me)
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// Tells every rank the communicator failed (a refused init): a file for ranks still to
    /// come, written first, and a message to every process already there.
    pub fn fail(&self, message: &str) {
        let _ = rv::put(&self.dir, "fail", &[message.as_bytes()]);
        for pid in self.other_pids() {
            let body = Body::Fail(message.to_string());
            link::send(pid, self.msg(WireKey::None, 0, body));
        }
    }

    /// Rank left (destroyed or aborted): its file, and a message to every other process.
    pub fn depart(&self, rank: usize, nranks: usize) {
        for pid in self.other_pids() {
            link::send(pid, self.msg(WireKey::None, rank, Body::Gone));
        }
        rv::leave(&self.dir, rank, nranks);
    }

    fn msg(&self, key: WireKey, rank: usize, body: Body) -> Msg {
        Msg {
            dir: self.tag,
            key,
            rank,
            body,
        }
    }

    /// `Some(true)` once every rank is known and one lives in another process; `None` while a
    /// rank has not joined anywhere.
    pub(crate) fn spans(&mut self) -> Option<bool> {
        for r in 0..self.pids.len() {
            if self.pids[r].is_none() {
                self.pids[r] = Some(rv::member(&self.dir, r)?.pid);
            }
        }
        let me = std::process::id();
        Some(self.pids.iter().any(|&p| p != Some(me)))
    }

    /// Whether another process holds a rank, without reading the rendezvous: `Some(false)`
    /// when every rank is known to be here, `None` while some rank is unknown.
    pub fn spans_known(&self) -> Option<bool> {
        let me = std::process::id();
        if self.pids.iter().any(|&p| p.is_some_and(|p| p != me)) {
            return Some(true);
        }
        self.pids.iter().all(Option::is_some).then_some(false)
    }

    pub(crate) fn local(&self, rank: usize) -> bool {
        self.pids[rank] == Some(std::process::id())
    }
}
