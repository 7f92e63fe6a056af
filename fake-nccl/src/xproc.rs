//! Calls that span processes. A communicator made from an `ncclGetUniqueId` id (or split
//! from one) has a [`Rdv`] ([`crate::members`]): its rendezvous directory, where each rank's
//! member file says which process holds it. Matching is the same as in one process
//! (collective k of every rank; send a->b number j with recv on b from a number j); a match
//! whose partners are not all in this process is made by messages ([`crate::wire`] over
//! [`crate::link`]'s sockets); no part or result is a file (only the member files are read,
//! until every rank is known, and `ncclCommSplit`'s entries, [`crate::split`]):
//!
//! 1. once every rank's member file is known and one of them is another process's, each
//!    local part at the head of its stream (and not stalled) is sent to the process of the
//!    call's lowest rank (the leader): its shape, hooks and the bytes it reads (its send
//!    buffer, a PreMulSum scalar). The leader files it in its [`Mailbox`];
//! 2. when the leader's mailbox holds every participant's part, it runs
//!    [`crate::exec::compute`] on them exactly as one process would (agreement checked, so a
//!    disagreement is ncclInvalidUsage on every rank), writes its own ranks' outputs, and
//!    sends each rank of another process its bytes (or the error);
//! 3. that process's reader thread files the result, writes the bytes and completes the op.
//!
//! Whoever waits blocks on the state's condition variable, which a delivered message
//! signals. The leader is always a participant (a send/recv's lower rank), so calls among
//! ranks that stay need nobody that left. A rank that never sends its part (stalled, or its process died) leaves its
//! partners waiting, as on GPUs, until they abort. A destroyed or aborted rank leaves `g<rank>`
//! and tells every other process, which makes its partners' pending ops fail with
//! ncclRemoteError as in one process.

use std::collections::HashMap;

use crate::engine::{Kind, MatchKey, Op};
use crate::exec::{Bytes, Part};
use crate::link;
pub use crate::members::Rdv;
use crate::rendezvous as rv;
use crate::state::*;
use crate::wire::{Body, Msg, WireKey};

/// Parts and results other processes sent for one communicator, by call and rank.
#[derive(Debug, Default)]
pub struct Mailbox {
    parts: HashMap<(WireKey, usize), Part>,
    results: HashMap<(WireKey, usize), Result<Bytes, String>>,
}

/// Files a message from another process (a reader thread calls it, then runs the engine).
pub fn deliver(st: &mut State, m: Msg) {
    let key = (m.key, m.rank);
    match m.body {
        Body::Part(p) => {
            st.mail.entry(m.dir).or_default().parts.insert(key, p);
        }
        Body::Result(r) => {
            st.mail.entry(m.dir).or_default().results.insert(key, r);
        }
        Body::Gone => {
            if let Some(c) = communicator_of(st, m.dir) {
                if let Some(g) = st
                    .communicators
                    .get_mut(&c)
                    .and_then(|c| c.gone.get_mut(m.rank))
                {
                    *g = true;
                }
            }
        }
        Body::Fail(message) => {
            if let Some(c) = communicator_of(st, m.dir) {
                refuse(st, c, &message);
            }
        }
    }
}

fn communicator_of(st: &State, tag: u64) -> Option<u64> {
    st.communicators
        .iter()
        .find(|(_, c)| c.rdv.as_ref().is_some_and(|r| r.tag == tag))
        .map(|(&id, _)| id)
}

/// A refused init: every local rank's ops fail with ncclInvalidUsage.
fn refuse(st: &mut State, communicator: u64, message: &str) {
    let local: Vec<u64> = st.communicators[&communicator]
        .members
        .iter()
        .flatten()
        .copied()
        .collect();
    for id in local {
        if let Some(comm) = st
            .comms
            .get_mut(&id)
            .filter(|c| c.async_error == NCCL_SUCCESS)
        {
            comm.async_error = NCCL_INVALID_USAGE;
            crate::nccl_api::set_last_error(message);
        }
    }
}

/// Once every member is known: the departures and the refusal that happened before this
/// process could be told.
fn catch_up(st: &mut State, communicator: u64) {
    let c = st.communicators.get_mut(&communicator).expect("checked");
    let rdv = c.rdv.as_mut().expect("checked");
    rdv.caught_up = true;
    for r in 0..c.nranks {
        if !rdv.local(r) && rv::has(&rdv.dir, &format!("g{r}")) {
            c.gone[r] = true;
        }
    }
    if let Ok(message) = std::fs::read_to_string(rdv.dir.join("fail")) {
        refuse(st, communicator, &message);
    }
}

/// Runs the cross-process part of matching for one key whose local parts are `members`
/// (stream, index in its head batch). True if anything changed.
pub fn advance(st: &mut State, key: MatchKey, members: &[(u64, usize)]) -> bool {
    let communicator = match key {
        MatchKey::Coll { communicator, .. } | MatchKey::P2p { communicator, .. } => communicator,
    };
    let Some(c) = st.communicators.get_mut(&communicator) else {
        return false;
    };
    let nranks = c.nranks;
    let Some(rdv) = c.rdv.as_mut() else {
        return false;
    };
    st.xp_waiting = true;
    if rdv.spans() != Some(true) {
        return false;
    }
    let (tag, pids, caught_up) = (rdv.tag, rdv.pids.clone(), rdv.caught_up);
    if !caught_up {
        catch_up(st, communicator);
    }
    let participants: Vec<usize> = match key {
        MatchKey::Coll { .. } => (0..nranks).collect(),
        MatchKey::P2p { src, dst, .. } => vec![src.min(dst), src.max(dst)],
    };
    let me = Some(std::process::id());
    let leader = pids[participants[0]];
    let wkey = WireKey::from(key);
    let mut changed = false;
    // 1. Every local part not yet sent goes to the leader.
    for &(sid, i) in members {
        let op = head_op(st, sid, i);
        if op.published {
            continue;
        }
        match crate::exec::part_of(st, &op) {
            Ok(part) if leader == me => {
                let mb = st.mail.entry(tag).or_default();
                mb.parts.insert((wkey, op.rank), part);
            }
            Ok(part) => link::send(
                leader.expect("known"),
                Msg {
                    dir: tag,
                    key: wkey,
                    rank: op.rank,
                    body: Body::Part(part),
                },
            ),
            Err(message) => fail_op(st, &op, &message),
        }
        if let Some(o) = head_op_mut(st, sid, i) {
            o.published = true;
        }
        changed = true;
    }
    let local = |st: &State, rank: usize| {
        members
            .iter()
            .copied()
            .find(|&(sid, i)| head_op(st, sid, i).rank == rank)
    };
    if leader == me {
        // 2. The leader runs the call once every part is there.
        let mb = st.mail.entry(tag).or_default();
        if !participants
            .iter()
            .all(|&r| mb.parts.contains_key(&(wkey, r)))
        {
            return changed;
        }
        let mut parts: Vec<Part> = participants
            .iter()
            .filter_map(|&r| mb.parts.remove(&(wkey, r)))
            .collect();
        parts.sort_by_key(|p| (p.op.rank, p.op.kind == Kind::Recv));
        let result = crate::exec::compute(&parts);
        drop(parts);
        for &rank in &participants {
            let mine: Result<Bytes, String> = match &result {
                Ok(out) => Ok(out
                    .iter()
                    .find(|o| o.0 == rank)
                    .map_or_else(Bytes::default, |o| Bytes::clone(&o.1))),
                Err(m) => Err(m.clone()),
            };
            if pids[rank] == me {
                if let Some((sid, i)) = local(st, rank) {
                    apply(st, sid, i, mine);
                }
            } else {
                let m = Msg {
                    dir: tag,
                    key: wkey,
                    rank,
                    body: Body::Result(mine),
                };
                link::send(pids[rank].expect("known"), m);
            }
        }
        return true;
    }
    // 3. Everyone else takes its results.
    for &(sid, i) in members {
        let op = head_op(st, sid, i);
        if !op.published {
            continue;
        }
        let got = st
            .mail
            .get_mut(&tag)
            .and_then(|mb| mb.results.remove(&(wkey, op.rank)));
        if let Some(result) = got {
            apply(st, sid, i, result);
            changed = true;
        }
    }
    changed
}

fn head_op(st: &State, sid: u64, i: usize) -> Op {
    match st.streams[&sid].queue.front() {
        Some(crate::stream::Item::Batch(ops)) => ops[i].clone(),
        _ => unreachable!("collected from a head batch"),
    }
}

fn head_op_mut(st: &mut State, sid: u64, i: usize) -> Option<&mut Op> {
    match st.streams.get_mut(&sid)?.queue.front_mut() {
        Some(crate::stream::Item::Batch(ops)) => ops.get_mut(i),
        _ => None,
    }
}

/// Writes a result into the local op's receive buffer and completes it; an error becomes its
/// communicator's ncclInvalidUsage.
fn apply(st: &mut State, sid: u64, i: usize, result: Result<Bytes, String>) {
    let op = head_op(st, sid, i);
    let written = result.and_then(|d| {
        if d.is_empty() {
            Ok(())
        } else {
            crate::exec::write_all(st, vec![(op.recv, d)])
        }
    });
    if let Err(m) = written {
        fail_op(st, &op, &m);
    }
    if let Some(o) = head_op_mut(st, sid, i) {
        o.done = true;
    }
}

fn fail_op(st: &mut State, op: &Op, message: &str) {
    if let Some(c) = st.comms.get_mut(&op.comm) {
        c.async_error = NCCL_INVALID_USAGE;
    }
    crate::nccl_api::set_last_error(message);
}

/// Waits a little (at most 2 ms, less if a message arrives) when the last progress left ops
/// waiting on other processes, so a query loop blocks instead of spinning (call with the
/// state, which the wait releases).
pub fn pause_if_waiting(
    st: std::sync::MutexGuard<'static, State>,
) -> std::sync::MutexGuard<'static, State> {
    if st.xp_waiting {
        wait(st, std::time::Duration::from_millis(2))
    } else {
        st
    }
}
