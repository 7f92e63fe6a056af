//! [`Pattern`]: the per-call constants of one (dtype, op, nranks, seed), and the two pure
//! operations every caller needs: write a [`Content`] run into bytes, and count the wrong
//! elements of bytes against a [`Content`] run, fused (expected values are generated on the fly).

use super::device::{family, DevRun, SIDE_INPUT};
use super::dispatch::Reduce;
use super::hash::{decoy_key_of, key_of};
use super::kernel::{apply, Action};
use super::plain::{PlainGen, ZeroGen};
use crate::core::collective::Content;
use crate::core::dtype::DataType;
use crate::core::op::RedOp;

/// Everything that determines the data of one verified call except the collective: element
/// type, reduction operator, rank count and seed. Building one does the per-call work (a few
/// constants; for `mulsum` over an odd rank count a small table), so build it once per call.
#[derive(Debug, Clone)]
pub struct Pattern {
    dtype: DataType,
    op: RedOp,
    nranks: usize,
    key: u64,
    decoy_key: u64,
    reduce: Reduce,
}

impl Pattern {
    /// The pattern of `dtype` and `op` over `nranks` ranks (at least 1) under `seed`.
    pub fn new(dtype: DataType, op: RedOp, nranks: usize, seed: u64) -> Pattern {
        let nranks = nranks.max(1);
        let reduce = Reduce::new(dtype, op, nranks);
        Pattern {
            dtype,
            op,
            nranks,
            key: key_of(seed),
            decoy_key: decoy_key_of(seed),
            reduce,
        }
    }

    /// Element type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// Reduction operator.
    pub fn op(&self) -> RedOp {
        self.op
    }

    /// Number of ranks.
    pub fn nranks(&self) -> usize {
        self.nranks
    }

    /// Runs `action` on the run of `content` for global `rank` whose first element sits at
    /// element `at` of its buffer.
    fn run(&self, rank: usize, content: Content, at: usize, action: Action<'_>) -> u64 {
        let w = self.dtype.size();
        match content {
            Content::Plain { first } => apply(
                &PlainGen::new(self.dtype, self.key),
                w,
                first as u64,
                action,
            ),
            Content::Decoy => apply(
                &PlainGen::new(self.dtype, self.decoy_key),
                w,
                at as u64,
                action,
            ),
            Content::Unchanged => apply(&ZeroGen, w, 0, action),
            Content::Reduced { first } => {
                self.reduce
                    .expected(self.dtype, self.key, first as u64, action)
            }
            Content::ReduceInput { first } => {
                let rank = (rank % self.nranks) as u64;
                self.reduce
                    .input(self.dtype, self.key, rank, first as u64, action)
            }
        }
    }
}

impl Pattern {
    /// Fills `run` with the device form of the run [`Pattern::run`] would generate for the same
    /// arguments (see [`DevRun::of`]).
    pub(super) fn describe(&self, rank: usize, content: Content, at: usize, run: &mut DevRun) {
        let d = &mut run.params;
        d.width = self.dtype.size() as u32;
        d.mask = crate::core::numeric::width_mask(self.dtype);
        d.n = self.nranks as u32;
        match content {
            Content::Plain { first } => {
                PlainGen::new(self.dtype, self.key).describe(d);
                d.first = first as u64;
            }
            Content::Decoy => {
                PlainGen::new(self.dtype, self.decoy_key).describe(d);
                d.first = at as u64;
            }
            Content::Unchanged => d.family = family::ZERO,
            Content::Reduced { first } => {
                d.key = self.key;
                d.first = first as u64;
                d.tol = tolerance(self.dtype, self.op);
                self.reduce.describe(run);
            }
            Content::ReduceInput { first } => {
                d.key = self.key;
                d.first = first as u64;
                d.side = SIDE_INPUT;
                d.rank = (rank % self.nranks) as u32;
                self.reduce.describe(run);
            }
        }
    }
}

/// Writes the run of `content` that belongs to global `rank` into `out` (as many whole elements
/// as fit). `at` is the element position of `out[0]` relative to its buffer pointer; only
/// [`Content::Decoy`], which has no global index, uses it. [`Content::Unchanged`] writes zeros.
pub fn write_content(p: &Pattern, rank: usize, content: Content, at: usize, out: &mut [u8]) {
    p.run(rank, content, at, Action::Write(out));
}

/// Counts the elements of `data` (whole elements only) that differ from the run of `content`
/// for global `rank`: more than [`tolerance`] bit-pattern units apart for [`Content::Reduced`],
/// any difference otherwise. `at` is as in [`write_content`]; [`Content::Unchanged`] is counted
/// against zeros (what `prepare` leaves in a receive buffer).
pub fn count_wrong(p: &Pattern, rank: usize, content: Content, at: usize, data: &[u8]) -> u64 {
    let tol = match content {
        Content::Reduced { .. } => tolerance(p.dtype, p.op),
        _ => 0,
    };
    p.run(rank, content, at, Action::Count(data, tol))
}

/// How many units apart (element bits read as unsigned integers of the element width) a reduced
/// element may be from its expectation: 2 for float `avg` (the scalar `1/n` rounds), 0 otherwise.
pub fn tolerance(dtype: DataType, op: RedOp) -> u64 {
    if dtype.is_float() && op == RedOp::Avg {
        2
    } else {
        0
    }
}
