//! Float `prod`: inputs whose product is exact in every order.
//!
//! One leader rank per element contributes a full random significand `1.f * 2^e0`;
//! every other rank contributes `+-2^t` with `t` in {-1, +1} for the first `k` window positions
//! and `t = 0` after them. Every partial product is the leader (or 1) times `2^t'` with
//! `|t'| <= k`, and `e0` is drawn so that all of them stay normal and finite, so nothing rounds.
//! Signs and exponent directions are bits of per-element words indexed by window position, so
//! the expected sign and exponent come from popcounts: O(1) per element.

use super::hash::{low_mask, mix, pick16, pick32, second, Idx};
use super::kernel::Gen;
use super::layout::Layout;

/// Per-call constants of the float product pattern.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProdShape {
    layout: Layout,
    n: u64,
    /// Window positions `1..=k` carry `2^+-1`.
    k: u32,
    e_lo: i64,
    e_span: u64,
}

/// Per-element draws.
struct ProdDraw {
    leader: u64,
    neg_lead: u64,
    e0: i64,
    mant: u64,
    /// Bit `j % 64`: the sign of window position `j`.
    signs: u64,
    /// Bit `j` (for `j <= k`): exponent +1 when set, -1 when clear.
    ups: u64,
}

/// Number of `j` in `1..n` whose bit `j % 64` is set in `word`.
#[inline(always)]
fn cyclic_count(word: u64, n: u64) -> u64 {
    let all = (n / 64) * word.count_ones() as u64
        + (word & low_mask((n % 64) as u32)).count_ones() as u64;
    all - (word & 1)
}

impl ProdShape {
    /// Constants for `nranks` ranks of layout `l`.
    pub fn new(l: &Layout, nranks: usize) -> ProdShape {
        let n = nranks.max(1) as u64;
        let room = ((l.emax - 1 - l.emin) / 4).max(1) as u64;
        let k = (n - 1).min(63).min(room) as u32;
        let e_lo = (l.emin + k as i32) as i64;
        let e_hi = (l.emax - 1 - k as i32) as i64;
        ProdShape {
            layout: *l,
            n,
            k,
            e_lo,
            e_span: (e_hi - e_lo + 1) as u64,
        }
    }

    /// Writes this shape's device parameters.
    pub fn describe(&self, d: &mut super::device::DevParams) {
        self.layout.describe(d);
        d.k = self.k;
        d.e_lo = self.e_lo;
        d.e_span = self.e_span;
    }

    #[inline(always)]
    fn draw(&self, key: u64, g: Idx) -> ProdDraw {
        let h = mix(key, g);
        let h2 = second(h);
        let h3 = second(h2);
        ProdDraw {
            leader: pick32(h2, self.n),
            neg_lead: h2 >> 63,
            e0: self.e_lo + pick16(h2, 40, self.e_span) as i64,
            mant: h & self.layout.man_mask(),
            signs: h3,
            ups: h3.rotate_left(32) ^ h,
        }
    }
}

/// The expected product.
#[derive(Clone, Copy)]
pub(crate) struct ProdExpected {
    /// Per-call constants.
    pub shape: ProdShape,
    /// Pattern key.
    pub key: u64,
}

impl Gen for ProdExpected {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let sh = &self.shape;
        let d = sh.draw(self.key, g);
        let negs = cyclic_count(d.signs, sh.n);
        let ups = (d.ups & (low_mask(sh.k + 1) & !1)).count_ones() as i64;
        let exp = d.e0 + 2 * ups - sh.k as i64;
        sh.layout.pack(d.neg_lead ^ (negs & 1), exp, d.mant)
    }
}

/// One rank's input to the product.
#[derive(Clone, Copy)]
pub(crate) struct ProdInput {
    /// Per-call constants.
    pub shape: ProdShape,
    /// Pattern key.
    pub key: u64,
    /// Global rank (`< n`).
    pub rank: u64,
}

impl Gen for ProdInput {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let sh = &self.shape;
        let d = sh.draw(self.key, g);
        let j = (self.rank + sh.n - d.leader) % sh.n;
        if j == 0 {
            return sh.layout.pack(d.neg_lead, d.e0, d.mant);
        }
        let bit = |w: u64| (w >> (j % 64)) & 1;
        let t = if j <= sh.k as u64 {
            2 * bit(d.ups) as i64 - 1
        } else {
            0
        };
        sh.layout.pack(bit(d.signs), t, 0)
    }
}
