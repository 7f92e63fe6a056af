//! What a matched op does to memory, as NCCL defines each call: every input is read before any
//! output is written, so in-place and overlapping buffers behave as one kernel would leave
//! them. Buffers are re-checked against the live allocations first (freed memory is an error,
//! never a crash), and partners must agree on the call's shape.

use std::sync::Arc;

use crate::comm::Scalar;
use crate::engine::{Kind, Op, Red};
use crate::reduce::{dtype_size, reduce, RedKind};
use crate::state::State;

fn read(st: &State, addr: u64, len: usize) -> Result<Vec<u8>, String> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if st.alloc_holding(addr, len).is_none() {
        return Err(format!(
            "illegal address: read of {len} bytes at {addr:#x} outside any live allocation"
        ));
    }
    // SAFETY: the range lies inside a live allocation.
    Ok(unsafe { std::slice::from_raw_parts(addr as usize as *const u8, len) }.to_vec())
}

/// Checks that partners agree on what they called.
fn check_agreement(ops: &[Op]) -> Result<(), String> {
    let a = &ops[0];
    if a.kind.is_p2p() {
        let (s, r) = (&ops[0], &ops[1]);
        let bytes = |o: &Op| o.count * dtype_size(o.dtype);
        if s.kind == r.kind || bytes(s) != bytes(r) {
            return Err(format!(
                "p2p mismatch: rank {} {} {} bytes vs rank {} {} {} bytes",
                s.rank,
                s.kind.c_name(),
                bytes(s),
                r.rank,
                r.kind.c_name(),
                bytes(r)
            ));
        }
        return Ok(());
    }
    for b in &ops[1..] {
        let same_red = match (a.red, b.red) {
            (Red::Builtin(x), Red::Builtin(y)) => x == y,
            (Red::PreMulSum { .. }, Red::PreMulSum { .. }) | (Red::None, Red::None) => true,
            _ => false,
        };
        if a.kind != b.kind
            || a.count != b.count
            || a.dtype != b.dtype
            || a.root != b.root
            || !same_red
        {
            return Err(format!(
                "collective mismatch: rank {} called {}(count {}, dtype {}, root {}) but rank {} called {}(count {}, dtype {}, root {})",
                a.rank, a.kind.c_name(), a.count, a.dtype, a.root, b.rank, b.kind.c_name(), b.count, b.dtype, b.root
            ));
        }
    }
    Ok(())
}

/// The bytes rank `o`'s part of a matched call reads from its send buffer (`root` is the
/// call's root, clamped to the communicator).
pub fn input_len(o: &Op, root: usize) -> usize {
    let bytes = o.count * dtype_size(o.dtype);
    match o.kind {
        Kind::AllReduce | Kind::Reduce | Kind::AllGather | Kind::Gather | Kind::Send => bytes,
        Kind::ReduceScatter | Kind::AlltoAll => o.nranks * bytes,
        Kind::Broadcast if o.rank == root => bytes,
        Kind::Scatter if o.rank == root => o.nranks * bytes,
        Kind::Broadcast | Kind::Scatter | Kind::Recv => 0,
    }
}

/// The root of a matched call, clamped to the communicator as NCCL's argument check leaves it.
pub fn root_of(o: &Op) -> usize {
    usize::try_from(o.root)
        .unwrap_or(0)
        .min(o.nranks.saturating_sub(1))
}

/// One rank's part as the matching sees it: what it reads (`input`) and its PreMulSum scalar
/// (element bytes, read when the op ran; zero otherwise).
#[derive(Debug, Clone)]
pub struct Part {
    pub op: Op,
    pub input: Vec<u8>,
    pub scalar: [u8; 8],
}

/// Reads rank `o`'s input and scalar from this process's memory.
pub fn part_of(st: &State, o: &Op) -> Result<Part, String> {
    let input = read(st, o.send, input_len(o, root_of(o)))?;
    let mut scalar = [0u8; 8];
    if let Red::PreMulSum { op, .. } = o.red {
        match op.scalar {
            Scalar::Host(v) => scalar = v,
            Scalar::Device(p) => {
                let s = dtype_size(op.dtype);
                scalar[..s].copy_from_slice(&read(st, p, s)?);
            }
        }
    }
    Ok(Part {
        op: o.clone(),
        input,
        scalar,
    })
}

/// Runs one matched op (all ranks' parts, sorted by rank) in this process.
pub fn execute(st: &State, ops: &[Op]) -> Result<(), String> {
    check_agreement(ops)?;
    let parts = ops
        .iter()
        .map(|o| part_of(st, o))
        .collect::<Result<Vec<_>, _>>()?;
    let out = compute(&parts)?;
    // The rank's receiving part (a send to self has two parts of one rank).
    let at = |rank: usize| {
        ops.iter()
            .find(|o| o.rank == rank && o.kind != Kind::Send)
            .map_or(0, |o| o.recv)
    };
    let out: Vec<(u64, Bytes)> = out.into_iter().map(|(r, d)| (at(r), d)).collect();
    write_all(st, out)
}

/// Writes outputs into this process's memory, every range checked before any is written.
pub fn write_all(st: &State, out: Vec<(u64, Bytes)>) -> Result<(), String> {
    for (addr, data) in &out {
        if !data.is_empty() && st.alloc_holding(*addr, data.len()).is_none() {
            return Err(format!(
                "illegal address: write of {} bytes at {addr:#x} outside any live allocation",
                data.len()
            ));
        }
    }
    for (addr, data) in out {
        // SAFETY: checked above to lie inside a live allocation; inputs were copied out first.
        unsafe { std::ptr::copy(data.as_ptr(), addr as usize as *mut u8, data.len()) };
    }
    Ok(())
}

/// An output, shared by the ranks that receive the same bytes (all-reduce, all-gather,
/// broadcast) instead of copied for each.
pub type Bytes = Arc<Vec<u8>>;

/// What a matched call writes: `(rank, bytes for its receive buffer)`, from every rank's part
/// (sorted by rank; wherever the ranks live), agreement checked. Pure, so the process that
/// runs a call spanning processes computes exactly what one process would.
pub fn compute(parts: &[Part]) -> Result<Vec<(usize, Bytes)>, String> {
    let ops: Vec<Op> = parts.iter().map(|p| p.op.clone()).collect();
    check_agreement(&ops)?;
    let a = &ops[0];
    let (c, es) = (a.count, dtype_size(a.dtype));
    let bytes = c * es;
    let root = root_of(a);
    let inputs: Vec<&[u8]> = parts.iter().map(|p| p.input.as_slice()).collect();
    let mut out: Vec<(usize, Bytes)> = Vec::new();
    match a.kind {
        Kind::AllReduce | Kind::Reduce => {
            let result = Arc::new(reduce_all(parts, &inputs)?);
            for o in ops
                .iter()
                .filter(|o| a.kind == Kind::AllReduce || o.rank == root)
            {
                out.push((o.rank, Arc::clone(&result)));
            }
        }
        Kind::ReduceScatter => {
            for (r, o) in ops.iter().enumerate() {
                let chunks: Vec<&[u8]> = inputs
                    .iter()
                    .map(|v| &v[r * bytes..(r + 1) * bytes])
                    .collect();
                out.push((o.rank, Arc::new(reduce_all(parts, &chunks)?)));
            }
        }
        Kind::Broadcast => {
            let data = Arc::new(inputs[root].to_vec());
            out.extend(ops.iter().map(|o| (o.rank, Arc::clone(&data))));
        }
        Kind::AllGather | Kind::Gather => {
            let data = Arc::new(inputs.concat());
            for o in ops
                .iter()
                .filter(|o| a.kind == Kind::AllGather || o.rank == root)
            {
                out.push((o.rank, Arc::clone(&data)));
            }
        }
        Kind::AlltoAll => {
            for (r, o) in ops.iter().enumerate() {
                let mut data = Vec::with_capacity(inputs.len() * bytes);
                for v in &inputs {
                    data.extend_from_slice(&v[r * bytes..(r + 1) * bytes]);
                }
                out.push((o.rank, Arc::new(data)));
            }
        }
        Kind::Scatter => {
            let data = inputs[root];
            for (r, o) in ops.iter().enumerate() {
                out.push((o.rank, Arc::new(data[r * bytes..(r + 1) * bytes].to_vec())));
            }
        }
        Kind::Send | Kind::Recv => {
            let send = parts
                .iter()
                .find(|p| p.op.kind == Kind::Send)
                .expect("checked");
            let recv = ops.iter().find(|o| o.kind == Kind::Recv).expect("checked");
            out.push((recv.rank, Arc::new(send.input.clone())));
        }
    }
    if let Some(hooked) = ops.iter().find(|o| o.corrupt) {
        // The named rank's output when it has one, else the lowest rank's that has one.
        let wanted = hooked.corrupt_rank;
        let target = out
            .iter()
            .filter(|o| !o.1.is_empty())
            .map(|o| o.0)
            .find(|&r| Some(r) == wanted)
            .or_else(|| out.iter().filter(|o| !o.1.is_empty()).map(|o| o.0).min());
        if let Some((_, data)) = out.iter_mut().find(|o| Some(o.0) == target) {
            // Its own copy: the ranks sharing the bytes keep the right ones.
            Arc::make_mut(data)[es - 1] ^= 0x40;
        }
    }
    Ok(out)
}

/// Reduces per-rank `inputs` with the parts' reduction (each rank's PreMulSum scalar).
fn reduce_all(parts: &[Part], inputs: &[&[u8]]) -> Result<Vec<u8>, String> {
    let a = &parts[0].op;
    let (kind, scalars) = match a.red {
        Red::Builtin(code) => (RedKind::from_code(code).ok_or("bad op")?, Vec::new()),
        Red::PreMulSum { .. } => {
            if parts
                .iter()
                .any(|p| !matches!(p.op.red, Red::PreMulSum { .. }))
            {
                return Err("mixed reductions".into());
            }
            (
                RedKind::PreMulSum,
                parts.iter().map(|p| p.scalar).collect::<Vec<_>>(),
            )
        }
        Red::None => return Err("reduction without an op".into()),
    };
    Ok(reduce(a.dtype, kind, &scalars, inputs))
}
