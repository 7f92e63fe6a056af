//! A tiny in-test backend: every rank local, `Vec<u8>` buffers, and `launch` runs a naive model
//! of each collective written from NCCL's API semantics (not from the collective table), with the
//! reductions of [`super::reducer`].

use super::reducer::{reduce, Order};
use crate::bench::backend::{
    Backend, BackendInfo, Buf, BufPtr, Call, DeviceInfo, EventId, GraphId,
};
use crate::core::collective::alltoallv::pair_elems;
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use std::time::{Duration, Instant};

/// All ranks in one process, buffers in host memory.
pub(crate) struct Mock {
    info: BackendInfo,
    bufs: Vec<[Vec<u8>; 2]>,
    /// How the model combines rank contributions.
    pub order: Order,
    /// The most bytes one `fill` or `inspect` asked for.
    pub largest: usize,
}

impl Mock {
    /// `nranks` local ranks with nothing allocated.
    pub fn new(nranks: usize) -> Mock {
        Mock {
            info: BackendInfo {
                name: crate::result::BackendKind::Host,
                nranks,
                first_rank: 0,
                local_ranks: nranks,
                header_lines: Vec::new(),
                nccl_headers: None,
                nccl_library: None,
                memory_per_rank: None,
                device_memory: None,
            },
            bufs: vec![[Vec::new(), Vec::new()]; nranks],
            order: Order::Left,
            largest: 0,
        }
    }

    /// One rank's allocation, for tests that corrupt it directly.
    pub fn buffer(&mut self, rank: usize, buf: Buf) -> &mut Vec<u8> {
        &mut self.bufs[rank][buf as usize]
    }

    fn range(&self, local: usize, buf: Buf, offset: usize, len: usize) -> Result<(), Error> {
        let size = self.bufs.get(local).map_or(0, |b| b[buf as usize].len());
        if local >= self.bufs.len() || offset + len > size {
            return Err(Error::Backend(format!(
                "mock: {len} bytes at {offset} outside rank {local}'s {size}-byte {buf:?} buffer"
            )));
        }
        Ok(())
    }

    fn read(&self, r: usize, p: BufPtr, elems: usize, elt: usize) -> Vec<u8> {
        self.bufs[r][p.buf as usize][p.offset..p.offset + elems * elt].to_vec()
    }
}

/// Element `i` of little-endian bytes `v` with `elt`-byte elements.
fn elem(v: &[u8], i: usize, elt: usize) -> u64 {
    let mut b = [0u8; 8];
    b[..elt].copy_from_slice(&v[i * elt..(i + 1) * elt]);
    u64::from_le_bytes(b)
}

impl Backend for Mock {
    fn info(&self) -> &BackendInfo {
        &self.info
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        Vec::new()
    }
    fn supports(&self, _dtype: DataType, _op: RedOp) -> bool {
        true
    }
    fn allocate(&mut self, send_bytes: usize, recv_bytes: usize) -> Result<(), Error> {
        for b in &mut self.bufs {
            *b = [vec![0xAB; send_bytes], vec![0xCD; recv_bytes]];
        }
        Ok(())
    }
    fn fill(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), Error> {
        self.range(local, buf, offset, len)?;
        self.largest = self.largest.max(len);
        f(&mut self.bufs[local][buf as usize][offset..offset + len]);
        Ok(())
    }
    fn inspect(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(), Error> {
        self.range(local, buf, offset, len)?;
        self.largest = self.largest.max(len);
        f(&self.bufs[local][buf as usize][offset..offset + len]);
        Ok(())
    }
    fn group_start(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn group_end(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        let (n, c, elt) = (call.ranks.len(), call.count, call.dtype.size());
        use Collective as C;
        // NCCL's argument sizes: `count` is the per-rank chunk of the divided collectives.
        let send_elems = match call.coll {
            C::ReduceScatter | C::Scatter | C::AllToAll => n * c,
            C::AllToAllv => {
                call.coll
                    .shape_from_count(&call.traffic, c, call.dtype, n)
                    .send_elems
            }
            _ => c,
        };
        // Read every input before writing anything (in-place buffers overlap).
        let ins: Vec<Vec<u8>> = (0..n)
            .map(|r| self.read(r, call.ranks[r].send, send_elems, elt))
            .collect();
        let red = |r: usize, at: usize| -> u64 {
            let xs: Vec<u64> = (0..n).map(|q| elem(&ins[q], at, elt)).collect();
            let order = match self.order {
                super::reducer::Order::Shuffled(s) => {
                    super::reducer::Order::Shuffled(s ^ (at as u64) ^ ((r as u64) << 32))
                }
                o => o,
            };
            reduce(call.dtype, call.op, &xs, order)
        };
        // outs[r] = Some(elements) for every rank whose receive buffer the call writes.
        let outs: Vec<Option<Vec<u64>>> = (0..n)
            .map(|r| {
                let root = r == call.root;
                match call.coll {
                    C::AllReduce => Some((0..c).map(|i| red(r, i)).collect()),
                    C::Reduce => root.then(|| (0..c).map(|i| red(r, i)).collect()),
                    C::ReduceScatter => Some((0..c).map(|i| red(r, r * c + i)).collect()),
                    C::Broadcast => Some((0..c).map(|i| elem(&ins[call.root], i, elt)).collect()),
                    C::AllGather | C::Hypercube => {
                        Some((0..n * c).map(|k| elem(&ins[k / c], k % c, elt)).collect())
                    }
                    C::Gather => {
                        root.then(|| (0..n * c).map(|k| elem(&ins[k / c], k % c, elt)).collect())
                    }
                    C::Scatter => Some(
                        (0..c)
                            .map(|i| elem(&ins[call.root], r * c + i, elt))
                            .collect(),
                    ),
                    C::AllToAll => Some(
                        (0..n * c)
                            .map(|k| elem(&ins[k / c], r * c + k % c, elt))
                            .collect(),
                    ),
                    C::AllToAllv => {
                        let pair = |s: usize, d: usize| pair_elems(&call.traffic, c, elt, s, d, n);
                        let mut out = Vec::new();
                        for (src, input) in ins.iter().enumerate() {
                            let from: usize = (0..r).map(|k| pair(src, k)).sum();
                            out.extend((0..pair(src, r)).map(|i| elem(input, from + i, elt)));
                        }
                        Some(out)
                    }
                    C::SendRecv => Some(
                        (0..c)
                            .map(|i| elem(&ins[(r + n - 1) % n], i, elt))
                            .collect(),
                    ),
                }
            })
            .collect();
        for (r, out) in outs.into_iter().enumerate() {
            let Some(out) = out else { continue };
            let p = call.ranks[r].recv;
            let buf = &mut self.bufs[r][p.buf as usize];
            for (k, v) in out.into_iter().enumerate() {
                let at = p.offset + k * elt;
                buf[at..at + elt].copy_from_slice(&v.to_le_bytes()[..elt]);
            }
        }
        Ok(())
    }
    fn wait(&mut self, _deadline: Option<Instant>) -> Result<(), Error> {
        Ok(())
    }
    fn record_event(&mut self) -> Result<EventId, Error> {
        Ok(EventId(0))
    }
    fn event_elapsed(&mut self, _start: EventId, _end: EventId) -> Result<Duration, Error> {
        Ok(Duration::ZERO)
    }
    fn begin_capture(&mut self) -> Result<(), Error> {
        Err(Error::Backend("mock: no graphs".into()))
    }
    fn end_capture(&mut self) -> Result<GraphId, Error> {
        Err(Error::Backend("mock: no graphs".into()))
    }
    fn launch_graph(&mut self, _graph: GraphId) -> Result<(), Error> {
        Err(Error::Backend("mock: no graphs".into()))
    }
    fn destroy_graphs(&mut self) -> Result<(), Error> {
        Ok(())
    }
}
