//! What a matched op does to memory, as NCCL defines each call: every input is read before any
//! output is written, so in-place and overlapping buffers behave as one kernel would leave
//! them. Buffers are re-checked against the live allocations first (freed memory is an error,
//! never a crash), and partners must agree on the call's shape.

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

/// Runs one matched op (all ranks' parts, sorted by rank).
pub fn execute(st: &State, ops: &[Op]) -> Result<(), String> {
    check_agreement(ops)?;
    let a = &ops[0];
    let (n, c, es) = (a.nranks, a.count, dtype_size(a.dtype));
    let bytes = c * es;
    let root = usize::try_from(a.root)
        .unwrap_or(0)
        .min(n.saturating_sub(1));
    let inputs = |elems: usize| -> Result<Vec<Vec<u8>>, String> {
        ops.iter().map(|o| read(st, o.send, elems * es)).collect()
    };
    // (rank, address, data) to write once everything was read.
    let mut out: Vec<(usize, u64, Vec<u8>)> = Vec::new();
    match a.kind {
        Kind::AllReduce | Kind::Reduce => {
            let result = reduce_all(st, ops, &inputs(c)?)?;
            for o in ops
                .iter()
                .filter(|o| a.kind == Kind::AllReduce || o.rank == root)
            {
                out.push((o.rank, o.recv, result.clone()));
            }
        }
        Kind::ReduceScatter => {
            let all = inputs(n * c)?;
            for (r, o) in ops.iter().enumerate() {
                let parts: Vec<Vec<u8>> = all
                    .iter()
                    .map(|v| v[r * bytes..(r + 1) * bytes].to_vec())
                    .collect();
                out.push((o.rank, o.recv, reduce_all(st, ops, &parts)?));
            }
        }
        Kind::Broadcast => {
            let data = read(st, ops[root].send, bytes)?;
            out.extend(ops.iter().map(|o| (o.rank, o.recv, data.clone())));
        }
        Kind::AllGather | Kind::Gather => {
            let data = inputs(c)?.concat();
            for o in ops
                .iter()
                .filter(|o| a.kind == Kind::AllGather || o.rank == root)
            {
                out.push((o.rank, o.recv, data.clone()));
            }
        }
        Kind::AlltoAll => {
            let all = inputs(n * c)?;
            for (r, o) in ops.iter().enumerate() {
                let data: Vec<u8> = all
                    .iter()
                    .flat_map(|v| v[r * bytes..(r + 1) * bytes].iter().copied())
                    .collect();
                out.push((o.rank, o.recv, data));
            }
        }
        Kind::Scatter => {
            let data = read(st, ops[root].send, n * bytes)?;
            for (r, o) in ops.iter().enumerate() {
                out.push((o.rank, o.recv, data[r * bytes..(r + 1) * bytes].to_vec()));
            }
        }
        Kind::Send | Kind::Recv => {
            let send = ops.iter().find(|o| o.kind == Kind::Send).expect("checked");
            let recv = ops.iter().find(|o| o.kind == Kind::Recv).expect("checked");
            out.push((recv.rank, recv.recv, read(st, send.send, bytes)?));
        }
    }
    if ops.iter().any(|o| o.corrupt) {
        if let Some((_, _, data)) = out
            .iter_mut()
            .filter(|o| !o.2.is_empty())
            .min_by_key(|o| o.0)
        {
            data[es - 1] ^= 0x40;
        }
    }
    for (_, addr, data) in &out {
        if !data.is_empty() && st.alloc_holding(*addr, data.len()).is_none() {
            return Err(format!(
                "illegal address: write of {} bytes at {addr:#x} outside any live allocation",
                data.len()
            ));
        }
    }
    for (_, addr, data) in out {
        // SAFETY: checked above to lie inside a live allocation; inputs were copied out first.
        unsafe { std::ptr::copy(data.as_ptr(), addr as usize as *mut u8, data.len()) };
    }
    Ok(())
}

/// Reduces per-rank `inputs` with the ops' reduction (PreMulSum scalars read now).
fn reduce_all(st: &State, ops: &[Op], inputs: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    let a = &ops[0];
    let (kind, scalars) = match a.red {
        Red::Builtin(code) => (RedKind::from_code(code).ok_or("bad op")?, Vec::new()),
        Red::PreMulSum { .. } => {
            let mut scalars = Vec::new();
            for o in ops {
                let Red::PreMulSum { op, .. } = o.red else {
                    return Err("mixed reductions".into());
                };
                let mut b = [0u8; 8];
                match op.scalar {
                    Scalar::Host(v) => b = v,
                    Scalar::Device(p) => {
                        let s = dtype_size(op.dtype);
                        b[..s].copy_from_slice(&read(st, p, s)?);
                    }
                }
                scalars.push(b);
            }
            (RedKind::PreMulSum, scalars)
        }
        Red::None => return Err("reduction without an op".into()),
    };
    Ok(reduce(a.dtype, kind, &scalars, inputs))
}
