//! Matching and execution. [`place_batch`] numbers a group's ops as they land on a stream;
//! [`progress`] runs head items while it can: event records stamp, wait-values poll their
//! word, and a communication op runs once every participant's matching op is at the head of
//! its own stream (collective k on every rank; the p2p send a->b number j with the recv on b
//! from a number j). A match whose partners live in other processes goes through
//! [`crate::xproc`].

use std::collections::HashMap;

pub use crate::op::{Kind, MatchKey, Op, Red};
use crate::state::*;
use crate::stream::Item;

/// Puts a batch on `stream` (or into its capture), numbering the ops for matching and hooks.
pub fn place_batch(st: &mut State, stream: u64, mut ops: Vec<Op>) {
    st.order_after_legacy(stream);
    let Some(s) = st.streams.get(&stream) else {
        return;
    };
    if s.capture.is_some() {
        for op in &mut ops {
            op.key = None;
        }
        st.streams
            .get_mut(&stream)
            .expect("checked")
            .capture
            .as_mut()
            .expect("checked")
            .push(Item::Batch(ops));
        return;
    }
    for op in &mut ops {
        let Some(comm) = st.comms.get_mut(&op.comm) else {
            op.done = true;
            continue;
        };
        let communicator = comm.communicator;
        op.index = comm.op_count;
        comm.op_count += 1;
        let (rank, peer) = (comm.rank, op.peer as usize);
        let next = |m: &mut HashMap<usize, u64>| {
            let e = m.entry(peer).or_insert(0);
            *e += 1;
            *e - 1
        };
        op.key = Some(match op.kind {
            Kind::Send => MatchKey::P2p {
                communicator,
                src: rank,
                dst: peer,
                seq: next(&mut comm.send_seq),
            },
            Kind::Recv => MatchKey::P2p {
                communicator,
                src: peer,
                dst: rank,
                seq: next(&mut comm.recv_seq),
            },
            _ => {
                comm.coll_seq += 1;
                MatchKey::Coll {
                    communicator,
                    seq: comm.coll_seq - 1,
                }
            }
        });
        let hooks = st
            .communicators
            .get(&communicator)
            .map(|c| c.hooks)
            .unwrap_or_default();
        op.stalled = hooks.stalls(op.index, rank);
        if let Some((n, r)) = hooks.corrupt_at {
            op.corrupt = n == op.index;
            op.corrupt_rank = Some(r.unwrap_or(0));
        }
        if hooks.async_error_at.is_some_and(|n| op.index >= n) {
            st.comms.get_mut(&op.comm).expect("exists").async_error = NCCL_REMOTE_ERROR;
        }
    }
    let s = st.streams.get_mut(&stream).expect("checked");
    s.queue.push_back(Item::Batch(ops));
}

/// Runs everything that can run now.
pub fn progress(st: &mut State) {
    st.xp_waiting = false;
    loop {
        // Legacy streams first, then by id: a blocking stream's work is ordered after the
        // legacy stream's settled copies, and a HashMap's order would make that a coin toss.
        let mut ids: Vec<(bool, u64)> = st.streams.values().map(|s| (!s.legacy, s.id)).collect();
        ids.sort_unstable();
        let ids = ids.into_iter().map(|(_, id)| id);
        let mut changed = false;
        for id in ids {
            changed |= advance_simple(st, id);
        }
        changed |= drop_orphans(st);
        changed |= run_matched(st);
        if !changed {
            break;
        }
    }
}

/// Completes head items that need no partner; true if any did.
fn advance_simple(st: &mut State, id: u64) -> bool {
    let mut changed = false;
    loop {
        let Some(head) = st.streams.get(&id).and_then(|s| s.queue.front()) else {
            return changed;
        };
        match head {
            Item::Record { event, gen } => {
                let (event, gen) = (*event, *gen);
                if let Some(e) = st.events.get_mut(&event) {
                    if gen > e.done_gen {
                        e.done_gen = gen;
                        if gen == e.last_gen {
                            e.stamp = Some(std::time::Instant::now());
                        }
                    }
                }
            }
            Item::WaitValue { addr, value, flags } => {
                if st.alloc_holding(*addr, 4).is_some() {
                    // SAFETY: a live, registered, 4-byte aligned word (checked when enqueued).
                    let word = unsafe { std::ptr::read_volatile(*addr as usize as *const u32) };
                    let ok = match flags & 0xF {
                        0 => (word.wrapping_sub(*value) as i32) >= 0,
                        1 => word == *value,
                        2 => word & *value != 0,
                        _ => !(word | *value) != 0,
                    };
                    if !ok {
                        return changed;
                    }
                }
            }
            Item::Copy { dst, src, len } => {
                if st.alloc_holding(*dst, *len).is_some() && st.alloc_holding(*src, *len).is_some()
                {
                    // SAFETY: both ranges lie in live allocations (checked again here, since
                    // one may have been freed since the copy was queued); `copy` allows overlap.
                    unsafe {
                        std::ptr::copy(*src as usize as *const u8, *dst as usize as *mut u8, *len)
                    };
                }
            }
            Item::Write { dst, data, lazy } => {
                if *lazy && st.streams[&id].queue.len() == 1 {
                    return changed;
                }
                if st.alloc_holding(*dst, data.len()).is_some() {
                    // SAFETY: the range lies in a live allocation (it may have been freed
                    // since the write was queued; then it is dropped).
                    unsafe { std::ptr::copy(data.as_ptr(), *dst as usize as *mut u8, data.len()) };
                }
            }
            Item::Batch(ops) => {
                if !ops.iter().all(|o| o.done) {
                    return changed;
                }
            }
            Item::Kernel(k) => crate::launch::run(st, k),
            Item::ReadBack { dst, src, len } => {
                if st.alloc_holding(*src, *len).is_some() {
                    // SAFETY: the source lies in a live allocation; the destination is the
                    // caller's host memory, which the driver API requires to stay valid until
                    // the stream reaches the copy.
                    unsafe {
                        std::ptr::copy(*src as usize as *const u8, *dst as usize as *mut u8, *len)
                    };
                }
            }
        }
        st.streams.get_mut(&id).expect("exists").queue.pop_front();
        changed = true;
    }
}

/// Drops head ops that can never match because a needed rank was destroyed or aborted.
fn drop_orphans(st: &mut State) -> bool {
    let mut changed = false;
    let State {
        streams,
        communicators,
        comms,
        ..
    } = st;
    for s in streams.values_mut() {
        let Some(Item::Batch(ops)) = s.queue.front_mut() else {
            continue;
        };
        for op in ops.iter_mut().filter(|o| !o.done) {
            let orphan = match op.key {
                Some(MatchKey::Coll { communicator, .. }) => communicators
                    .get(&communicator)
                    .is_none_or(|c| c.gone.iter().any(|&g| g)),
                Some(MatchKey::P2p {
                    communicator,
                    src,
                    dst,
                    ..
                }) => communicators
                    .get(&communicator)
                    .is_none_or(|c| c.gone[src] || c.gone[dst]),
                None => true,
            };
            if orphan {
                op.done = true;
                changed = true;
                // The first error sticks (a refused init stays ncclInvalidUsage).
                if let Some(c) = comms.get_mut(&op.comm).filter(|c| c.async_error == 0) {
                    c.async_error = NCCL_REMOTE_ERROR;
                }
            }
        }
    }
    changed
}

/// Runs every op whose partners are all at the head of their streams; true if any ran.
fn run_matched(st: &mut State) -> bool {
    let mut groups: HashMap<MatchKey, Vec<(u64, usize)>> = HashMap::new();
    for (&sid, s) in &st.streams {
        if let Some(Item::Batch(ops)) = s.queue.front() {
            for (i, op) in ops.iter().enumerate() {
                if let (false, false, Some(key)) = (op.done, op.stalled, op.key) {
                    groups.entry(key).or_default().push((sid, i));
                }
            }
        }
    }
    let mut changed = false;
    for (key, members) in groups {
        let op_at = |st: &State, (sid, i): (u64, usize)| match st.streams[&sid].queue.front() {
            Some(Item::Batch(ops)) => ops[i].clone(),
            _ => unreachable!("collected from a head batch"),
        };
        let mut ops: Vec<Op> = members.iter().map(|&m| op_at(st, m)).collect();
        let needed = match key {
            MatchKey::Coll { .. } => ops[0].nranks,
            MatchKey::P2p { .. } => 2,
        };
        if ops.len() != needed {
            changed |= crate::xproc::advance(st, key, &members);
            continue;
        }
        ops.sort_by_key(|o| (o.rank, o.kind == Kind::Recv));
        if let Err(message) = crate::exec::execute(st, &ops) {
            for op in &ops {
                if let Some(c) = st.comms.get_mut(&op.comm) {
                    c.async_error = NCCL_INVALID_USAGE;
                }
            }
            crate::nccl_api::set_last_error(&message);
        }
        for (sid, i) in members {
            if let Some(Item::Batch(ops)) =
                st.streams.get_mut(&sid).and_then(|s| s.queue.front_mut())
            {
                ops[i].done = true;
            }
        }
        changed = true;
    }
    changed
}
