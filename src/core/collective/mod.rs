//! The one table that describes every collective (nccl-tests' per-collective hooks, in our
//! words): element counts, buffer sizes, in-place offsets, bandwidth formulas, whether the op and
//! root apply, and what each rank's buffers hold before and after the call.
//!
//! Backends, the runner, the verifier and the output sinks all ask this table; nothing else
//! re-derives any of it.

use crate::core::dtype::DataType;
use std::fmt;

mod layout;

pub use layout::{Content, Segment};

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
}

impl Collective {
    /// Every collective, in the order of the nccl-tests binary list.
    pub const ALL: [Collective; 10] = [
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
    ];

    /// The name used on the command line and in CSV/JSON (`all_reduce`).
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::AllGather => "all_gather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
            Collective::AllToAll => "alltoall",
            Collective::SendRecv => "sendrecv",
            Collective::Scatter => "scatter",
            Collective::Gather => "gather",
            Collective::Hypercube => "hypercube",
        }
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
        matches!(
            self,
            Collective::AllReduce | Collective::Reduce | Collective::ReduceScatter
        )
    }

    /// True when `-o` values are iterated (reductions, and sendrecv as nccl-tests does).
    pub fn iterates_ops(self) -> bool {
        self.op_column() == OpColumn::Op
    }

    /// What the `redop` column prints.
    pub fn op_column(self) -> OpColumn {
        match self {
            Collective::AllReduce | Collective::Reduce | Collective::ReduceScatter => OpColumn::Op,
            Collective::SendRecv => OpColumn::Op,
            Collective::Hypercube => OpColumn::Blank,
            _ => OpColumn::None,
        }
    }

    /// True when the collective has a root (`-r` applies).
    pub fn rooted(self) -> bool {
        matches!(
            self,
            Collective::Broadcast | Collective::Reduce | Collective::Gather | Collective::Scatter
        )
    }

    /// True when the in-place run is verified; nccl-tests prints `N/A` for the others.
    pub fn checks_in_place(self) -> bool {
        !matches!(self, Collective::SendRecv | Collective::AllToAll)
    }

    /// True when the rank count must be a power of two.
    pub fn needs_power_of_two_ranks(self) -> bool {
        self == Collective::Hypercube
    }

    /// True when buffers are divided into per-rank chunks aligned to 16 bytes.
    fn divides_by_ranks(self) -> bool {
        !matches!(
            self,
            Collective::AllReduce
                | Collective::Reduce
                | Collective::Broadcast
                | Collective::SendRecv
        )
    }

    /// Element counts for a requested size, as nccl-tests derives them: the full count is
    /// `size / elt`; divided collectives use a per-rank chunk `floor(count / n)` rounded down to
    /// a multiple of 16 bytes.
    pub fn shape(self, size: usize, dtype: DataType, nranks: usize) -> Shape {
        let elt = dtype.size();
        let c = size / elt;
        if !self.divides_by_ranks() {
            return Shape {
                count: c,
                send_elems: c,
                recv_elems: c,
                bytes: c * elt,
            };
        }
        let align = 16 / elt;
        let b = (c / nranks) / align * align;
        let (send, recv) = match self {
            Collective::AllGather | Collective::Hypercube | Collective::Gather => (b, b * nranks),
            Collective::ReduceScatter | Collective::Scatter => (b * nranks, b),
            _ => (b * nranks, b * nranks), // alltoall
        };
        Shape {
            count: b,
            send_elems: send,
            recv_elems: recv,
            bytes: send.max(recv) * elt,
        }
    }

    /// The shape of a call from its NCCL count argument (what a backend sees), the inverse of
    /// [`Collective::shape`].
    pub fn shape_from_count(self, count: usize, dtype: DataType, nranks: usize) -> Shape {
        let (send, recv) = if !self.divides_by_ranks() {
            (count, count)
        } else {
            match self {
                Collective::AllGather | Collective::Hypercube | Collective::Gather => {
                    (count, count * nranks)
                }
                Collective::ReduceScatter | Collective::Scatter => (count * nranks, count),
                _ => (count * nranks, count * nranks),
            }
        };
        Shape {
            count,
            send_elems: send,
            recv_elems: recv,
            bytes: send.max(recv) * dtype.size(),
        }
    }

    /// In-place element offsets `(send, recv)` from the shared buffer's base for `rank`.
    pub fn in_place_offsets(self, shape: &Shape, rank: usize) -> (usize, usize) {
        match self {
            Collective::ReduceScatter | Collective::Scatter => (0, rank * shape.count),
            Collective::AllGather | Collective::Hypercube | Collective::Gather => {
                (rank * shape.count, 0)
            }
            _ => (0, 0),
        }
    }

    /// Bytes in the algbw numerator.
    pub fn algbw_bytes(self, shape: &Shape, dtype: DataType, nranks: usize) -> f64 {
        let elt = dtype.size() as f64;
        match self {
            Collective::Hypercube => shape.count as f64 * (nranks as f64 - 1.0) * elt,
            _ => shape.bytes as f64,
        }
    }

    /// busbw = algbw x this factor.
    pub fn busbw_factor(self, nranks: usize) -> f64 {
        let n = nranks as f64;
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n,
            Collective::ReduceScatter
            | Collective::AllGather
            | Collective::AllToAll
            | Collective::Gather
            | Collective::Scatter => (n - 1.0) / n,
            Collective::Broadcast
            | Collective::Reduce
            | Collective::SendRecv
            | Collective::Hypercube => 1.0,
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
