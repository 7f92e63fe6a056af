//! The descriptor each collective fills in its own file: everything the harness, the backends,
//! the verifier, the NCCL log join and the analysis need to know about it. The methods of
//! [`Collective`] read it; nothing else re-derives any of it.

use super::traffic::Traffic;
use super::{Collective, OpColumn, Segment, Shape};

/// One collective's description.
#[derive(Debug)]
pub struct Spec {
    /// The collective described (a test holds every spec to its own variant).
    pub collective: Collective,
    /// The command-line, CSV and JSON name (`all_reduce`).
    pub name: &'static str,
    /// One line for `--help` (what every rank ends with).
    pub about: &'static str,
    /// What the `redop` column shows, and so whether `-o` values are iterated.
    pub op_column: OpColumn,
    /// Whether the reduction operator is applied to data.
    pub reduces: bool,
    /// Whether `-r` applies.
    pub rooted: bool,
    /// Whether the in-place run is verified (nccl-tests prints `N/A` for the others).
    pub checks_in_place: bool,
    /// Whether the rank count must be a power of two.
    pub power_of_two_ranks: bool,
    /// The NCCL count argument for a requested size of `c` elements of `elt` bytes on `n`
    /// ranks: [`whole`] or [`per_rank`] (nccl-tests' rules), or the collective's own (which
    /// may read the run's alltoallv [`Traffic`]).
    pub count: fn(Sizing) -> usize,
    /// Whether ranks' buffers differ in size (alltoallv): the shape then holds the largest
    /// rank's, as nccl-tests sizes every buffer for the largest.
    pub uneven: bool,
    /// How each rank's send buffer is made of blocks of the count.
    pub send: Blocks,
    /// How each rank's receive buffer is made of blocks of the count.
    pub recv: Blocks,
    /// Where the send and receive pointers of an in-place call sit in the shared buffer.
    pub in_place: InPlace,
    /// The numerator of algbw.
    pub algbw: AlgBytes,
    /// busbw = algbw x this factor of the rank count.
    pub busbw_factor: fn(nranks: f64) -> f64,
    /// What `rank`'s send buffer holds before the call: `(traffic, shape, rank, nranks, root)`.
    pub send_contents: Contents,
    /// What `rank`'s receive buffer must hold after it.
    pub expected_contents: Contents,
    /// How NCCL runs and logs it.
    pub nccl: Nccl,
}

/// A call's sizing question: the run's traffic, an element count, the element size in bytes
/// and the rank count.
#[derive(Debug, Clone, Copy)]
pub struct Sizing<'a> {
    /// The run's alltoallv traffic (only alltoallv reads it).
    pub traffic: &'a Traffic,
    /// Elements: the requested size's for a count rule, the call's count for a block rule.
    pub count: usize,
    /// Bytes per element.
    pub elt: usize,
    /// Ranks in the call.
    pub nranks: usize,
}

/// The rank whose buffer contents are asked for, in its call.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// The run's alltoallv traffic (only alltoallv reads it).
    pub traffic: &'a Traffic,
    /// This rank.
    pub rank: usize,
    /// Ranks in the call.
    pub nranks: usize,
    /// The call's root (rooted collectives only).
    pub root: usize,
}

/// The segments of one rank's buffer.
pub type Contents = fn(&Shape, At) -> Vec<Segment>;

/// How a rank's buffer is made of blocks of the call's count.
#[derive(Debug, Clone, Copy)]
pub enum Blocks {
    /// One block of `count` elements.
    One,
    /// One block per peer, in peer order; the function gives the elements of `rank`'s block
    /// for `peer`, `(sizing, rank, peer)`. Uniform collectives give every
    /// peer `count`; a variable-count collective (alltoallv) gives each pair its own.
    PerPeer(PerPeer),
}

/// The per-peer block sizes of a buffer, `(sizing, rank, peer) -> elements`.
pub type PerPeer = fn(Sizing, usize, usize) -> usize;

/// Every peer's block holds `count` elements.
pub fn uniform(s: Sizing, _rank: usize, _peer: usize) -> usize {
    s.count
}

/// The count is the whole `size / elt`.
pub fn whole(s: Sizing) -> usize {
    s.count
}

/// The count is a per-rank block, `floor(c / n)` rounded down to a multiple of 16 bytes.
pub fn per_rank(s: Sizing) -> usize {
    let align = 16 / s.elt;
    (s.count / s.nranks) / align * align
}

impl Blocks {
    /// Elements of `rank`'s buffer for a call of `count` elements of `elt` bytes under
    /// traffic `t`, or `None` on overflow.
    pub fn elems(
        self,
        t: &Traffic,
        count: usize,
        elt: usize,
        rank: usize,
        nranks: usize,
    ) -> Option<usize> {
        match self {
            Blocks::One => Some(count),
            Blocks::PerPeer(f) => {
                let sizing = Sizing {
                    traffic: t,
                    count,
                    elt,
                    nranks,
                };
                (0..nranks).try_fold(0usize, |sum, peer| sum.checked_add(f(sizing, rank, peer)))
            }
        }
    }
}

/// In-place pointers, as element offsets from the shared buffer's base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InPlace {
    /// Send and receive both at the base.
    Base,
    /// The send pointer at `rank x count` (gathers: a rank's block is already in place).
    SendAtOwnBlock,
    /// The receive pointer at `rank x count` (scatters: a rank's result block).
    RecvAtOwnBlock,
}

/// What algbw divides by the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlgBytes {
    /// The `size` column's bytes.
    Size,
    /// `count x (nranks - 1)` elements: what each rank receives from its peers (hypercube).
    PeerBlocks,
}

/// How NCCL runs the collective and how its debug log names it.
#[derive(Debug, Clone, Copy)]
pub struct Nccl {
    /// The NCCL entry point of one call (`ncclAllReduce`); grouped point-to-point forms name
    /// `ncclSend/ncclRecv`.
    pub call: &'static str,
    /// The function name NCCL's COLL and TUNING lines print for one harness call, when a call
    /// is one NCCL collective (`AllReduce`); `None` for grouped point-to-point forms, whose
    /// lines do not map one to one.
    pub log_func: Option<&'static str>,
    /// The byte count those lines print.
    pub log_bytes: LogBytes,
}

/// The byte count NCCL's decision lines print for a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogBytes {
    /// The call's own bytes (count x element size).
    Call,
    /// The whole buffer (count x nranks x element size) before NCCL 2.24, the call's bytes
    /// from 2.24 (all_gather and reduce_scatter).
    TotalBefore2_24,
}
