//! The runs a verified call fills and checks: every local rank's receive region and send
//! segments before the call, every expected segment after it, each as one [`Run`] (a buffer
//! position and a [`Content`] run). The host path ([`super::prepare`], [`super::check`]) and the
//! device kernels walk the same list, so they fill and check exactly the same elements.

use super::CheckCase;
use crate::bench::backend::{Buf, KernelRun, RankArgs};
use crate::core::collective::{Content, Segment};
use crate::core::error::Error;

/// One run of elements of one local rank's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Local rank.
    pub local: usize,
    /// Global rank (whose pattern the run is).
    pub rank: usize,
    /// Which allocation.
    pub buf: Buf,
    /// Byte offset of the run's first element in that allocation.
    pub offset: usize,
    /// Elements.
    pub len: usize,
    /// What the run holds.
    pub content: Content,
    /// Element position of the run's first element relative to the pointer the collective saw
    /// (the `at` of [`super::write_content`] and [`super::count_wrong`]).
    pub at: usize,
}

impl Run {
    /// Where the device kernels find this run.
    pub fn kernel_run(&self) -> KernelRun {
        KernelRun {
            local: self.local,
            buf: self.buf,
            offset: self.offset,
            elems: self.len,
        }
    }

    /// This run as consecutive runs of at most `max_elems` elements of `elt` bytes (at least
    /// one each), so a host fill or check of any size needs a bounded buffer.
    pub fn chunks(self, max_elems: usize, elt: usize) -> impl Iterator<Item = Run> {
        let step = max_elems.max(1);
        (0..self.len).step_by(step).map(move |skip| Run {
            offset: self.offset + skip * elt,
            len: step.min(self.len - skip),
            content: shifted(self.content, skip),
            at: self.at + skip,
            ..self
        })
    }
}

/// What [`super::prepare`] writes, in order: each local rank's receive region zeroed, then its
/// send segments (for in-place calls they land inside the receive region, over the zeros).
pub fn fill_runs(case: &CheckCase) -> Result<Vec<Run>, Error> {
    let mut runs = Vec::new();
    for (local, (rank, args)) in case.ranks()?.into_iter().enumerate() {
        if case.shape.recv_elems > 0 {
            runs.push(Run {
                local,
                rank,
                buf: args.recv.buf,
                offset: args.recv.offset,
                len: case.shape.recv_elems,
                content: Content::Unchanged,
                at: 0,
            });
        }
        let elt = case.dtype.size();
        for seg in case.send_segments(rank).into_iter().filter(|s| s.len > 0) {
            runs.push(Run {
                local,
                rank,
                buf: args.send.buf,
                offset: args.send.offset + seg.start * elt,
                len: seg.len,
                content: seg.content,
                at: seg.start,
            });
        }
    }
    Ok(runs)
}

/// What [`super::check`] counts: every local rank's expected segments over its receive region,
/// [`Content::Unchanged`] split into what `prepare` left there (zeros, and in-place send data).
pub fn check_runs(case: &CheckCase) -> Result<Vec<Run>, Error> {
    let elt = case.dtype.size();
    let mut runs = Vec::new();
    for (local, (rank, args)) in case.ranks()?.into_iter().enumerate() {
        let expected =
            case.coll
                .expected_contents(&case.traffic, &case.shape, rank, case.nranks, case.root);
        for seg in expected.into_iter().filter(|s| s.len > 0) {
            let start = args.recv.offset + seg.start * elt;
            let pieces = if seg.content == Content::Unchanged {
                left_by_prepare(case, rank, &args, start, seg.len)
            } else {
                vec![(start, seg)]
            };
            for (offset, piece) in pieces {
                runs.push(Run {
                    local,
                    rank,
                    buf: args.recv.buf,
                    offset,
                    len: piece.len,
                    content: piece.content,
                    at: piece.start,
                });
            }
        }
    }
    Ok(runs)
}

/// What `prepare` left in `len` elements of the receive allocation at byte `start`: pieces
/// (byte offset, segment) of the send data that overlap it (in-place calls) and zeros elsewhere.
/// Each returned segment's `start` is its position relative to the send pointer, as
/// `write_content` saw it.
fn left_by_prepare(
    case: &CheckCase,
    rank: usize,
    args: &RankArgs,
    start: usize,
    len: usize,
) -> Vec<(usize, Segment)> {
    let elt = case.dtype.size();
    let end = start + len * elt;
    let zeros = |from: usize, to: usize| Segment {
        start: 0,
        len: (to - from) / elt,
        content: Content::Unchanged,
    };
    let mut sends: Vec<Segment> = match args.send.buf {
        Buf::Recv => case.send_segments(rank),
        Buf::Send => Vec::new(),
    };
    sends.sort_by_key(|s| s.start);
    let mut out = Vec::new();
    let mut at = start;
    for s in sends {
        let s0 = args.send.offset + s.start * elt;
        let (lo, hi) = (s0.max(at), (s0 + s.len * elt).min(end));
        if lo >= hi {
            continue;
        }
        if lo > at {
            out.push((at, zeros(at, lo)));
        }
        let skip = (lo - s0) / elt;
        let piece = Segment {
            start: s.start + skip,
            len: (hi - lo) / elt,
            content: shifted(s.content, skip),
        };
        out.push((lo, piece));
        at = hi;
    }
    if at < end {
        out.push((at, zeros(at, end)));
    }
    out
}

/// `content` starting `skip` elements later.
fn shifted(content: Content, skip: usize) -> Content {
    match content {
        Content::ReduceInput { first } => Content::ReduceInput {
            first: first + skip,
        },
        Content::Reduced { first } => Content::Reduced {
            first: first + skip,
        },
        Content::Plain { first } => Content::Plain {
            first: first + skip,
        },
        other => other,
    }
}
