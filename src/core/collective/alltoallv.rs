//! `alltoallv`: every rank sends a segment of its own size to every rank (nccl-tests 2.19's
//! `alltoallv_perf`). Each pair's byte count comes from the run's [`Traffic`]: generated from
//! the requested size and `NCCL_TESTS_ALLTOALLV_SPREAD`, or read from a matrix file.
//!
//! The traffic is a process-wide setting, as in nccl-tests: it is chosen once from the
//! environment before the run, and every layer (backends, verifier, bandwidth) asks the same
//! functions here, so a segment's size and place cannot differ between them. A rank's send
//! buffer holds its segments in peer order, its receive buffer the segments from each source
//! in rank order; the buffers of every rank are sized for the largest rank.

pub mod matrix;
mod summary;

use super::spec::{AlgBytes, Blocks, InPlace, LogBytes, Nccl, Spec};
use super::{Collective, Content, OpColumn, Segment, Shape};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

pub use matrix::{parse_matrix, Matrix};
pub use summary::summary_lines;

/// Where the per-pair byte counts come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Traffic {
    /// nccl-tests' distance-weighted pattern: 0 uniform, 1 (default) fully weighted by the
    /// distance `(dst - src) mod n`, so no rank sends to itself.
    Generated {
        /// The blend, clamped to 0..=1.
        spread: f64,
    },
    /// Explicit bytes from a matrix file (already scaled and floored to 16 bytes).
    Matrix(Matrix),
}

impl Default for Traffic {
    fn default() -> Traffic {
        Traffic::Generated { spread: 1.0 }
    }
}

static TRAFFIC: RwLock<Option<Arc<Traffic>>> = RwLock::new(None);
static PRINT_SUMMARY: AtomicBool = AtomicBool::new(false);

/// Whether each result is followed by the per-rank summary
/// (`NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY`).
pub fn print_summary() -> bool {
    PRINT_SUMMARY.load(Ordering::Relaxed)
}

/// Sets [`print_summary`].
pub fn set_print_summary(on: bool) {
    PRINT_SUMMARY.store(on, Ordering::Relaxed);
}

/// Makes `t` the traffic of every alltoallv call of this process.
pub fn set_traffic(t: Traffic) {
    *TRAFFIC.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(t));
}

/// The traffic in force (the generated default until [`set_traffic`]).
pub fn traffic() -> Arc<Traffic> {
    TRAFFIC
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_else(|| Arc::new(Traffic::default()))
}

impl Traffic {
    /// True in matrix mode.
    pub fn is_matrix(&self) -> bool {
        matches!(self, Traffic::Matrix(_))
    }

    /// Bytes `src` sends to `dst` in an `n`-rank call whose NCCL count is `count` elements of
    /// `elt` bytes (generated mode: each rank's total is `count x n x elt`).
    pub fn pair_bytes(&self, count: usize, elt: usize, src: usize, dst: usize, n: usize) -> usize {
        match self {
            Traffic::Matrix(m) => m.bytes(src, dst),
            Traffic::Generated { spread } => {
                let total = count.saturating_mul(n).saturating_mul(elt);
                if n == 1 {
                    return total & !15;
                }
                // nccl-tests' arithmetic, in its order, so sizes match it to the byte.
                let distance = (dst + n - src) % n;
                let sum_distances = n * (n - 1) / 2;
                let uniform = total as f64 / n as f64;
                let dist = distance as f64 * total as f64 / sum_distances as f64;
                let bytes = (1.0 - spread) * uniform + spread * dist;
                (bytes as usize) & !15
            }
        }
    }

    /// The NCCL count argument for a requested size of `c` elements: the per-peer block of
    /// alltoall in generated mode, 0 in matrix mode (the sizes come from the file).
    pub fn param_count(&self, c: usize, elt: usize, n: usize) -> usize {
        match self {
            Traffic::Matrix(_) => 0,
            Traffic::Generated { .. } => (c / n) / (16 / elt) * (16 / elt),
        }
    }

    /// Whether a run of `n` ranks sweeping `min..=max` bytes can use this traffic: in matrix
    /// mode the matrix must cover every rank, `-b` must equal `-e` (the sizes come from the
    /// file) and `-e` must hold the largest rank's total, as nccl-tests requires.
    pub fn check_fits(&self, n: usize, min: u64, max: u64) -> Result<(), String> {
        let Traffic::Matrix(m) = self else {
            return Ok(());
        };
        if n > m.dim {
            return Err(format!(
                "the alltoallv traffic matrix is {0}x{0} but this run has {n} ranks",
                m.dim
            ));
        }
        if min != max {
            return Err(format!(
                "alltoallv matrix mode needs -b equal to -e (e.g. -b 32M -e 32M), got -b {min} -e {max}"
            ));
        }
        let need = self.max_rank_bytes(0, n);
        if need as u128 > max as u128 {
            return Err(format!(
                "alltoallv matrix mode: -e must be at least {need} bytes, the largest rank's \
                 total in the traffic matrix (got {max}); increase -e"
            ));
        }
        Ok(())
    }

    /// The largest total bytes any of `n` ranks sends or receives at 1-byte elements: what
    /// `-e` must hold in matrix mode.
    pub fn max_rank_bytes(&self, count: usize, n: usize) -> usize {
        (0..n)
            .map(|r| {
                let (mut s, mut d) = (0usize, 0usize);
                for p in 0..n {
                    s = s.saturating_add(self.pair_bytes(count, 1, r, p, n));
                    d = d.saturating_add(self.pair_bytes(count, 1, p, r, n));
                }
                s.max(d)
            })
            .max()
            .unwrap_or(0)
    }
}

/// Elements `src` sends to `dst`.
pub fn pair_elems(count: usize, elt: usize, src: usize, dst: usize, n: usize) -> usize {
    traffic().pair_bytes(count, elt, src, dst, n) / elt
}

/// `rank`'s send block for `peer`.
fn send_block(count: usize, elt: usize, rank: usize, peer: usize, n: usize) -> usize {
    pair_elems(count, elt, rank, peer, n)
}

/// `rank`'s receive block from `peer`.
fn recv_block(count: usize, elt: usize, rank: usize, peer: usize, n: usize) -> usize {
    pair_elems(count, elt, peer, rank, n)
}

fn param_count(c: usize, elt: usize, n: usize) -> usize {
    traffic().param_count(c, elt, n)
}

/// The spec.
pub(super) const SPEC: Spec = Spec {
    collective: Collective::AllToAllv,
    name: "alltoallv",
    about: "Every rank sends a segment of its own size to every rank (alltoallv_perf)",
    op_column: OpColumn::None,
    reduces: false,
    rooted: false,
    // As alltoall: in place, a segment is overwritten before it is read; nccl-tests prints N/A.
    checks_in_place: false,
    power_of_two_ranks: false,
    count: param_count,
    uneven: true,
    send: Blocks::PerPeer(send_block),
    recv: Blocks::PerPeer(recv_block),
    in_place: InPlace::Base,
    // The size column is the largest rank's max(send, recv): nccl-tests' algbw numerator.
    algbw: AlgBytes::Size,
    busbw_factor: |n| (n - 1.0) / n,
    send_contents,
    expected_contents,
    nccl: Nccl {
        call: "ncclSend/ncclRecv",
        log_func: None,
        log_bytes: LogBytes::Call,
    },
};

/// Where rank `src`'s pattern starts: ranks own disjoint index ranges of the largest send
/// total, so a segment delivered from the wrong source or to the wrong peer shows.
fn base(s: &Shape, src: usize) -> usize {
    src * s.send_elems
}

/// Offset of `src`'s segment for `dst` in its send buffer.
fn send_offset(s: &Shape, src: usize, dst: usize, n: usize) -> usize {
    (0..dst)
        .map(|k| pair_elems(s.count, s.elt, src, k, n))
        .sum()
}

fn send_contents(s: &Shape, rank: usize, n: usize, _root: usize) -> Vec<Segment> {
    let mut at = 0;
    (0..n)
        .map(|peer| {
            let len = pair_elems(s.count, s.elt, rank, peer, n);
            let seg = Segment::new(
                at,
                len,
                Content::Plain {
                    first: base(s, rank) + at,
                },
            );
            at += len;
            seg
        })
        .collect()
}

fn expected_contents(s: &Shape, rank: usize, n: usize, _root: usize) -> Vec<Segment> {
    let mut at = 0;
    let mut segs: Vec<Segment> = (0..n)
        .map(|src| {
            let len = pair_elems(s.count, s.elt, src, rank, n);
            let first = base(s, src) + send_offset(s, src, rank, n);
            let seg = Segment::new(at, len, Content::Plain { first });
            at += len;
            seg
        })
        .collect();
    // Ranks receiving less than the largest total must leave the rest of the buffer alone.
    segs.push(Segment::new(
        at,
        s.recv_elems.saturating_sub(at),
        Content::Unchanged,
    ));
    segs
}

#[cfg(test)]
mod tests;
