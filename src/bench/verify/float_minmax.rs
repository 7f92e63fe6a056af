//! Float `min` and `max`: comparisons never round, so the pattern only has to make the result
//! easy to predict and the inputs distinct.
//!
//! Per element, ranks take window positions `j = (r - rho) mod n` from a random leader `rho`.
//! Position `j` holds magnitude code `lo + c + j*d` (exponent and mantissa fields read as one
//! integer, which orders positive floats) with a random start `c` and step `d >= 1`, and sign
//! `s ^ (j mod 2)`: signs alternate, magnitudes grow with `j`, and all values are distinct. The
//! maximum is then the largest positive position and the minimum the largest negative one,
//! O(1) per element, and which rank wins moves with `rho`.
//!
//! When the format has too few codes for that (many ranks of an fp8 type), codes wrap modulo
//! `2^z` and the expected value is a fold over the ranks instead.

use super::hash::{log2_fit, low_mask, mix, pick32, second32, Idx};
use super::kernel::Gen;
use super::layout::Layout;

/// Per-call constants of the float min/max pattern.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MinMaxShape {
    sign_shift: u32,
    n: u32,
    lo_code: u64,
    /// `2^z - 1`: magnitude offsets stay below `2^z` (all normal, finite, mid-range).
    code_mask: u64,
    cmask: u64,
    dmask: u64,
    /// Step multiplier: 1 (monotone: steps in `1..=2^kd`) or 2 (wrapping: odd steps, which keep
    /// up to `2^z` wrapped codes distinct).
    dmul: u64,
    /// True when `c + (n-1)*d < 2^z` always holds (closed-form result).
    monotone: bool,
}

/// Per-element draws.
struct Draw {
    rho: u32,
    s: u32,
    c: u64,
    d: u64,
}

impl MinMaxShape {
    /// Constants for `nranks` ranks of layout `l`.
    pub fn new(l: &Layout, nranks: usize) -> MinMaxShape {
        let n = u32::try_from(nranks.max(1)).unwrap_or(u32::MAX);
        let (lo, hi) = l.mid_fields;
        let codes = (hi - lo + 1) << l.man;
        let z = (63 - codes.leading_zeros()).min(62);
        let half = 1u64 << (z - 1);
        let monotone = (n as u64 - 1) <= half;
        let (cmask, dmask, dmul) = if monotone {
            let kd = log2_fit(half, (n as u64 - 1).max(1)).min(40);
            (half - 1, low_mask(kd), 1)
        } else {
            (low_mask(z), low_mask(31), 2)
        };
        MinMaxShape {
            sign_shift: l.bits - 1,
            n,
            lo_code: lo << l.man,
            code_mask: low_mask(z),
            cmask,
            dmask,
            dmul,
            monotone,
        }
    }

    /// Writes this shape's device parameters (the caller sets `max`).
    pub fn describe(&self, d: &mut super::device::DevParams) {
        d.sign_shift = self.sign_shift;
        d.lo = self.lo_code;
        d.code_mask = self.code_mask;
        d.cmask = self.cmask;
        d.dmask = self.dmask;
        d.dmul = self.dmul;
        d.monotone = self.monotone as u32;
    }

    /// True when the expected value has a closed form.
    pub fn monotone(&self) -> bool {
        self.monotone
    }

    #[inline(always)]
    fn draw(&self, key: u64, g: Idx) -> Draw {
        let h = mix(key, g);
        let w = second32(h);
        Draw {
            rho: pick32(w as u64, self.n as u64) as u32,
            s: w & 1,
            c: h & self.cmask,
            d: 1 + ((h >> 32) & self.dmask) * self.dmul,
        }
    }

    /// The element bits at window position `j`.
    #[inline(always)]
    fn value(&self, d: &Draw, j: u32) -> u64 {
        let code = self.lo_code + (d.c.wrapping_add(d.d.wrapping_mul(j as u64)) & self.code_mask);
        (((d.s ^ (j & 1)) as u64) << self.sign_shift) | code
    }

    /// An integer key that orders element bits as their float values.
    #[inline(always)]
    fn order(&self, bits: u64) -> u64 {
        let top = 1u64 << self.sign_shift;
        if bits & top != 0 {
            top - 1 - (bits & (top - 1))
        } else {
            bits | top
        }
    }
}

/// The expected minimum or maximum; `FOLD` for shapes that are not monotone.
#[derive(Clone, Copy)]
pub(crate) struct MinMaxExpected<const FOLD: bool> {
    /// Per-call constants.
    pub shape: MinMaxShape,
    /// Pattern key.
    pub key: u64,
    /// Maximum when true, minimum when false.
    pub max: bool,
}

impl<const FOLD: bool> Gen for MinMaxExpected<FOLD> {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let sh = &self.shape;
        let d = sh.draw(self.key, g);
        if FOLD {
            let mut best = sh.value(&d, 0);
            for j in 1..sh.n {
                let v = sh.value(&d, j);
                if (sh.order(v) > sh.order(best)) == self.max {
                    best = v;
                }
            }
            return best;
        }
        // The maximum is the largest position holding a positive value (parity s), the minimum
        // the largest holding a negative one; a single rank is both.
        let last = sh.n - 1;
        let want = d.s ^ (!self.max) as u32;
        let j = last.wrapping_sub((last & 1) ^ want);
        sh.value(&d, if sh.n == 1 { 0 } else { j })
    }
}

/// One rank's input to min/max.
#[derive(Clone, Copy)]
pub(crate) struct MinMaxInput {
    /// Per-call constants.
    pub shape: MinMaxShape,
    /// Pattern key.
    pub key: u64,
    /// Global rank (`< n`).
    pub rank: u32,
}

impl Gen for MinMaxInput {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let sh = &self.shape;
        let d = sh.draw(self.key, g);
        let wrap = if self.rank < d.rho { sh.n } else { 0 };
        sh.value(&d, self.rank.wrapping_sub(d.rho).wrapping_add(wrap))
    }
}
