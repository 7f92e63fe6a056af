//! The one table that describes every collective (nccl-tests' per-collective hooks, in our
//! words): element counts, buffer sizes, in-place offsets, bandwidth formulas, whether the op and
//! root apply, and what each rank's buffers hold before and after the call.
//!
//! Backends, the runner, the verifier and the output sinks all ask this table; nothing else
//! re-derives any of it.

use crate::dtype::DataType;
use std::fmt;

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

/// What a run of consecutive elements of a buffer holds, described by the global pattern index
/// of its first element (see [`crate::verify`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Reduction inputs of this rank at global indices `first..first+len`.
    ReduceInput {
        /// Global index of the first element.
        first: usize,
    },
    /// The reduced result at global indices `first..first+len`.
    Reduced {
        /// Global index of the first element.
        first: usize,
    },
    /// The plain (data-movement) pattern at global indices `first..first+len`.
    Plain {
        /// Global index of the first element.
        first: usize,
    },
    /// Data that must never reach any output (a non-root's send buffer in rooted collectives).
    Decoy,
    /// Whatever the buffer held before the call: the collective must not write here.
    Unchanged,
}

/// A run of `len` elements starting at element `start` of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// First element, relative to the buffer pointer passed to the collective.
    pub start: usize,
    /// Number of elements.
    pub len: usize,
    /// What the elements hold.
    pub content: Content,
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

    /// What `rank`'s send buffer holds before the call (out-of-place layout, relative to the
    /// send pointer).
    pub fn send_contents(
        self,
        shape: &Shape,
        rank: usize,
        nranks: usize,
        root: usize,
    ) -> Vec<Segment> {
        let seg = |start, len, content| Segment {
            start,
            len,
            content,
        };
        let (b, n) = (shape.count, nranks);
        match self {
            Collective::AllReduce | Collective::Reduce | Collective::ReduceScatter => {
                vec![seg(0, shape.send_elems, Content::ReduceInput { first: 0 })]
            }
            Collective::Broadcast | Collective::Scatter => {
                let content = if rank == root {
                    Content::Plain { first: 0 }
                } else {
                    Content::Decoy
                };
                vec![seg(0, shape.send_elems, content)]
            }
            Collective::AllGather | Collective::Hypercube | Collective::Gather => {
                vec![seg(0, b, Content::Plain { first: rank * b })]
            }
            Collective::AllToAll => (0..n)
                .map(|j| {
                    seg(
                        j * b,
                        b,
                        Content::Plain {
                            first: (rank * n + j) * b,
                        },
                    )
                })
                .collect(),
            Collective::SendRecv => vec![seg(0, b, Content::Plain { first: rank * b })],
        }
    }

    /// What `rank`'s receive buffer must hold after the call (relative to the recv pointer).
    pub fn expected_contents(
        self,
        shape: &Shape,
        rank: usize,
        nranks: usize,
        root: usize,
    ) -> Vec<Segment> {
        let seg = |start, len, content| Segment {
            start,
            len,
            content,
        };
        let (b, n, len) = (shape.count, nranks, shape.recv_elems);
        match self {
            Collective::AllReduce => vec![seg(0, len, Content::Reduced { first: 0 })],
            Collective::Reduce => {
                let c = if rank == root {
                    Content::Reduced { first: 0 }
                } else {
                    Content::Unchanged
                };
                vec![seg(0, len, c)]
            }
            Collective::ReduceScatter => vec![seg(0, len, Content::Reduced { first: rank * b })],
            Collective::Broadcast | Collective::AllGather | Collective::Hypercube => {
                vec![seg(0, len, Content::Plain { first: 0 })]
            }
            Collective::Gather => {
                let c = if rank == root {
                    Content::Plain { first: 0 }
                } else {
                    Content::Unchanged
                };
                vec![seg(0, len, c)]
            }
            Collective::Scatter => vec![seg(0, len, Content::Plain { first: rank * b })],
            Collective::AllToAll => (0..n)
                .map(|j| {
                    seg(
                        j * b,
                        b,
                        Content::Plain {
                            first: (j * n + rank) * b,
                        },
                    )
                })
                .collect(),
            Collective::SendRecv => {
                vec![seg(
                    0,
                    len,
                    Content::Plain {
                        first: ((rank + n - 1) % n) * b,
                    },
                )]
            }
        }
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_nccl_tests_including_16_byte_alignment() {
        let s = Collective::AllReduce.shape(8, DataType::Float, 8);
        assert_eq!((s.count, s.bytes), (2, 8));
        // all_gather over 8 ranks: 1 MiB of floats = 262144 elems, per rank 32768.
        let s = Collective::AllGather.shape(1 << 20, DataType::Float, 8);
        assert_eq!(
            (s.count, s.send_elems, s.recv_elems, s.bytes),
            (32768, 32768, 262144, 1 << 20)
        );
        // Tiny sizes round to zero for divided collectives.
        let s = Collective::ReduceScatter.shape(64, DataType::Float, 8);
        assert_eq!((s.count, s.bytes), (0, 0));
        // 3 ranks, 100 int8: floor(100/3)=33 -> 32 (multiple of 16 elements).
        let s = Collective::AllToAll.shape(100, DataType::Int8, 3);
        assert_eq!((s.count, s.send_elems, s.bytes), (32, 96, 96));
        let s = Collective::Scatter.shape(1000, DataType::Double, 2);
        assert_eq!((s.count, s.send_elems, s.recv_elems), (62, 124, 62));
    }

    #[test]
    fn bandwidth_factors_match_the_nccl_tests_formulas() {
        assert_eq!(Collective::AllReduce.busbw_factor(8), 1.75);
        assert_eq!(Collective::AllGather.busbw_factor(4), 0.75);
        assert_eq!(Collective::Broadcast.busbw_factor(4), 1.0);
        let s = Collective::Hypercube.shape(1024, DataType::Float, 4);
        assert_eq!(
            Collective::Hypercube.algbw_bytes(&s, DataType::Float, 4),
            64.0 * 3.0 * 4.0
        );
    }

    #[test]
    fn names_parse_with_and_without_perf_suffix() {
        for c in Collective::ALL {
            assert_eq!(Collective::parse(c.name()), Some(c));
            assert_eq!(Collective::parse(&c.perf_name()), Some(c));
        }
        assert_eq!(Collective::parse("allreduce"), None);
    }

    #[test]
    fn shape_from_count_inverts_shape() {
        for coll in Collective::ALL {
            for n in [1, 2, 3, 8] {
                for size in [0, 8, 1000, 1 << 20] {
                    let s = coll.shape(size, DataType::Half, n);
                    assert_eq!(
                        coll.shape_from_count(s.count, DataType::Half, n),
                        s,
                        "{coll} n={n} size={size}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_expected_element_of_a_data_movement_collective_comes_from_exactly_one_sender() {
        // For each global plain index expected somewhere, some rank must send it.
        for coll in Collective::ALL.into_iter().filter(|c| !c.reduces()) {
            for n in [1usize, 2, 3, 4] {
                let shape = coll.shape(4096, DataType::Float, n);
                let root = n - 1;
                let mut sent = std::collections::HashSet::new();
                for r in 0..n {
                    for s in coll.send_contents(&shape, r, n, root) {
                        if let Content::Plain { first } = s.content {
                            for k in 0..s.len {
                                assert!(sent.insert(first + k), "{coll} sends index twice");
                            }
                        }
                    }
                }
                for r in 0..n {
                    for s in coll.expected_contents(&shape, r, n, root) {
                        if let Content::Plain { first } = s.content {
                            assert!(
                                (first..first + s.len).all(|g| sent.contains(&g)),
                                "{coll} n={n}"
                            );
                        }
                    }
                }
            }
        }
    }
}
