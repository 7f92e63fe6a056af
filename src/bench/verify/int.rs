//! Integer reductions. Integer arithmetic is exact in any order (sums and products wrap in the
//! element width, min/max compare), so inputs are simply hash bits, arranged so the expected
//! value is cheap:
//! * sum, avg, mulsum: rank `r` holds `a + b*r` (wrapping, `b` odd so up to `2^width` ranks
//!   hold distinct values). Sum and mulsum have closed forms; avg divides the wrapped sum by `n`
//!   (signed division truncating toward zero for signed types).
//! * prod: rank `r` holds `2*(a + b*r) + 1`: always odd, so products never collapse to zero;
//!   the expected value is a product over the ranks.
//! * min, max: window position `j = (r - rho) mod n` (random leader `rho`) holds `c + j*d` with
//!   `c` in the lower half of the type's range and a step `d >= 1` small enough that nothing
//!   wraps: values are distinct and ordered by `j` (crossing zero for signed types, so an
//!   unsigned comparison is caught), the maximum sits at `j = n-1` and the minimum at `j = 0`.
//!   With more ranks than half the type's values (int8, uint8) they fall back to `a + b*r` and
//!   a fold.

use super::hash::{log2_fit, low_mask, mix, pick32, second, second32, Idx};
use super::kernel::Gen;
use crate::core::dtype::DataType;
use crate::core::op::RedOp;

/// Expected-value kinds (`KIND` of [`IntExpected`] and [`IntInput`]).
pub(crate) mod kind {
    /// sum, mulsum: closed form.
    pub const LINEAR: u8 = 0;
    /// avg: closed-form sum, then division.
    pub const AVG: u8 = 1;
    /// prod: product over the ranks.
    pub const PROD: u8 = 2;
    /// min/max with ordered values: closed form.
    pub const ORDERED: u8 = 3;
    /// min/max with too many ranks for ordered values: fold.
    pub const FOLD: u8 = 4;
}

/// Per-call constants of an integer reduction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IntShape {
    max: bool,
    n: u64,
    mask: u64,
    /// Shift that moves the element's sign bit to bit 63 (signed types), for sign extension.
    sext: Option<u32>,
    /// Closed form `a*ca + b*cb` of sum/avg/mulsum.
    ca: u64,
    cb: u64,
    /// Ordered min/max: `c = base + (h & cmask)`, `d = 1 + (rotated h & dmask)`.
    base: u64,
    cmask: u64,
    dmask: u64,
    kind: u8,
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
        let bits = 8 * dtype.size() as u32;
        let half = 1u64 << (bits - 1);
        let ordered = n - 1 <= half;
        let kind = match op {
            RedOp::Sum | RedOp::MulSum => kind::LINEAR,
            RedOp::Avg => kind::AVG,
            RedOp::Prod => kind::PROD,
            RedOp::Min | RedOp::Max if ordered => kind::ORDERED,
            RedOp::Min | RedOp::Max => kind::FOLD,
        };
        IntShape {
            max: op == RedOp::Max,
            n,
            mask: crate::core::numeric::width_mask(dtype),
            sext: dtype.is_signed_int().then_some(64 - bits),
            ca,
            cb,
            base: if dtype.is_signed_int() { half } else { 0 },
            cmask: half - 1,
            dmask: low_mask(log2_fit(half, (n - 1).max(1))),
            kind,
        }
    }

    /// Writes this shape's device parameters (`kind` is the same number as [`IntShape::kind`]).
    pub fn describe(&self, d: &mut super::device::DevParams) {
        d.max = self.max as u32;
        d.is_signed = self.sext.is_some() as u32;
        d.ca = self.ca;
        d.cb = self.cb;
        d.base = self.base;
        d.cmask = self.cmask;
        d.dmask = self.dmask;
        d.kind = self.kind as u32;
    }

    /// Which [`kind`] of generator this shape needs.
    pub fn kind(&self) -> u8 {
        self.kind
    }

    /// The element's `(a, b)`.
    #[inline(always)]
    fn draw(key: u64, g: Idx) -> (u64, u64) {
        let h = mix(key, g);
        (h, second(h) | 1)
    }

    /// Rank `r`'s input from `(a, b)` (every kind but [`kind::ORDERED`]).
    #[inline(always)]
    fn input<const KIND: u8>(&self, a: u64, b: u64, r: u64) -> u64 {
        let v = a.wrapping_add(b.wrapping_mul(r));
        let v = if KIND == kind::PROD {
            v.wrapping_mul(2) | 1
        } else {
            v
        };
        v & self.mask
    }

    /// Ordered min/max: the leader and the value at window position `j`.
    #[inline(always)]
    fn ordered(&self, key: u64, g: Idx) -> (u64, impl Fn(u64) -> u64) {
        let h = mix(key, g);
        let rho = pick32(second32(h) as u64, self.n);
        let c = self.base.wrapping_add(h & self.cmask);
        let d = 1 + (h.rotate_right(32) & self.dmask);
        let mask = self.mask;
        (rho, move |j: u64| c.wrapping_add(d.wrapping_mul(j)) & mask)
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

/// The expected integer reduction; `KIND` is the shape's [`IntShape::kind`].
#[derive(Clone, Copy)]
pub(crate) struct IntExpected<const KIND: u8> {
    /// Per-call constants.
    pub shape: IntShape,
    /// Pattern key.
    pub key: u64,
}

impl<const KIND: u8> Gen for IntExpected<KIND> {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let sh = &self.shape;
        if KIND == kind::ORDERED {
            let (_, value) = sh.ordered(self.key, g);
            return value(if sh.max { sh.n - 1 } else { 0 });
        }
        let (a, b) = IntShape::draw(self.key, g);
        let sum = a.wrapping_mul(sh.ca).wrapping_add(b.wrapping_mul(sh.cb)) & sh.mask;
        match KIND {
            kind::LINEAR => sum,
            kind::AVG => match sh.sext {
                Some(s) => (((sum << s) as i64 >> s) / sh.n as i64) as u64 & sh.mask,
                None => sum / sh.n,
            },
            kind::PROD => {
                let prod = (0..sh.n).fold(1u64, |p, r| p.wrapping_mul(sh.input::<KIND>(a, b, r)));
                prod & sh.mask
            }
            _ => (1..sh.n).fold(sh.input::<KIND>(a, b, 0), |best, r| {
                let v = sh.input::<KIND>(a, b, r);
                if (sh.order(v) > sh.order(best)) == sh.max {
                    v
                } else {
                    best
                }
            }),
        }
    }
}

/// One rank's integer input.
#[derive(Clone, Copy)]
pub(crate) struct IntInput<const KIND: u8> {
    /// Per-call constants.
    pub shape: IntShape,
    /// Pattern key.
    pub key: u64,
    /// Global rank (`< n`).
    pub rank: u64,
}

impl<const KIND: u8> Gen for IntInput<KIND> {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let sh = &self.shape;
        if KIND == kind::ORDERED {
            let (rho, value) = sh.ordered(self.key, g);
            let wrap = if self.rank < rho { sh.n } else { 0 };
            return value(self.rank.wrapping_sub(rho).wrapping_add(wrap));
        }
        let (a, b) = IntShape::draw(self.key, g);
        sh.input::<KIND>(a, b, self.rank)
    }
}
