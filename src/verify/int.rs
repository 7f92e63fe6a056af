//! Integer reductions. Integer arithmetic is exact in any order (sums and products wrap in the
//! element width, min/max compare), so inputs are simply hash bits, arranged so the expected
//! value is cheap:
//! * sum, avg, mulsum, min, max: rank `r` holds `a + b*r` (wrapping, `b` odd so up to `2^width`
//!   ranks hold distinct values). Sum and mulsum have closed forms; avg divides the wrapped sum by
//!   `n` (signed division truncating toward zero for signed types); min/max fold over the ranks.
//! * prod: rank `r` holds `2*(a + b*r) + 1`: always odd, so products never collapse to zero.

use super::hash::{mix, second, Idx};
use super::kernel::Gen;
use crate::dtype::DataType;
use crate::op::RedOp;

/// Per-call constants of an integer reduction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IntShape {
    op: RedOp,
    n: u64,
    mask: u64,
    /// Shift that moves the element's sign bit to bit 63 (signed types), for sign extension.
    sext: Option<u32>,
    /// Closed form `a*ca + b*cb` of sum/avg/mulsum.
    ca: u64,
    cb: u64,
}

impl IntShape {
    /// Constants for `nranks` ranks of integer type `dtype` under `op`.
    pub fn new(dtype: DataType, op: RedOp, nranks: usize) -> IntShape {
        let n = nranks.max(1) as u64;
        let tri = (n as u128 * (n as u128 - 1) / 2) as u64;
        let odd = n / 2; // odd ranks below n; their indices sum to odd^2
        let (ca, cb) = if op == RedOp::MulSum {
            (n + odd, tri.wrapping_add(odd.wrapping_mul(odd)))
        } else {
            (n, tri)
        };
        IntShape {
            op,
            n,
            mask: crate::numeric::width_mask(dtype),
            sext: dtype.is_signed_int().then(|| 64 - 8 * dtype.size() as u32),
            ca,
            cb,
        }
    }

    /// The element's `(a, b)`.
    #[inline(always)]
    fn draw(key: u64, g: Idx) -> (u64, u64) {
        let h = mix(key, g);
        (h, second(h) | 1)
    }

    /// Rank `r`'s input from `(a, b)`.
    #[inline(always)]
    fn input(&self, a: u64, b: u64, r: u64) -> u64 {
        let v = a.wrapping_add(b.wrapping_mul(r));
        let v = if self.op == RedOp::Prod {
            v.wrapping_mul(2) | 1
        } else {
            v
        };
        v & self.mask
    }

    /// A key that orders element bits as the type compares them.
    #[inline(always)]
    fn order(&self, v: u64) -> u64 {
        match self.sext {
            Some(s) => ((v << s) as i64 >> s) as u64 ^ (1 << 63),
            None => v,
        }
    }
}

/// The expected integer reduction.
#[derive(Clone, Copy)]
pub(crate) struct IntExpected {
    /// Per-call constants.
    pub shape: IntShape,
    /// Pattern key.
    pub key: u64,
}

impl Gen for IntExpected {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let sh = &self.shape;
        let (a, b) = IntShape::draw(self.key, g);
        let sum = a.wrapping_mul(sh.ca).wrapping_add(b.wrapping_mul(sh.cb)) & sh.mask;
        match sh.op {
            RedOp::Sum | RedOp::MulSum => sum,
            RedOp::Avg => match sh.sext {
                Some(s) => (((sum << s) as i64 >> s) / sh.n as i64) as u64 & sh.mask,
                None => sum / sh.n,
            },
            RedOp::Prod => (0..sh.n).fold(1u64, |p, r| p.wrapping_mul(sh.input(a, b, r))) & sh.mask,
            RedOp::Max | RedOp::Min => {
                let max = sh.op == RedOp::Max;
                (1..sh.n).fold(sh.input(a, b, 0), |best, r| {
                    let v = sh.input(a, b, r);
                    if (sh.order(v) > sh.order(best)) == max {
                        v
                    } else {
                        best
                    }
                })
            }
        }
    }
}

/// One rank's integer input.
#[derive(Clone, Copy)]
pub(crate) struct IntInput {
    /// Per-call constants.
    pub shape: IntShape,
    /// Pattern key.
    pub key: u64,
    /// Global rank.
    pub rank: u64,
}

impl Gen for IntInput {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let (a, b) = IntShape::draw(self.key, g);
        self.shape.input(a, b, self.rank)
    }
}
