//! The plain pattern of the data-movement collectives: element `g` is a function of
//! (seed, g, dtype) only. Integers are hash bits; floats are finite, normal values with a random
//! sign, an exponent from the middle half of the range and a random mantissa. A decoy is the same
//! pattern under another key.

use super::hash::{mix, Idx};
use super::kernel::Gen;
use super::layout::Layout;
use crate::core::dtype::DataType;

/// Generator of the plain pattern under one key.
#[derive(Clone, Copy)]
pub(crate) struct PlainGen {
    key: u64,
    /// Integer types: the width mask. Floats: unused.
    mask: u64,
    /// `Some` for floats.
    float: Option<FloatPlain>,
}

#[derive(Clone, Copy)]
struct FloatPlain {
    layout: Layout,
    lo_field: u64,
    /// Number of exponent fields (at most 2^16).
    fields: u32,
}

impl PlainGen {
    /// The plain pattern of `dtype` under `key`.
    pub fn new(dtype: DataType, key: u64) -> PlainGen {
        let float = Layout::of(dtype).map(|layout| {
            let (lo, hi) = layout.mid_fields;
            FloatPlain {
                layout,
                lo_field: lo,
                fields: (hi - lo + 1) as u32,
            }
        });
        PlainGen {
            key,
            mask: crate::core::numeric::width_mask(dtype),
            float,
        }
    }
}

impl PlainGen {
    /// Writes this generator's device parameters (integers: `bits` stays 0).
    pub(super) fn describe(&self, d: &mut super::device::DevParams) {
        d.family = super::device::family::PLAIN;
        d.key = self.key;
        if let Some(f) = &self.float {
            f.layout.describe(d);
            d.lo = f.lo_field;
            d.fields = f.fields;
        }
    }
}

impl Gen for PlainGen {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let h = mix(self.key, g);
        match &self.float {
            None => h & self.mask,
            Some(f) => {
                let l = &f.layout;
                let hi = (h >> 32) as u32;
                let field = f.lo_field + (((hi >> 16) * f.fields) >> 16) as u64;
                (((hi >> 15) & 1) as u64) << (l.bits - 1) | field << l.man | (h & l.man_mask())
            }
        }
    }
}

/// The all-zero pattern: what `prepare` leaves in receive buffers.
#[derive(Clone, Copy)]
pub(crate) struct ZeroGen;

impl Gen for ZeroGen {
    #[inline(always)]
    fn bits(&self, _g: Idx) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::verify::hash::{decoy_key_of, key_of};
    use crate::core::numeric::to_f64;

    #[test]
    fn float_plain_values_are_finite_and_varied() {
        for dt in DataType::ALL.into_iter().filter(|d| d.is_float()) {
            let gen = PlainGen::new(dt, key_of(5));
            let (mut neg, mut exps, mut mants) = (0, std::collections::HashSet::new(), 0u64);
            for g in 0..4000 {
                let b = gen.bits(Idx::from(g));
                let v = to_f64(dt, b);
                assert!(v.is_finite() && v != 0.0, "{dt} g={g} bits={b:#x}");
                neg += (v < 0.0) as u32;
                exps.insert(v.abs().log2().floor() as i32);
                mants |= b & Layout::of(dt).unwrap().man_mask();
            }
            assert!((1000..3000).contains(&neg), "{dt}: {neg} negatives");
            assert!(exps.len() >= 8, "{dt}: {} exponents", exps.len());
            assert_eq!(mants, Layout::of(dt).unwrap().man_mask(), "{dt}");
        }
    }

    #[test]
    fn decoys_differ_from_the_plain_pattern() {
        for dt in DataType::ALL {
            let (p, d) = (
                PlainGen::new(dt, key_of(9)),
                PlainGen::new(dt, decoy_key_of(9)),
            );
            let same = (0..1000)
                .filter(|&g| p.bits(Idx::from(g)) == d.bits(Idx::from(g)))
                .count();
            // One-byte types collide by chance about 1 in 256 (fewer values for fp8).
            assert!(same < 30, "{dt}: {same} equal elements");
        }
    }
}
