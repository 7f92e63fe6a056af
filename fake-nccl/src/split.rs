//! `ncclCommSplit` (NCCL 2.18+), as strict as NCCL: collective over every rank of the parent
//! communicator; `color` is a non-negative integer or `NCCL_SPLIT_NOCOLOR` (-1, whose rank gets
//! NULL); the ranks of one colour form a new communicator ordered by `key`, ties by parent
//! rank, on the parent's devices; a NULL config inherits the parent's, another is checked as
//! at init. A thread that owns several ranks of the parent must make their calls inside one
//! group (NCCL would deadlock otherwise), and the group's end fails when a rank of the parent
//! that only this thread could call for did not call (NCCL would hang there). The handle is
//! written at the call; it works once the last rank of the parent has called.
//!
//! Across processes (a parent with a rendezvous, [`crate::xproc`]) each call also leaves
//! `s<n>.r<rank>` (colour and key) in the parent's rendezvous, and the call blocks (inside a
//! group: the outermost group end) until every rank of the parent has called, as NCCL's does,
//! giving up with ncclSystemError after `FAKE_CUDA_SYNC_TIMEOUT_S`. Every process then orders
//! the same entries the same way and joins its own ranks to each colour's communicator, whose
//! rendezvous is named from the parent's, the split's number and the colour.

use std::ffi::{c_int, c_void};
use std::thread::ThreadId;

use crate::comm::new_unique_id;
use crate::nccl_api::{comm_fields, need_version, with_group};
use crate::state::*;

/// `NCCL_SPLIT_NOCOLOR`.
pub const NOCOLOR: c_int = -1;

/// One rank's call, waiting for the others.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Rank in the parent.
    pub rank: usize,
    /// The colour (`None`: no colour).
    pub color: Option<c_int>,
    pub key: c_int,
    /// The new handle's id (`None` without a colour).
    pub id: Option<u64>,
    pub device: usize,
    pub cta_policy: Option<i32>,
    /// The calling thread; `None` for a rank of another process.
    pub owner: Option<ThreadId>,
}

thread_local! {
    /// Splits this thread joined inside the current group: checked at its outermost end.
    static JOINED: std::cell::RefCell<Vec<(u64, u64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl State {
    /// Whether `id` is a handle of a split that has not completed.
    pub fn split_pending(&self, id: u64) -> bool {
        self.splits.values().flatten().any(|e| e.id == Some(id))
    }

    /// Makes the new communicators of a split every rank has joined.
    fn resolve_split(&mut self, key: (u64, u64)) -> Result<(), NcclError> {
        let Some(mut entries) = self.splits.remove(&key) else {
            return Ok(());
        };
        entries.sort_by_key(|e| (e.color, e.key, e.rank));
        let mut colors: Vec<c_int> = entries.iter().filter_map(|e| e.color).collect();
        colors.dedup();
        let parent_dir = self
            .communicators
            .get(&key.0)
            .and_then(|c| c.rdv.as_ref())
            .map(|r| r.dir.clone());
        for color in colors {
            let members: Vec<&Entry> = entries.iter().filter(|e| e.color == Some(color)).collect();
            let uid = match &parent_dir {
                Some(dir) => {
                    crate::comm::unique_id_at(&crate::rendezvous::child(dir, key.1, color))?
                }
                None => new_unique_id(),
            };
            let n = members.len() as c_int;
            for (rank, e) in members.iter().enumerate() {
                let Some(owner) = e.owner else { continue };
                let id = e.id.expect("a coloured rank has a handle");
                self.join_as(id, uid, n, rank as c_int, e.device, e.cta_policy)?;
                self.comms.get_mut(&id).expect("joined").owner = owner;
                crate::debuglog::on_init(self, id, "ncclCommSplit");
            }
        }
        Ok(())
    }

    /// Completes split `key` once every rank of the parent called, reading the calls of
    /// ranks in other processes from the rendezvous; true once it is complete.
    fn try_complete_split(&mut self, key: (u64, u64)) -> Result<bool, NcclError> {
        let Some(entries) = self.splits.get(&key) else {
            return Ok(true);
        };
        let Some(parent) = self.communicators.get(&key.0) else {
            return Ok(true);
        };
        let n = parent.nranks;
        let mut found = Vec::new();
        if entries.len() < n {
            let Some(rdv) = &parent.rdv else {
                return Ok(false);
            };
            for r in (0..n).filter(|r| !entries.iter().any(|e| e.rank == *r)) {
                let Ok(t) = std::fs::read_to_string(rdv.dir.join(format!("s{}.r{r}", key.1)))
                else {
                    return Ok(false);
                };
                let v: Vec<c_int> = t
                    .split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect();
                let [color, k] = v[..] else {
                    return Ok(false);
                };
                found.push(Entry {
                    rank: r,
                    color: (color != NOCOLOR).then_some(color),
                    key: k,
                    id: None,
                    device: 0,
                    cta_policy: None,
                    owner: None,
                });
            }
        }
        self.splits.get_mut(&key).expect("checked").extend(found);
        self.resolve_split(key)?;
        Ok(true)
    }
}

/// Blocks (releasing the state) until the cross-process splits in `keys` are complete.
fn await_remote(
    mut st: std::sync::MutexGuard<'static, State>,
    keys: &[(u64, u64)],
) -> Result<std::sync::MutexGuard<'static, State>, NcclError> {
    let start = std::time::Instant::now();
    loop {
        let mut pending = false;
        for &key in keys {
            let remote = st
                .communicators
                .get(&key.0)
                .is_some_and(|c| c.rdv.is_some());
            if remote && !st.try_complete_split(key)? {
                pending = true;
            }
        }
        if !pending {
            return Ok(st);
        }
        if start.elapsed() > crate::config::sync_timeout() {
            return nccl_err(
                NCCL_SYSTEM_ERROR,
                "ncclCommSplit: a rank of the parent communicator never called it (timed out)",
            );
        }
        drop(st);
        std::thread::sleep(std::time::Duration::from_millis(1));
        st = state();
    }
}

/// The outermost group end: waits for the cross-process splits this thread joined; then a
/// split that cannot complete because every rank still missing belongs to this thread is the
/// hang NCCL would have.
pub fn check_at_group_end(
    st: std::sync::MutexGuard<'static, State>,
) -> Result<std::sync::MutexGuard<'static, State>, NcclError> {
    let joined = JOINED.with(|j| std::mem::take(&mut *j.borrow_mut()));
    let me = std::thread::current().id();
    let remote: Vec<(u64, u64)> = joined
        .iter()
        .copied()
        .filter(|k| {
            st.communicators
                .get(&k.0)
                .and_then(|c| c.rdv.as_ref())
                .is_some_and(|r| r.spans_known() != Some(false))
        })
        .collect();
    let st = await_remote(st, &remote)?;
    for key in joined {
        let Some(entries) = st.splits.get(&key) else {
            continue;
        };
        let Some(parent) = st.communicators.get(&key.0) else {
            continue;
        };
        let missing: Vec<usize> = (0..parent.nranks)
            .filter(|r| !entries.iter().any(|e| e.rank == *r))
            .collect();
        let others = missing.iter().any(|&r| {
            parent.members[r].is_some_and(|c| st.comms.get(&c).is_some_and(|c| c.owner != me))
        });
        if !others {
            return nccl_err(
                NCCL_INVALID_USAGE,
                format!(
                    "ncclCommSplit: rank(s) {missing:?} of the parent communicator did not call \
                     ncclCommSplit, and no other thread can (NCCL would hang in ncclGroupEnd)"
                ),
            );
        }
    }
    Ok(st)
}

/// `ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t*)`.
///
/// # Safety
/// `newcomm` must be NULL (refused) or valid for one handle's write; `config` NULL or a
/// readable `ncclConfig_t`, as NCCL requires.
#[no_mangle]
pub unsafe extern "C" fn ncclCommSplit(
    comm: *mut c_void,
    color: c_int,
    key: c_int,
    newcomm: *mut *mut c_void,
    config: *mut c_void,
) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let parent = st.comm_id(comm);
        let mut fields = parent.as_ref().map_or_else(
            |_| {
                vec![
                    ("rank", "-1".into()),
                    ("nranks", "-1".into()),
                    ("dev", "-1".into()),
                ]
            },
            |&id| comm_fields(&st, id),
        );
        fields.push(("color", color.to_string()));
        fields.push(("key", key.to_string()));
        let (traced, checked) = if config.is_null() {
            ("none".to_string(), Ok(None))
        } else {
            crate::init::read_config("ncclCommSplit", config)
        };
        fields.push(("config", traced));
        crate::trace::line("ncclCommSplit", &with_group(fields));
        need_version(21800, "ncclCommSplit")?;
        let parent = parent?;
        let cta = checked?;
        if newcomm.is_null() {
            return nccl_err(NCCL_INVALID_ARGUMENT, "ncclCommSplit: newcomm is NULL");
        }
        if color < 0 && color != NOCOLOR {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("ncclCommSplit: color {color} is neither >= 0 nor NCCL_SPLIT_NOCOLOR"),
            );
        }
        let p = &st.comms[&parent];
        if p.finalized {
            return nccl_err(NCCL_INVALID_USAGE, "ncclCommSplit: the parent is finalized");
        }
        let communicator = p.communicator;
        if crate::group::depth() == 0 && st.owned_members(communicator) > 1 {
            return nccl_err(
                NCCL_INVALID_USAGE,
                format!(
                    "ncclCommSplit: rank {}: this thread owns several ranks of the parent; the \
                     call would deadlock real NCCL: use ncclGroupStart/End",
                    p.rank
                ),
            );
        }
        let (rank, device, seq, inherited) = (p.rank, p.device, p.splits, p.cta_policy);
        st.comms.get_mut(&parent).expect("checked").splits += 1;
        let id = (color != NOCOLOR).then(|| st.fresh_id());
        // SAFETY: checked non-NULL; NCCL writes the handle (or NULL) at the call.
        unsafe { newcomm.write(id.map_or(std::ptr::null_mut(), |i| handle(TAG_COMM, i))) };
        let key_of = (communicator, seq);
        let entry = Entry {
            rank,
            color: (color != NOCOLOR).then_some(color),
            key,
            id,
            device,
            cta_policy: if config.is_null() { inherited } else { cta },
            owner: Some(std::thread::current().id()),
        };
        if let Some(rdv) = &st.communicators[&communicator].rdv {
            let text = format!("{color} {key}");
            let name = format!("s{seq}.r{rank}");
            crate::rendezvous::put(&rdv.dir, &name, &[text.as_bytes()]).map_err(|e| NcclError {
                code: NCCL_SYSTEM_ERROR,
                message: format!("ncclCommSplit: rendezvous {}: {e}", rdv.dir.display()),
            })?;
        }
        let entries = st.splits.entry(key_of).or_default();
        entries.push(entry);
        let complete = entries.len() == st.communicators[&communicator].nranks;
        let remote = st.communicators[&communicator]
            .rdv
            .as_ref()
            .is_some_and(|r| r.spans_known() != Some(false));
        if complete {
            st.resolve_split(key_of)?;
        } else if crate::group::depth() > 0 {
            JOINED.with(|j| j.borrow_mut().push(key_of));
        } else if remote {
            drop(await_remote(st, &[key_of])?);
        }
        Ok(())
    })
}
