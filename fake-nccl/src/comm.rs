//! Communicators: a [`Communicator`] per unique id (its ranks, hooks and log hash) and a
//! [`Comm`] per rank handle (device, owner thread, sequence counters, PreMulSum ops,
//! registrations, asynchronous error); NCCL's refusal of two ranks on one GPU is in
//! [`crate::gpu_sharing`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::ThreadId;

pub use crate::gpu_sharing::{set_multi_rank_gpu_override, MULTI_RANK_GPU_ENV};
use crate::hooks::Hooks;
use crate::state::*;

/// Bytes in an `ncclUniqueId`.
pub const UID_BYTES: usize = 128;
/// First bytes of every unique id this library makes.
pub const UID_MAGIC: &[u8; 8] = b"FAKENCCL";

/// Where a PreMulSum scalar lives.
#[derive(Debug, Clone, Copy)]
pub enum Scalar {
    /// `ncclScalarHostImmediate`: the value, copied at creation (element bytes).
    Host([u8; 8]),
    /// `ncclScalarDevice`: read from device memory when the op runs.
    Device(u64),
}

/// One `ncclRedOpCreatePreMulSum` operator.
#[derive(Debug, Clone, Copy)]
pub struct PreMul {
    pub dtype: u32,
    pub scalar: Scalar,
}

/// All ranks of one unique id.
#[derive(Debug)]
pub struct Communicator {
    pub uid: [u8; UID_BYTES],
    pub nranks: usize,
    /// Comm id of each rank once it joined.
    pub members: Vec<Option<u64>>,
    /// Ranks destroyed or aborted: their peers' pending ops can never match.
    pub gone: Vec<bool>,
    pub hooks: Hooks,
    /// The `commId` NCCL logs print (a hash of the id).
    pub hash: u64,
    /// Where ranks in other processes meet this one's (ids from `ncclGetUniqueId` and splits
    /// of their communicators).
    pub rdv: Option<crate::xproc::Rdv>,
}

/// One rank's communicator handle.
#[derive(Debug)]
pub struct Comm {
    pub communicator: u64,
    pub rank: usize,
    pub nranks: usize,
    pub device: usize,
    pub owner: ThreadId,
    /// `CTAPolicy` from the config (`None`: no config or unset).
    pub cta_policy: Option<i32>,
    /// Ops placed on streams so far (the hooks' op index).
    pub op_count: u64,
    pub coll_seq: u64,
    pub send_seq: HashMap<usize, u64>,
    pub recv_seq: HashMap<usize, u64>,
    pub async_error: NcclResult,
    pub premulsum: Vec<Option<PreMul>>,
    pub registered: usize,
    pub windows: usize,
    pub finalized: bool,
    /// Communication calls made (the `opCount` of COLL log lines).
    pub calls: u64,
    /// `ncclCommSplit` calls made on this handle (matches a split across the ranks).
    pub splits: u64,
}

/// Where a unique id's rendezvous path starts (NUL-terminated; empty for a process-local id).
const UID_PATH: usize = 20;

/// A new process-local unique id: magic, pid, a process-wide counter.
pub fn new_unique_id() -> [u8; UID_BYTES] {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut id = [0u8; UID_BYTES];
    id[..8].copy_from_slice(UID_MAGIC);
    id[8..12].copy_from_slice(&std::process::id().to_le_bytes());
    id[12..20].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    id
}

/// A unique id naming the rendezvous `dir` (which ranks in other processes find), or
/// ncclInternalError when the path does not fit.
pub fn unique_id_at(dir: &std::path::Path) -> Result<[u8; UID_BYTES], NcclError> {
    let mut id = new_unique_id();
    let path = dir.as_os_str().as_encoded_bytes();
    if path.len() >= UID_BYTES - UID_PATH || path.contains(&0) {
        return nccl_err(
            NCCL_INTERNAL_ERROR,
            format!(
                "fake-nccl: rendezvous path {} does not fit in an ncclUniqueId (set \
                 FAKE_NCCL_RENDEZVOUS_DIR to a shorter directory)",
                dir.display()
            ),
        );
    }
    id[UID_PATH..UID_PATH + path.len()].copy_from_slice(path);
    Ok(id)
}

/// The rendezvous an id names, if any.
pub fn rendezvous_of(uid: &[u8; UID_BYTES]) -> Option<std::path::PathBuf> {
    let tail = &uid[UID_PATH..];
    let len = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
    let path = std::str::from_utf8(&tail[..len]).ok()?;
    (uid[..8] == *UID_MAGIC && !path.is_empty()).then(|| path.into())
}

pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

impl State {
    /// Rank `rank` of `nranks` joins the communicator of `uid` on `device`.
    pub fn join(
        &mut self,
        uid: [u8; UID_BYTES],
        nranks: i32,
        rank: i32,
        device: usize,
        cta_policy: Option<i32>,
    ) -> Result<u64, NcclError> {
        let id = self.fresh_id();
        self.join_as(id, uid, nranks, rank, device, cta_policy)
    }

    /// [`State::join`] under a handle id made beforehand (`ncclCommSplit` hands the handle
    /// out before every rank of the parent has called it).
    pub fn join_as(
        &mut self,
        id: u64,
        uid: [u8; UID_BYTES],
        nranks: i32,
        rank: i32,
        device: usize,
        cta_policy: Option<i32>,
    ) -> Result<u64, NcclError> {
        if nranks < 1 || rank < 0 || rank >= nranks {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("rank {rank} out of range for nranks {nranks}"),
            );
        }
        let (n, r) = (nranks as usize, rank as usize);
        let existing = self
            .communicators
            .iter()
            .find(|(_, c)| c.uid == uid)
            .map(|(&k, _)| k);
        let cid = match existing {
            Some(cid) => cid,
            None => {
                let cid = self.fresh_id();
                let c = Communicator {
                    uid,
                    nranks: n,
                    members: vec![None; n],
                    gone: vec![false; n],
                    hooks: Hooks::current(),
                    hash: fnv(&uid),
                    rdv: rendezvous_of(&uid).map(|d| crate::xproc::Rdv::new(d, n)),
                };
                self.communicators.insert(cid, c);
                cid
            }
        };
        let c = &self.communicators[&cid];
        if c.nranks != n {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!(
                    "nranks {nranks} differs from the {} other ranks gave",
                    c.nranks
                ),
            );
        }
        if c.members[r].is_some() || c.gone[r] {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("rank {rank} joined this communicator twice"),
            );
        }
        let comm = Comm {
            communicator: cid,
            rank: r,
            nranks: n,
            device,
            owner: std::thread::current().id(),
            cta_policy,
            op_count: 0,
            coll_seq: 0,
            send_seq: HashMap::new(),
            recv_seq: HashMap::new(),
            async_error: NCCL_SUCCESS,
            premulsum: Vec::new(),
            registered: 0,
            windows: 0,
            finalized: false,
            calls: 0,
            splits: 0,
        };
        self.comms.insert(id, comm);
        let c = self.communicators.get_mut(&cid).expect("inserted");
        c.members[r] = Some(id);
        if let Some(rdv) = &mut c.rdv {
            rdv.join(r, device).map_err(|e| NcclError {
                code: NCCL_SYSTEM_ERROR,
                message: format!("fake-nccl: rendezvous {}: {e}", rdv.dir.display()),
            })?;
        }
        Ok(id)
    }

    /// Removes a comm (destroy or abort): its pending ops are dropped by the engine.
    pub fn leave(&mut self, id: u64) {
        let Some(comm) = self.comms.remove(&id) else {
            return;
        };
        self.registrations.retain(|_, (c, _)| *c != id);
        if let Some(c) = self.communicators.get_mut(&comm.communicator) {
            c.members[comm.rank] = None;
            c.gone[comm.rank] = true;
            if let Some(rdv) = &c.rdv {
                rdv.depart(comm.rank, c.nranks);
            }
            if c.members.iter().all(Option::is_none) {
                if let Some(rdv) = self
                    .communicators
                    .remove(&comm.communicator)
                    .and_then(|c| c.rdv)
                {
                    self.mail.remove(&rdv.tag);
                }
            }
        }
        for s in self.streams.values_mut() {
            for item in s.queue.iter_mut().chain(s.capture.iter_mut().flatten()) {
                if let crate::stream::Item::Batch(ops) = item {
                    ops.retain(|o| o.comm != id);
                }
            }
        }
    }

    /// The comm of handle `h`, or ncclInvalidArgument.
    pub fn comm_id(&self, h: *const std::ffi::c_void) -> Result<u64, NcclError> {
        match unhandle(TAG_COMM, h).filter(|id| self.comms.contains_key(id)) {
            Some(id) => Ok(id),
            None if h.is_null() => nccl_err(NCCL_INVALID_ARGUMENT, "comm is NULL"),
            None if unhandle(TAG_COMM, h).is_some_and(|id| self.split_pending(id)) => nccl_err(
                NCCL_INVALID_USAGE,
                "communicator not ready: ncclCommSplit completes once every rank of the parent \
                 communicator has called it",
            ),
            None => nccl_err(
                NCCL_INVALID_ARGUMENT,
                "invalid communicator (destroyed, aborted or never made)",
            ),
        }
    }

    /// The comms of `communicator` owned by the calling thread.
    pub fn owned_members(&self, communicator: u64) -> usize {
        let me = std::thread::current().id();
        self.comms
            .values()
            .filter(|c| c.communicator == communicator && c.owner == me)
            .count()
    }
}
