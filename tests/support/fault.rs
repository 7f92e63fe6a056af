//! A backend wrapper that corrupts collectives in controlled ways, to prove the verifier sees
//! every kind of wrong result: a flipped bit, a rank's contribution dropped, two chunks swapped,
//! a chunk shifted by one element, and a receive buffer left stale.

use ncclbench::bench::backend::forward::Forward;
use ncclbench::bench::backend::{Backend, BufPtr, Call};
use ncclbench::core::dtype::DataType;
use ncclbench::core::error::Error;
use ncclbench::core::numeric;
use ncclbench::core::op::RedOp;
use std::time::{Duration, Instant};

/// One way to corrupt the last call before the runner looks at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Flip bit `bit` of element `elem` of `rank`'s receive region.
    FlipBit { rank: usize, elem: usize, bit: u32 },
    /// Replace `rank`'s send data by the op's identity (zeros for data movement) before launch.
    DropRank { rank: usize },
    /// Swap the first two chunks (of len recv/max(2,n)) of `rank`'s receive region.
    SwapChunks { rank: usize },
    /// Move the first chunk of `rank`'s receive region one element up.
    ShiftChunk { rank: usize },
    /// Do not run the collective at all: receive buffers keep what was there.
    Stale,
    /// Never complete: every wait with a deadline runs into it (a wait without one would hang,
    /// so it is passed through).
    Hang,
    /// Correct results, but every launch costs the host this long (a slow enqueue).
    SlowLaunch(Duration),
}

/// Delegates to `inner`, corrupting per `fault`.
pub struct Faulty<B: Backend> {
    pub inner: B,
    pub fault: Fault,
    last: Option<Call>,
}

impl<B: Backend> Faulty<B> {
    pub fn new(inner: B, fault: Fault) -> Self {
        Faulty {
            inner,
            fault,
            last: None,
        }
    }

    fn region(&self, call: &Call, rank: usize) -> (BufPtr, usize, usize) {
        let n = self.inner.info().nranks;
        let shape = call
            .coll
            .shape_from_count(&call.traffic, call.count, call.dtype, n);
        (call.ranks[rank].recv, shape.recv_elems, call.dtype.size())
    }

    fn corrupt(&mut self, call: &Call) -> Result<(), Error> {
        let n = self.inner.info().nranks;
        match self.fault {
            Fault::FlipBit { rank, elem, bit } => {
                let (p, len, w) = self.region(call, rank);
                if elem < len {
                    self.inner
                        .fill(rank, p.buf, p.offset + elem * w, w, &mut |b| {
                            b[(bit / 8) as usize] ^= 1 << (bit % 8)
                        })?;
                }
            }
            Fault::SwapChunks { rank } => {
                let (p, len, w) = self.region(call, rank);
                let l = len / n.max(2);
                if l > 0 {
                    self.inner
                        .fill(rank, p.buf, p.offset, 2 * l * w, &mut |b| {
                            let (x, y) = b.split_at_mut(l * w);
                            x.swap_with_slice(y)
                        })?;
                }
            }
            Fault::ShiftChunk { rank } => {
                let (p, len, w) = self.region(call, rank);
                let l = (len / n.max(2)).min(len.saturating_sub(1));
                if l > 0 {
                    self.inner
                        .fill(rank, p.buf, p.offset, (l + 1) * w, &mut |b| {
                            b.copy_within(0..l * w, w)
                        })?;
                }
            }
            Fault::DropRank { .. } | Fault::Stale | Fault::Hang | Fault::SlowLaunch(_) => {}
        }
        Ok(())
    }
}

/// The identity element of `op` for `dtype` as raw bits (zero for data movement).
pub fn identity_bits(dtype: DataType, op: RedOp, reduces: bool) -> u64 {
    if !reduces {
        return 0;
    }
    let bits = 8 * dtype.size() as u32;
    let signed = dtype.is_signed_int();
    match (op, dtype.is_float()) {
        (RedOp::Sum | RedOp::Avg | RedOp::MulSum, _) => 0,
        (RedOp::Prod, false) => 1,
        (RedOp::Prod, true) => numeric::from_f64(dtype, 1.0),
        (RedOp::Min, true) => numeric::from_f64(dtype, f64::INFINITY),
        (RedOp::Max, true) => numeric::from_f64(dtype, f64::NEG_INFINITY),
        // The largest value: 0x7f.. when signed, all ones when unsigned.
        (RedOp::Min, false) if signed => u64::MAX >> (65 - bits),
        (RedOp::Min, false) => numeric::width_mask(dtype),
        // The smallest value: 0x80.. when signed, zero when unsigned.
        (RedOp::Max, false) if signed => 1u64 << (bits - 1),
        (RedOp::Max, false) => 0,
    }
}

impl<B: Backend> Forward for Faulty<B> {
    fn inner(&self) -> &dyn Backend {
        &self.inner
    }
    fn inner_mut(&mut self) -> &mut dyn Backend {
        &mut self.inner
    }
    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        if let Fault::DropRank { rank } = self.fault {
            self.inner.wait(None)?;
            let n = self.inner.info().nranks;
            let shape = call
                .coll
                .shape_from_count(&call.traffic, call.count, call.dtype, n);
            let id = identity_bits(call.dtype, call.op, call.coll.reduces());
            let p = call.ranks[rank].send;
            let dt = call.dtype;
            self.inner.fill(
                rank,
                p.buf,
                p.offset,
                shape.send_elems * dt.size(),
                &mut |b| {
                    for i in 0..shape.send_elems {
                        numeric::store(dt, b, i, id);
                    }
                },
            )?;
        }
        if let Fault::SlowLaunch(d) = self.fault {
            std::thread::sleep(d);
        }
        self.last = Some(call.clone());
        if self.fault == Fault::Stale {
            return Ok(());
        }
        self.inner.launch(call)
    }
    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        if let (Fault::Hang, Some(d)) = (self.fault, deadline) {
            let seconds = d
                .saturating_duration_since(Instant::now())
                .as_secs_f64()
                .round() as u64;
            std::thread::sleep(d.saturating_duration_since(Instant::now()));
            return Err(Error::Timeout {
                seconds,
                what: String::new(),
            });
        }
        self.inner.wait(deadline)?;
        if let Some(call) = self.last.take() {
            self.corrupt(&call)?;
        }
        Ok(())
    }
}
