//! Every collective of nccl-tests, each described by one [`Spec`] in its own file
//! (`all_reduce.rs`, ...): element counts and per-peer blocks, in-place offsets, bandwidth
//! formulas, whether the op and root apply, what each rank's buffers hold before and after the
//! call, and how NCCL runs and logs it.
//!
//! Backends, the runner, the verifier, the NCCL log join, the output sinks and the analysis all
//! ask these specs through [`Collective`]'s methods; nothing else re-derives any of it. A new
//! collective is one more file here, one variant, and one launch function per backend.

use crate::core::dtype::DataType;
use std::fmt;

mod all_gather;
mod all_reduce;
mod alltoall;
pub mod alltoallv;
mod broadcast;
mod gather;
mod hypercube;
mod layout;
mod reduce;
mod reduce_scatter;
mod scatter;
mod sendrecv;
pub mod spec;
pub mod traffic;

pub use layout::{Content, Segment};
pub use spec::Spec;
use spec::{AlgBytes, InPlace};
pub use traffic::Traffic;

/// One collective of nccl-tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Collective {
    /// `all_reduce`
    AllReduce,
    /// `all_gather`
    AllGather,
    /// `reduce_scatter`
    ReduceScatter,
    /// `broadcast`
    Broadcast,
    /// `reduce`
    Reduce,
    /// `alltoall`
    AllToAll,
    /// `alltoallv`: alltoall with a byte count per pair (generated or from a matrix file)
    AllToAllv,
    /// `sendrecv`: ring exchange, send to rank+1, receive from rank-1
    SendRecv,
    /// `scatter`
    Scatter,
    /// `gather`
    Gather,
    /// `hypercube`: all_gather by log2(n) pairwise exchange steps
    Hypercube,
}

/// What the `redop` column shows for a collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpColumn {
    /// The `-o` name (reductions, and sendrecv as nccl-tests does).
    Op,
    /// The word `none` (data movement).
    None,
    /// An empty string (hypercube).
    Blank,
}

/// Element counts of one collective at one requested size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// The NCCL count argument, printed in the `count` column.
    pub count: usize,
    /// Elements each rank's send buffer holds for the call.
    pub send_elems: usize,
    /// Elements each rank's receive buffer holds for the call.
    pub recv_elems: usize,
    /// Bytes printed in the `size` column: max(send, recv) elements times the element size.
    pub bytes: usize,
    /// Bytes per element.
    pub elt: usize,
}

impl Collective {
    /// Every collective, in the order of the nccl-tests binary list.
    pub const ALL: [Collective; 11] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::Broadcast,
        Collective::ReduceScatter,
        Collective::Reduce,
        Collective::AllToAll,
        Collective::Scatter,
        Collective::SendRecv,
        Collective::Hypercube,
        Collective::Gather,
        Collective::AllToAllv,
    ];

    /// Its description.
    pub fn spec(self) -> &'static Spec {
        match self {
            Collective::AllReduce => &all_reduce::SPEC,
            Collective::AllGather => &all_gather::SPEC,
            Collective::ReduceScatter => &reduce_scatter::SPEC,
            Collective::Broadcast => &broadcast::SPEC,
            Collective::Reduce => &reduce::SPEC,
            Collective::AllToAll => &alltoall::SPEC,
            Collective::AllToAllv => &alltoallv::SPEC,
            Collective::SendRecv => &sendrecv::SPEC,
            Collective::Scatter => &scatter::SPEC,
            Collective::Gather => &gather::SPEC,
            Collective::Hypercube => &hypercube::SPEC,
        }
    }

    /// The name used on the command line and in CSV/JSON (`all_reduce`).
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The nccl-tests binary name (`all_reduce_perf`), printed as the test name.
    pub fn perf_name(self) -> String {
        format!("{}_perf", self.name())
    }

    /// Parses a collective name; also accepts the `<name>_perf` binary names.
    pub fn parse(name: &str) -> Option<Collective> {
        let base = name.strip_suffix("_perf").unwrap_or(name);
        Collective::ALL.into_iter().find(|c| c.name() == base)
    }

    /// True when the collective applies the reduction operator to data.
    pub fn reduces(self) -> bool {
        self.spec().reduces
    }

    /// True when `-o` values are iterated (reductions, and sendrecv as nccl-tests does).
    pub fn iterates_ops(self) -> bool {
        self.op_column() == OpColumn::Op
    }

    /// What the `redop` column prints.
    pub fn op_column(self) -> OpColumn {
        self.spec().op_column
    }

    /// True when the collective has a root (`-r` applies).
    pub fn rooted(self) -> bool {
        self.spec().rooted
    }

    /// True when the in-place run is verified; nccl-tests prints `N/A` for the others.
    pub fn checks_in_place(self) -> bool {
        self.spec().checks_in_place
    }

    /// True when the rank count must be a power of two.
    pub fn needs_power_of_two_ranks(self) -> bool {
        self.spec().power_of_two_ranks
    }

    /// Element counts for a requested size, as nccl-tests derives them: the count is the
    /// spec's rule on `size / elt` (the whole count, or a per-rank block `floor(count / n)`
    /// rounded down to a multiple of 16 bytes). `t` is the run's alltoallv traffic, which only
    /// alltoallv reads; every other collective ignores it.
    pub fn shape(self, t: &Traffic, size: usize, dtype: DataType, nranks: usize) -> Shape {
        let elt = dtype.size();
        let count = (self.spec().count)(spec::Sizing {
            traffic: t,
            count: size / elt,
            elt,
            nranks,
        });
        self.shape_from_count(t, count, dtype, nranks)
    }

    /// The shape of a call from its NCCL count argument (what a backend sees), the inverse of
    /// [`Collective::shape`]. For an uneven collective the largest rank's buffers.
    pub fn shape_from_count(
        self,
        t: &Traffic,
        count: usize,
        dtype: DataType,
        nranks: usize,
    ) -> Shape {
        let ranks = if self.spec().uneven { nranks } else { 1 };
        let (send, recv) = (0..ranks)
            .map(|r| self.extents(t, count, dtype, r, nranks))
            .try_fold((0usize, 0usize), |(s, d), e| {
                e.map(|(a, b)| (s.max(a), d.max(b)))
            })
            .unwrap_or((usize::MAX, usize::MAX));
        Shape {
            count,
            send_elems: send,
            recv_elems: recv,
            bytes: send.max(recv).saturating_mul(dtype.size()),
            elt: dtype.size(),
        }
    }

    /// Elements of `rank`'s send and receive regions for a call of `count` elements of
    /// `dtype`, or `None` on overflow.
    pub fn extents(
        self,
        t: &Traffic,
        count: usize,
        dtype: DataType,
        rank: usize,
        nranks: usize,
    ) -> Option<(usize, usize)> {
        let (spec, elt) = (self.spec(), dtype.size());
        Some((
            spec.send.elems(t, count, elt, rank, nranks)?,
            spec.recv.elems(t, count, elt, rank, nranks)?,
        ))
    }

    /// In-place element offsets `(send, recv)` from the shared buffer's base for `rank`.
    pub fn in_place_offsets(self, shape: &Shape, rank: usize) -> (usize, usize) {
        match self.spec().in_place {
            InPlace::Base => (0, 0),
            InPlace::SendAtOwnBlock => (rank * shape.count, 0),
            InPlace::RecvAtOwnBlock => (0, rank * shape.count),
        }
    }

    /// Bytes in the algbw numerator.
    pub fn algbw_bytes(self, shape: &Shape, dtype: DataType, nranks: usize) -> f64 {
        match self.spec().algbw {
            AlgBytes::Size => shape.bytes as f64,
            AlgBytes::PeerBlocks => {
                shape.count as f64 * (nranks as f64 - 1.0) * dtype.size() as f64
            }
        }
    }

    /// algbw's numerator over the `size` column's bytes at `nranks` ranks: 1, or `(n-1)/n`
    /// for a collective that counts only its peers' blocks.
    pub fn algbw_ratio(self, nranks: usize) -> f64 {
        match self.spec().algbw {
            AlgBytes::Size => 1.0,
            AlgBytes::PeerBlocks => (nranks as f64 - 1.0) / nranks as f64,
        }
    }

    /// busbw = algbw x this factor.
    pub fn busbw_factor(self, nranks: usize) -> f64 {
        (self.spec().busbw_factor)(nranks as f64)
    }

    /// What `rank`'s send buffer holds before the call (out-of-place layout, relative to the
    /// send pointer).
    pub fn send_contents(
        self,
        t: &Traffic,
        shape: &Shape,
        rank: usize,
        nranks: usize,
        root: usize,
    ) -> Vec<Segment> {
        (self.spec().send_contents)(shape, Self::at(t, rank, nranks, root))
    }

    /// What `rank`'s receive buffer must hold after the call (relative to the recv pointer).
    pub fn expected_contents(
        self,
        t: &Traffic,
        shape: &Shape,
        rank: usize,
        nranks: usize,
        root: usize,
    ) -> Vec<Segment> {
        (self.spec().expected_contents)(shape, Self::at(t, rank, nranks, root))
    }

    fn at(traffic: &Traffic, rank: usize, nranks: usize, root: usize) -> spec::At<'_> {
        spec::At {
            traffic,
            rank,
            nranks,
            root,
        }
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests;
