//! What each rank's buffers hold before and after a call, as runs of elements described by the
//! global pattern index of their first element: the part of the collective table the verifier
//! and the fault-injection tests read.

use super::{Collective, Shape};

/// What a run of consecutive elements of a buffer holds, described by the global pattern index
/// of its first element (see [`crate::bench::verify`]).
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
