//! Calls that span processes. A communicator made from an `ncclGetUniqueId` id (or split
//! from one) has a [`Rdv`]: its rendezvous directory ([`crate::rendezvous`]). Matching is the
//! same as in one process (collective k of every rank; send a->b number j with recv on b from
//! a number j), but a match whose partners are not all in this process goes through files:
//!
//! 1. once every rank's member file is known and one of them is another process's, each
//!    local part at the head of its stream (and not stalled) publishes `i.<key>.r<rank>`:
//!    its call's shape, hooks and the bytes it reads (its send buffer, a PreMulSum scalar);
//! 2. the process of the lowest participating rank (the leader) waits for every part, runs
//!    [`crate::exec::compute`] on them exactly as one process would (agreement checked, so a
//!    disagreement is ncclInvalidUsage on every rank), writes its own ranks' outputs, and
//!    leaves `o.<key>.r<rank>` (the bytes, or the error) for each rank of another process;
//! 3. the other processes take their result file, write the bytes and complete the op.
//!
//! A rank that never publishes (stalled, or its process died) leaves its partners waiting,
//! as on GPUs, until they abort. A destroyed or aborted rank leaves `g<rank>`, which makes its
//! partners' pending ops fail with ncclRemoteError as in one process. Waiting costs a few
//! `stat` calls per poll; [`pause_if_waiting`] sleeps briefly in queries that found nothing
//! to do, so many processes polling on few cores leave the CPU to the one that computes.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::engine::{Kind, MatchKey, Op, Red};
use crate::exec::Part;
use crate::rendezvous as rv;
use crate::state::*;

/// A communicator's rendezvous and what this process learnt from it.
#[derive(Debug)]
pub struct Rdv {
    pub dir: PathBuf,
    /// Each rank's process once known (from its member file, or its join here).
    pids: Vec<Option<u32>>,
    /// When ranks of other processes were last checked for having left.
    checked: Option<Instant>,
}

impl Rdv {
    pub fn new(dir: PathBuf, nranks: usize) -> Rdv {
        Rdv {
            dir,
            pids: vec![None; nranks],
            checked: None,
        }
    }

    /// Rank joins here: its member file.
    pub fn join(&mut self, rank: usize, device: usize) -> std::io::Result<()> {
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

    /// Tells every rank the communicator failed (a refused init).
    pub fn fail(&self, message: &str) {
        let _ = rv::put(&self.dir, "fail", &[message.as_bytes()]);
    }

    /// `Some(true)` once every rank is known and one lives in another process; `None` while a
    /// rank has not joined anywhere.
    fn spans(&mut self) -> Option<bool> {
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

    fn remote(&self, rank: usize) -> bool {
        self.pids[rank].is_some_and(|p| p != std::process::id())
    }
}

fn key_name(key: MatchKey) -> String {
    match key {
        MatchKey::Coll { seq, .. } => format!("c{seq}"),
        MatchKey::P2p { src, dst, seq, .. } => format!("p{src}-{dst}-{seq}"),
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
    let Some(rdv) = c.rdv.as_mut() else {
        return false;
    };
    if rdv.spans() != Some(true) {
        return false;
    }
    let dir = rdv.dir.clone();
    let participants: Vec<usize> = match key {
        MatchKey::Coll { .. } => (0..c.nranks).collect(),
        MatchKey::P2p { src, dst, .. } => vec![src, dst],
    };
    let remote: Vec<bool> = participants.iter().map(|&r| rdv.remote(r)).collect();
    let name = key_name(key);
    st.xp_waiting = true;
    let mut changed = note_departures(st, communicator, &dir);
    // 1. Publish every local part not yet published.
    for &(sid, i) in members {
        let op = head_op(st, sid, i);
        if op.published {
            continue;
        }
        match crate::exec::part_of(st, &op) {
            Ok(part) => {
                let bytes = encode(&part);
                if rv::put(&dir, &format!("i.{name}.r{}", op.rank), &[&bytes]).is_err() {
                    continue;
                }
            }
            Err(message) => fail_op(st, &op, &message),
        }
        if let Some(o) = head_op_mut(st, sid, i) {
            o.published = true;
        }
        changed = true;
    }
    let leader = participants[0];
    let ranks: Vec<usize> = members
        .iter()
        .map(|&(sid, i)| head_op(st, sid, i).rank)
        .collect();
    let local = |rank: usize| ranks.iter().position(|&r| r == rank).map(|k| members[k]);
    if let Some(lm) = local(leader) {
        // 2. The leader runs the call once every part is there.
        if !head_op(st, lm.0, lm.1).published {
            return changed;
        }
        let files: Vec<String> = participants
            .iter()
            .map(|r| format!("i.{name}.r{r}"))
            .collect();
        if !files.iter().all(|f| rv::has(&dir, f)) {
            return changed;
        }
        let mut parts = Vec::new();
        for f in &files {
            match rv::take(&dir, f).and_then(|b| decode(&b)) {
                Some(p) => parts.push(p),
                None => return changed,
            }
        }
        parts.sort_by_key(|p| (p.op.rank, p.op.kind == Kind::Recv));
        let result = crate::exec::compute(&parts);
        for (&rank, &is_remote) in participants.iter().zip(&remote) {
            let mine: Result<Vec<u8>, String> = match &result {
                Ok(out) => Ok(out
                    .iter()
                    .find(|o| o.0 == rank)
                    .map_or_else(Vec::new, |o| o.1.clone())),
                Err(m) => Err(m.clone()),
            };
            if is_remote {
                let (status, payload) = match &mine {
                    Ok(d) => (0u8, d.as_slice()),
                    Err(m) => (1u8, m.as_bytes()),
                };
                let _ = rv::put(&dir, &format!("o.{name}.r{rank}"), &[&[status], payload]);
            } else if let Some((sid, i)) = local(rank) {
                apply(st, sid, i, mine);
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
        let Some(bytes) = rv::take(&dir, &format!("o.{name}.r{}", op.rank)) else {
            continue;
        };
        let result = match bytes.split_first() {
            Some((0, data)) => Ok(data.to_vec()),
            Some((_, m)) => Err(String::from_utf8_lossy(m).to_string()),
            None => Err("fake-nccl: empty result file".to_string()),
        };
        apply(st, sid, i, result);
        changed = true;
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
fn apply(st: &mut State, sid: u64, i: usize, result: Result<Vec<u8>, String>) {
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

/// Marks ranks of other processes that left (so the engine drops ops that wait for them) and
/// applies a refused init; checked every 20 ms at most.
fn note_departures(st: &mut State, communicator: u64, dir: &Path) -> bool {
    let c = st.communicators.get_mut(&communicator).expect("checked");
    let rdv = c.rdv.as_mut().expect("checked");
    if rdv
        .checked
        .is_some_and(|t| t.elapsed() < Duration::from_millis(20))
    {
        return false;
    }
    rdv.checked = Some(Instant::now());
    let mut changed = false;
    for r in 0..c.nranks {
        if !c.gone[r] && rdv.remote(r) && rv::has(dir, &format!("g{r}")) {
            c.gone[r] = true;
            changed = true;
        }
    }
    if let Ok(message) = std::fs::read_to_string(dir.join("fail")) {
        let local: Vec<u64> = c.members.iter().flatten().copied().collect();
        for id in local {
            if let Some(comm) = st.comms.get_mut(&id) {
                if comm.async_error == NCCL_SUCCESS {
                    comm.async_error = NCCL_INVALID_USAGE;
                    crate::nccl_api::set_last_error(&message);
                    changed = true;
                }
            }
        }
    }
    changed
}

/// Sleeps a little when the last progress left ops waiting on other processes, so a query
/// loop does not starve them (call without the state lock).
pub fn pause_if_waiting(waiting: bool) {
    if waiting {
        std::thread::sleep(Duration::from_micros(150));
    }
}

const KINDS: [Kind; 10] = [
    Kind::AllReduce,
    Kind::Broadcast,
    Kind::Reduce,
    Kind::AllGather,
    Kind::ReduceScatter,
    Kind::AlltoAll,
    Kind::Gather,
    Kind::Scatter,
    Kind::Send,
    Kind::Recv,
];

/// A part as bytes: 14 little-endian u64 fields, the scalar, then the input.
fn encode(p: &Part) -> Vec<u8> {
    let o = &p.op;
    let (tag, code, sdtype) = match o.red {
        Red::None => (0, 0, 0),
        Red::Builtin(c) => (1, c, 0),
        Red::PreMulSum { code, op } => (2, code, op.dtype),
    };
    let fields: [u64; 14] = [
        KINDS.iter().position(|&k| k == o.kind).unwrap_or(0) as u64,
        o.rank as u64,
        o.nranks as u64,
        o.count as u64,
        u64::from(o.dtype),
        tag,
        u64::from(code),
        u64::from(sdtype),
        o.root as i64 as u64,
        o.peer as i64 as u64,
        u64::from(o.corrupt),
        o.corrupt_rank.map_or(u64::MAX, |r| r as u64),
        o.index,
        p.input.len() as u64,
    ];
    let mut out = Vec::with_capacity(14 * 8 + 8 + p.input.len());
    for f in fields {
        out.extend_from_slice(&f.to_le_bytes());
    }
    out.extend_from_slice(&p.scalar);
    out.extend_from_slice(&p.input);
    out
}

fn decode(b: &[u8]) -> Option<Part> {
    let f = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            b.get(i * 8..i * 8 + 8)?.try_into().ok()?,
        ))
    };
    let scalar: [u8; 8] = b.get(112..120)?.try_into().ok()?;
    let input = b.get(120..120 + f(13)? as usize)?.to_vec();
    let red = match f(5)? {
        0 => Red::None,
        1 => Red::Builtin(f(6)? as u32),
        _ => Red::PreMulSum {
            code: f(6)? as u32,
            op: crate::comm::PreMul {
                dtype: f(7)? as u32,
                scalar: crate::comm::Scalar::Host(scalar),
            },
        },
    };
    let op = Op {
        comm: 0,
        rank: f(1)? as usize,
        nranks: f(2)? as usize,
        kind: *KINDS.get(f(0)? as usize)?,
        send: 0,
        recv: 0,
        count: f(3)? as usize,
        dtype: f(4)? as u32,
        red,
        root: f(8)? as i64 as i32,
        peer: f(9)? as i64 as i32,
        key: None,
        index: f(12)?,
        stalled: false,
        corrupt: f(10)? != 0,
        corrupt_rank: (f(11)? != u64::MAX).then(|| f(11).unwrap_or(0) as usize),
        done: false,
        published: false,
    };
    Some(Part { op, input, scalar })
}
