//! What processes of one communicator tell each other ([`crate::link`] carries it): a
//! [`Msg`] names the communicator by a hash of its rendezvous path, the call by a [`WireKey`]
//! (the same in every process, unlike the local [`MatchKey`]) and a rank, and carries a
//! [`Body`]: a rank's part of a call, a rank's result, a rank's departure, or a refused init.
//! On the socket a message is a header of eight little-endian u64 fields, then its payload.

use std::io::{Read, Write};

use crate::engine::{Kind, MatchKey, Op, Red};
use crate::exec::Part;

/// A call as every process names it: collective number k, or send a->b number j.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireKey {
    None,
    Coll(u64),
    P2p { src: usize, dst: usize, seq: u64 },
}

impl From<MatchKey> for WireKey {
    fn from(k: MatchKey) -> WireKey {
        match k {
            MatchKey::Coll { seq, .. } => WireKey::Coll(seq),
            MatchKey::P2p { src, dst, seq, .. } => WireKey::P2p { src, dst, seq },
        }
    }
}

/// What a message says.
#[derive(Debug)]
pub enum Body {
    /// A rank's part of a call, for the process that computes it.
    Part(Part),
    /// A rank's output bytes (empty: none), or the call's error.
    Result(Result<crate::exec::Bytes, String>),
    /// The rank was destroyed or aborted.
    Gone,
    /// The communicator's init was refused (the message).
    Fail(String),
}

/// One message.
#[derive(Debug)]
pub struct Msg {
    /// [`crate::xproc::Rdv::tag`] of the communicator.
    pub dir: u64,
    pub key: WireKey,
    pub rank: usize,
    pub body: Body,
}

const PART: u64 = 0;
const OK: u64 = 1;
const ERR: u64 = 2;
const GONE: u64 = 3;
const FAIL: u64 = 4;

/// Writes `m` (header, then payload without another copy).
pub fn write_msg(w: &mut impl Write, m: &Msg) -> std::io::Result<()> {
    let (tag, head, payload): (u64, Vec<u8>, &[u8]) = match &m.body {
        Body::Part(p) => (PART, part_head(p), &p.input),
        Body::Result(Ok(d)) => (OK, Vec::new(), d.as_slice()),
        Body::Result(Err(e)) => (ERR, Vec::new(), e.as_bytes()),
        Body::Gone => (GONE, Vec::new(), &[]),
        Body::Fail(e) => (FAIL, Vec::new(), e.as_bytes()),
    };
    let (kind, a, b, c) = match m.key {
        WireKey::None => (0, 0, 0, 0),
        WireKey::Coll(seq) => (1, seq, 0, 0),
        WireKey::P2p { src, dst, seq } => (2, src as u64, dst as u64, seq),
    };
    let len = (head.len() + payload.len()) as u64;
    let fields = [tag, m.dir, kind, a, b, c, m.rank as u64, len];
    let mut header = Vec::with_capacity(64 + head.len());
    for f in fields {
        header.extend_from_slice(&f.to_le_bytes());
    }
    header.extend_from_slice(&head);
    w.write_all(&header)?;
    w.write_all(payload)
}

/// Reads one message; `InvalidData` for a malformed one.
pub fn read_msg(r: &mut impl Read) -> std::io::Result<Msg> {
    let mut header = [0u8; 64];
    r.read_exact(&mut header)?;
    let f = |i: usize| u64::from_le_bytes(header[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "fake-nccl: bad message");
    let len = f(7) as usize;
    // A part's shape apart from its input, so the input is read into a buffer of its own.
    let mut head = [0u8; HEAD];
    if f(0) == PART {
        r.read_exact(head.get_mut(..).filter(|_| len >= HEAD).ok_or_else(bad)?)?;
    }
    let mut payload = vec![0u8; if f(0) == PART { len - HEAD } else { len }];
    r.read_exact(&mut payload)?;
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).to_string();
    let body = match f(0) {
        PART => Body::Part(decode_part(&head, payload).ok_or_else(bad)?),
        OK => Body::Result(Ok(std::sync::Arc::new(payload))),
        ERR => Body::Result(Err(text(payload))),
        GONE => Body::Gone,
        FAIL => Body::Fail(text(payload)),
        _ => return Err(bad()),
    };
    let key = match f(2) {
        0 => WireKey::None,
        1 => WireKey::Coll(f(3)),
        _ => WireKey::P2p {
            src: f(3) as usize,
            dst: f(4) as usize,
            seq: f(5),
        },
    };
    Ok(Msg {
        dir: f(1),
        key,
        rank: f(6) as usize,
        body,
    })
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

/// Fields of a part before its input bytes.
const HEAD: usize = 13 * 8 + 8;

/// A part's shape and hooks: 13 little-endian u64 fields and the scalar.
fn part_head(p: &Part) -> Vec<u8> {
    let o = &p.op;
    let (tag, code, sdtype) = match o.red {
        Red::None => (0, 0, 0),
        Red::Builtin(c) => (1, c, 0),
        Red::PreMulSum { code, op } => (2, code, op.dtype),
    };
    let fields: [u64; 13] = [
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
    ];
    let mut out = Vec::with_capacity(HEAD);
    for f in fields {
        out.extend_from_slice(&f.to_le_bytes());
    }
    out.extend_from_slice(&p.scalar);
    out
}

fn decode_part(b: &[u8; HEAD], input: Vec<u8>) -> Option<Part> {
    let f = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            b.get(i * 8..i * 8 + 8)?.try_into().ok()?,
        ))
    };
    let scalar: [u8; 8] = b.get(HEAD - 8..HEAD)?.try_into().ok()?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_survives_the_wire() {
        let op = Op {
            comm: 3,
            rank: 1,
            nranks: 4,
            kind: Kind::ReduceScatter,
            send: 9,
            recv: 9,
            count: 2,
            dtype: 7,
            red: Red::Builtin(2),
            root: -1,
            peer: -1,
            key: None,
            index: 5,
            stalled: false,
            corrupt: true,
            corrupt_rank: Some(2),
            done: false,
            published: false,
        };
        let m = Msg {
            dir: 42,
            key: WireKey::P2p {
                src: 1,
                dst: 3,
                seq: 7,
            },
            rank: 1,
            body: Body::Part(Part {
                op,
                input: vec![1, 2, 3],
                scalar: [9; 8],
            }),
        };
        let mut buf = Vec::new();
        write_msg(&mut buf, &m).unwrap();
        let back = read_msg(&mut buf.as_slice()).unwrap();
        assert_eq!((back.dir, back.key, back.rank), (m.dir, m.key, m.rank));
        let Body::Part(p) = back.body else {
            panic!("not a part")
        };
        assert_eq!(p.input, vec![1, 2, 3]);
        assert_eq!(p.scalar, [9; 8]);
        assert_eq!(
            (p.op.kind, p.op.count, p.op.index),
            (Kind::ReduceScatter, 2, 5)
        );
        assert_eq!((p.op.corrupt, p.op.corrupt_rank), (true, Some(2)));
        assert!(matches!(p.op.red, Red::Builtin(2)));
    }
}
