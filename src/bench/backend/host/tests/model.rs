//! The naive model the tests compare against: element values from a hash, a scalar reference
//! of every reduction (one element at a time, through `f64` or `i128`), and every collective's
//! effect on whole allocations written out the obvious way.

use crate::bench::backend::{Buf, BufPtr, Call};
use crate::core::collective::alltoallv::pair_elems;
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::numeric::{from_f64, load, store, to_f64, width_mask};
use crate::core::op::{mulsum_scalar, RedOp};

/// splitmix64: a well-mixed hash of `x`.
pub(super) fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// An element for collective tests: any integer, or a small integer as a float (so sums and
/// products of a few of them stay exact or saturate identically).
pub(super) fn value(dtype: DataType, h: u64) -> u64 {
    if dtype.is_float() {
        from_f64(dtype, (h % 7) as f64 - 3.0)
    } else {
        h & width_mask(dtype)
    }
}

/// A finite float element spread over a wide range (or raw finite bits), for kernel tests.
pub(super) fn finite(dtype: DataType, mut h: u64) -> u64 {
    loop {
        let bits = if h & 1 == 0 {
            h >> 8 & width_mask(dtype)
        } else {
            let e = (h >> 8) % 41;
            let m = 1.0 + ((h >> 16) % 1024) as f64 / 1024.0;
            let sign = if h & 2 == 0 { 1.0 } else { -1.0 };
            from_f64(dtype, sign * m * 2f64.powi(e as i32 - 20))
        };
        if to_f64(dtype, bits).is_finite() {
            return bits;
        }
        h = mix(h);
    }
}

/// The reduction of one element over ranks (`xs[j]` is rank j's bits), computed naively:
/// floats round every step to the type, integers work in `i128` and keep the low bits.
pub(super) fn naive(dtype: DataType, op: RedOp, xs: &[u64]) -> u64 {
    let n = xs.len();
    let scalar = |j: usize| match op {
        RedOp::Avg => 1.0 / n as f64,
        _ => f64::from(mulsum_scalar(j)),
    };
    if dtype.is_float() {
        let round = |v: f64| to_f64(dtype, from_f64(dtype, v));
        let v: Vec<f64> = xs.iter().map(|&b| to_f64(dtype, b)).collect();
        let terms: Vec<f64> = match op {
            RedOp::Avg | RedOp::MulSum => (0..n).map(|j| round(v[j] * round(scalar(j)))).collect(),
            _ => v,
        };
        let step = |a: f64, b: f64| match op {
            RedOp::Prod => round(a * b),
            RedOp::Max => a.max(b),
            RedOp::Min => a.min(b),
            _ => round(a + b),
        };
        let acc = terms[1..].iter().fold(terms[0], |a, &b| step(a, b));
        return from_f64(dtype, acc);
    }
    let mask = width_mask(dtype);
    let bits = 8 * dtype.size() as u32;
    let signed = |b: u64| -> i128 {
        if dtype.is_signed_int() {
            ((b as i128) << (128 - bits)) >> (128 - bits)
        } else {
            b as i128
        }
    };
    let v: Vec<i128> = xs.iter().map(|&b| signed(b)).collect();
    let wrap = |x: i128| (x as u64) & mask;
    let r = match op {
        RedOp::Sum => v.iter().fold(0i128, |a, &b| a.wrapping_add(b)),
        RedOp::Prod => v.iter().fold(1i128, |a, &b| a.wrapping_mul(b)),
        RedOp::Max => *v.iter().max().unwrap_or(&0),
        RedOp::Min => *v.iter().min().unwrap_or(&0),
        RedOp::Avg => signed(wrap(v.iter().sum::<i128>())) / n as i128,
        RedOp::MulSum => (0..n).map(|j| v[j] * i128::from(mulsum_scalar(j))).sum(),
    };
    wrap(r)
}

/// Every rank's allocations `[send, recv]` after `call`, from the allocations before it: all
/// inputs are read from the "before" state, then the outputs are written.
pub(super) fn model(call: &Call, n: usize, before: &[[Vec<u8>; 2]]) -> Vec<[Vec<u8>; 2]> {
    let (dt, c, root) = (call.dtype, call.count, call.root);
    let elt = dt.size();
    let idx = |b: Buf| usize::from(b == Buf::Recv);
    let get = |r: usize, p: BufPtr, first: usize, len: usize| -> Vec<u8> {
        let a = p.offset + first * elt;
        before[r][idx(p.buf)][a..a + len * elt].to_vec()
    };
    let send = |r: usize, first: usize, len: usize| get(r, call.ranks[r].send, first, len);
    let reduced = |first: usize| -> Vec<u8> {
        let inputs: Vec<Vec<u8>> = (0..n).map(|j| send(j, first, c)).collect();
        let mut out = vec![0u8; c * elt];
        for k in 0..c {
            let xs: Vec<u64> = inputs.iter().map(|i| load(dt, i, k)).collect();
            store(dt, &mut out, k, naive(dt, call.op, &xs));
        }
        out
    };
    let mut after = before.to_vec();
    let mut put = |r: usize, first: usize, data: &[u8]| {
        let p = call.ranks[r].recv;
        let a = p.offset + first * elt;
        after[r][idx(p.buf)][a..a + data.len()].copy_from_slice(data);
    };
    match call.coll {
        Collective::AllReduce => {
            let res = reduced(0);
            (0..n).for_each(|r| put(r, 0, &res));
        }
        Collective::Reduce => put(root, 0, &reduced(0)),
        Collective::ReduceScatter => {
            let res: Vec<Vec<u8>> = (0..n).map(|r| reduced(r * c)).collect();
            (0..n).for_each(|r| put(r, 0, &res[r]));
        }
        Collective::Broadcast => {
            let data = send(root, 0, c);
            (0..n).for_each(|r| put(r, 0, &data));
        }
        Collective::AllGather | Collective::Hypercube => {
            let blocks: Vec<Vec<u8>> = (0..n).map(|j| send(j, 0, c)).collect();
            for r in 0..n {
                (0..n).for_each(|j| put(r, j * c, &blocks[j]));
            }
        }
        Collective::Gather => {
            let blocks: Vec<Vec<u8>> = (0..n).map(|j| send(j, 0, c)).collect();
            (0..n).for_each(|j| put(root, j * c, &blocks[j]));
        }
        Collective::Scatter => {
            let blocks: Vec<Vec<u8>> = (0..n).map(|r| send(root, r * c, c)).collect();
            (0..n).for_each(|r| put(r, 0, &blocks[r]));
        }
        Collective::AllToAll => {
            let blocks: Vec<Vec<Vec<u8>>> = (0..n)
                .map(|i| (0..n).map(|r| send(i, r * c, c)).collect())
                .collect();
            // Block r of rank i's send lands in block i of rank r's receive.
            for (i, row) in blocks.iter().enumerate() {
                row.iter().enumerate().for_each(|(r, b)| put(r, i * c, b));
            }
        }
        Collective::AllToAllv => {
            let pair = |s: usize, d: usize| pair_elems(&call.traffic, c, elt, s, d, n);
            for r in 0..n {
                let mut at = 0;
                for src in 0..n {
                    let from: usize = (0..r).map(|k| pair(src, k)).sum();
                    let data = send(src, from, pair(src, r));
                    put(r, at, &data);
                    at += pair(src, r);
                }
            }
        }
        Collective::SendRecv => {
            let blocks: Vec<Vec<u8>> = (0..n).map(|j| send(j, 0, c)).collect();
            (0..n).for_each(|r| put(r, 0, &blocks[(r + n - 1) % n]));
        }
    }
    after
}
