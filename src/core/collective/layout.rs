//! What each rank's buffers hold before and after a call, as runs of elements described by the
//! global pattern index of their first element: the words the specs' content functions use,
//! read by the verifier and the fault-injection tests.

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

impl Segment {
    /// `len` elements from `start` holding `content`.
    pub fn new(start: usize, len: usize, content: Content) -> Segment {
        Segment {
            start,
            len,
            content,
        }
    }
}
