//! Float `avg`: NCCL multiplies every input by the scalar `1/n` (rounded to the element type, or
//! to `float` inside the kernel for the narrow types) and sums, so the result rounds and depends
//! on how the scalar was rounded. The pattern keeps that to a few units of the last place: per
//! element only two distinct ranks contribute (full random significands, same sign); every other
//! rank contributes +0, and adding zeros never rounds. The result is one rounded sum of two
//! rounded products whatever the order, and the expected value is that computation with the
//! scalar rounded to the element type. The tests prove the 2-unit tolerance against both NCCL
//! variants for n in 1..=64.

use super::hash::{mix, pick16, pick32, second, Idx};
use super::kernel::Gen;
use super::layout::Layout;
use crate::core::dtype::DataType;
use crate::core::numeric::{from_f64, to_f64};

/// Per-call constants of the average pattern.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AvgShape {
    layout: Layout,
    n: u64,
    /// `1/n` rounded to the element type, as an `f64`.
    scale: f64,
    e_lo: i64,
    e_span: u64,
}

/// Per-element draws: the two contributors and their bits.
struct AvgDraw {
    first: u64,
    second: u64,
    x0: u64,
    x1: u64,
}

impl AvgShape {
    /// Constants for `nranks` ranks of float type `dtype`.
    pub fn new(dtype: DataType, l: &Layout, nranks: usize) -> AvgShape {
        let n = nranks.max(1) as u64;
        // Inputs lie in [2^(e+p-1), 2^(e+p)); their products with 1/n must stay normal.
        let log2n = 64 - (n - 1).leading_zeros() as i64;
        let e_hi = (l.emax - l.p as i32) as i64;
        let e_lo = ((l.emin - l.p as i32 + 2) as i64 + log2n).min(e_hi);
        AvgShape {
            layout: *l,
            n,
            scale: to_f64(dtype, from_f64(dtype, 1.0 / n as f64)),
            e_lo,
            e_span: (e_hi - e_lo + 1) as u64,
        }
    }

    /// Writes this shape's device parameters; `kind` is [`FLOAT`], [`DOUBLE`] or [`NARROW`]
    /// by the layout's width, as [`super::dispatch`] chooses.
    pub fn describe(&self, d: &mut super::device::DevParams) {
        self.layout.describe(d);
        d.e_lo = self.e_lo;
        d.e_span = self.e_span;
        d.q64 = self.scale.to_bits();
        d.q32 = (self.scale as f32).to_bits();
        d.kind = match (self.layout.bits, self.layout.man) {
            (32, _) => FLOAT as u32,
            (64, _) => DOUBLE as u32,
            _ => NARROW as u32,
        };
    }

    #[inline(always)]
    fn draw(&self, key: u64, g: Idx) -> AvgDraw {
        let l = &self.layout;
        let h = mix(key, g);
        let h2 = second(h);
        let h3 = second(h2);
        let first = pick32(h2, self.n);
        let mut other = first + 1 + pick32(h2 >> 32, self.n.saturating_sub(1));
        if other >= self.n {
            other -= self.n;
        }
        let neg = h3 >> 63;
        let exp = self.e_lo + pick16(h3, 0, self.e_span) as i64 + l.p as i64 - 1;
        AvgDraw {
            first,
            second: other,
            x0: l.pack(neg, exp, h & l.man_mask()),
            x1: l.pack(neg, exp, h.rotate_right(32) & l.man_mask()),
        }
    }

    /// The expected average of one element: `(x0 * q) + (x1 * q)` with every step rounded to
    /// the element type (`q` = 1/n rounded to it). `float` and `double` use their own hardware
    /// arithmetic; the narrow types compute in `float`, where products and sums of their values
    /// are exact, and round each step back with [`Layout::narrow`].
    #[inline(always)]
    fn average<const KIND: u8>(&self, d: &AvgDraw) -> u64 {
        let l = &self.layout;
        let avg = match KIND {
            DOUBLE => {
                let q = self.scale;
                (f64::from_bits(d.x0) * q + f64::from_bits(d.x1) * q).to_bits()
            }
            FLOAT => {
                let q = self.scale as f32;
                let (x0, x1) = (f32::from_bits(d.x0 as u32), f32::from_bits(d.x1 as u32));
                (x0 * q + x1 * q).to_bits() as u64
            }
            _ => {
                let q = self.scale as f32;
                let y0 = l.widen(l.narrow(l.widen(d.x0) * q));
                let y1 = l.widen(l.narrow(l.widen(d.x1) * q));
                l.narrow(y0 + y1)
            }
        };
        if self.n == 1 {
            d.x0
        } else {
            avg
        }
    }
}

/// [`AvgExpected`] kind for `float`.
pub(crate) const FLOAT: u8 = 0;
/// [`AvgExpected`] kind for `double`.
pub(crate) const DOUBLE: u8 = 1;
/// [`AvgExpected`] kind for the types narrower than `float`.
pub(crate) const NARROW: u8 = 2;

/// The expected average; `KIND` ([`FLOAT`], [`DOUBLE`] or [`NARROW`]) picks the arithmetic at
/// compile time so the loop stays branch-free.
#[derive(Clone, Copy)]
pub(crate) struct AvgExpected<const KIND: u8> {
    /// Per-call constants.
    pub shape: AvgShape,
    /// Pattern key.
    pub key: u64,
}

impl<const KIND: u8> Gen for AvgExpected<KIND> {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let d = self.shape.draw(self.key, g);
        self.shape.average::<KIND>(&d)
    }
}

/// One rank's input to the average.
#[derive(Clone, Copy)]
pub(crate) struct AvgInput {
    /// Per-call constants.
    pub shape: AvgShape,
    /// Pattern key.
    pub key: u64,
    /// Global rank.
    pub rank: u64,
}

impl Gen for AvgInput {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let d = self.shape.draw(self.key, g);
        if self.rank == d.first {
            d.x0
        } else if self.rank == d.second && self.shape.n > 1 {
            d.x1
        } else {
            0
        }
    }
}
