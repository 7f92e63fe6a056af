//! Float element layouts as the patterns use them, and the exact encoders that turn an integer
//! times a power of two into element bits without any rounding.

use crate::core::dtype::DataType;

/// The facts about a float element type the patterns need, as plain numbers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// Element width in bits.
    pub bits: u32,
    /// Stored mantissa bits.
    pub man: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Smallest normal exponent.
    pub emin: i32,
    /// Largest finite exponent.
    pub emax: i32,
    /// Significand precision, implicit bit included.
    pub p: u32,
    /// Lowest and highest exponent field of the "middle half" of the range (normal, finite, far
    /// from both ends), used for values that only need to look like ordinary floats.
    pub mid_fields: (u64, u64),
}

impl Layout {
    /// The layout of a float type; `None` for integers.
    pub fn of(dtype: DataType) -> Option<Layout> {
        let f = dtype.float_format()?;
        let top = (1u64 << f.exp_bits) - 1;
        Some(Layout {
            bits: 8 * dtype.size() as u32,
            man: f.man_bits,
            bias: f.bias,
            emin: f.min_normal_exp(),
            emax: f.max_exp(),
            p: f.precision(),
            mid_fields: ((top / 4).max(1), 3 * top / 4),
        })
    }

    /// Bits of `(-1)^neg * (1.mant) * 2^exp` for a normal `exp` and `mant < 2^man`.
    #[inline(always)]
    pub fn pack(&self, neg: u64, exp: i64, mant: u64) -> u64 {
        (neg << (self.bits - 1)) | (((exp + self.bias as i64) as u64) << self.man) | mant
    }

    /// Writes the layout fields of a device parameter block.
    pub(super) fn describe(&self, d: &mut super::device::DevParams) {
        d.bits = self.bits;
        d.man = self.man;
        d.bias = self.bias;
        d.p = self.p;
    }

    /// Mask of the mantissa field.
    pub fn man_mask(&self) -> u64 {
        (1u64 << self.man) - 1
    }

    /// The exact `float` of a zero or normal element of a type narrower than `float`
    /// (32-bit arithmetic only, so loops keep 32-bit lanes).
    #[inline(always)]
    pub fn widen(&self, b: u64) -> f32 {
        let (b, top) = (b as u32, self.bits - 1);
        let sign = (b >> top) << 31;
        let mag = b & ((1u32 << top) - 1);
        let exp = ((mag >> self.man) as i32 - self.bias + 127) as u32;
        let bits = sign | (exp << 23) | ((mag & self.man_mask() as u32) << (23 - self.man));
        f32::from_bits(if mag == 0 { sign } else { bits })
    }

    /// `v` rounded to nearest, ties to even, in a type narrower than `float`; `v` must be
    /// nonzero and round to a normal, finite value.
    #[inline(always)]
    pub fn narrow(&self, v: f32) -> u64 {
        let b = v.to_bits();
        let shift = 23 - self.man;
        let exp = (((b >> 23) & 0xff) as i32 - 127 + self.bias) as u32;
        let mant = b & 0x7f_ffff;
        let (keep, rest, half) = (
            mant >> shift,
            mant & ((1 << shift) - 1),
            1u32 << (shift - 1),
        );
        let up = (rest > half || (rest == half && keep & 1 == 1)) as u32;
        (((b >> 31) << (self.bits - 1)) | ((exp << self.man | keep) + up)) as u64
    }
}

/// The integer type the sum pattern computes in: `i32` for every type of at most 24 bits of
/// precision (twice as many vector lanes), `i64` for `double`. Arithmetic wraps, which is exact
/// whenever the final value fits, as every value the pattern computes does.
pub(crate) trait Lane: Copy {
    /// `v` truncated to the lane width.
    fn of(v: u64) -> Self;
    /// Wrapping `self * o + p`.
    fn mul_add(self, o: Self, p: Self) -> Self;
    /// Wrapping `self + o`.
    fn add(self, o: Self) -> Self;
    /// `self` negated when `bit` (0 or 1) is 1.
    fn negate_if(self, bit: u32) -> Self;
    /// The low bit.
    fn low_bit(self) -> Self;
    /// The sum pattern's `(1 + a, b, u)` cut from the element's word `h` with the given masks,
    /// using only operations of the lane width.
    fn fields(h: u64, amask: u64, bmask: u64, umask: u64) -> (Self, Self, Self);
}

impl Lane for i32 {
    #[inline(always)]
    fn of(v: u64) -> i32 {
        v as i32
    }
    #[inline(always)]
    fn mul_add(self, o: i32, p: i32) -> i32 {
        self.wrapping_mul(o).wrapping_add(p)
    }
    #[inline(always)]
    fn add(self, o: i32) -> i32 {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn negate_if(self, bit: u32) -> i32 {
        let m = -(bit as i32);
        (self ^ m).wrapping_sub(m)
    }
    #[inline(always)]
    fn low_bit(self) -> i32 {
        self & 1
    }
    #[inline(always)]
    fn fields(h: u64, amask: u64, bmask: u64, umask: u64) -> (i32, i32, i32) {
        let (lo, hi) = (h as u32, (h >> 32) as u32);
        let u = lo.rotate_right(11) ^ hi.rotate_right(21);
        (
            (1 + (lo & amask as u32)) as i32,
            (hi & bmask as u32) as i32,
            (u & umask as u32) as i32,
        )
    }
}

impl Lane for i64 {
    #[inline(always)]
    fn of(v: u64) -> i64 {
        v as i64
    }
    #[inline(always)]
    fn mul_add(self, o: i64, p: i64) -> i64 {
        self.wrapping_mul(o).wrapping_add(p)
    }
    #[inline(always)]
    fn add(self, o: i64) -> i64 {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn negate_if(self, bit: u32) -> i64 {
        let m = -(bit as i64);
        (self ^ m).wrapping_sub(m)
    }
    #[inline(always)]
    fn low_bit(self) -> i64 {
        self & 1
    }
    #[inline(always)]
    fn fields(h: u64, amask: u64, bmask: u64, umask: u64) -> (i64, i64, i64) {
        (
            (1 + (h & amask)) as i64,
            (h.rotate_right(21) & bmask) as i64,
            (h.rotate_right(42) & umask) as i64,
        )
    }
}

/// Exact encoding of `k * 2^e` (the caller guarantees it is representable and, unless zero,
/// normal) as element bits.
pub(crate) trait Encode: Copy + Sync {
    /// The integer type `k` is computed in.
    type Int: Lane;
    /// The bits of `k * 2^e`.
    fn encode(&self, k: Self::Int, e: i32) -> u64;
}

/// `float`: one conversion and one multiply by a constructed power of two.
#[derive(Clone, Copy)]
pub(crate) struct EncF32;

impl Encode for EncF32 {
    type Int = i32;
    #[inline(always)]
    fn encode(&self, k: i32, e: i32) -> u64 {
        let scale = f32::from_bits(((e + 127) as u32) << 23);
        ((k as f32) * scale).to_bits() as u64
    }
}

/// `double`.
#[derive(Clone, Copy)]
pub(crate) struct EncF64;

impl Encode for EncF64 {
    type Int = i64;
    #[inline(always)]
    fn encode(&self, k: i64, e: i32) -> u64 {
        let scale = f64::from_bits(((e + 1023) as u64) << 52);
        ((k as f64) * scale).to_bits()
    }
}

/// Types narrower than `float`: build the exact `float`, then move its fields (no rounding
/// happens because the value has at most `p` significant bits).
#[derive(Clone, Copy)]
pub(crate) struct EncNarrow(pub Layout);

impl Encode for EncNarrow {
    type Int = i32;
    #[inline(always)]
    fn encode(&self, k: i32, e: i32) -> u64 {
        let l = &self.0;
        let b = EncF32.encode(k, e) as u32;
        let sign = (b >> 31) << (l.bits - 1);
        let exp = (((b >> 23) & 0xff) as i32 - 127 + l.bias) as u32;
        let packed = sign | (exp << l.man) | ((b & 0x7f_ffff) >> (23 - l.man));
        (if b << 1 == 0 { sign } else { packed }) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::numeric::to_f64;

    #[test]
    fn every_encoder_is_exact_on_its_range() {
        for dt in DataType::ALL.into_iter().filter(|d| d.is_float()) {
            let l = Layout::of(dt).unwrap();
            let budget = 1i64 << l.p;
            for e in [
                l.emin,
                0.clamp(l.emin, l.emax - l.p as i32),
                l.emax - l.p as i32,
            ] {
                for k in [1, -1, 3, budget - 1, -budget, budget / 2 + 1, 0] {
                    let bits = match dt {
                        DataType::Float => EncF32.encode(k as i32, e),
                        DataType::Double => EncF64.encode(k, e),
                        _ => EncNarrow(l).encode(k as i32, e),
                    };
                    let want = k as f64 * 2f64.powi(e);
                    assert_eq!(to_f64(dt, bits), want, "{dt} k={k} e={e}");
                }
            }
        }
    }

    #[test]
    fn widening_is_exact_and_narrowing_rounds_to_nearest_even() {
        use crate::core::numeric::from_f64;
        for dt in [
            DataType::Half,
            DataType::Bfloat16,
            DataType::F8e4m3,
            DataType::F8e5m2,
        ] {
            let l = Layout::of(dt).unwrap();
            let sign = 1u64 << (l.bits - 1);
            for code in 0..(1u64 << l.bits) {
                let (v, next) = (to_f64(dt, code), to_f64(dt, code + 1));
                let subnormal = (code & (sign - 1)) >> l.man == 0 && v != 0.0;
                if !v.is_finite() || subnormal {
                    continue;
                }
                assert_eq!(l.widen(code) as f64, v, "{dt} {code:#x}");
                if v == 0.0 || !next.is_finite() || (code + 1) & sign != code & sign {
                    continue;
                }
                // Points between this code and the next (exact in float) round as from_f64 does,
                // the midpoint to the even code.
                for frac in [0.25f32, 0.5, 0.75] {
                    let x = l.widen(code) + (l.widen(code + 1) - l.widen(code)) * frac;
                    assert_eq!(
                        l.narrow(x),
                        from_f64(dt, x as f64),
                        "{dt} {code:#x} + {frac}"
                    );
                }
            }
        }
    }

    #[test]
    fn middle_fields_are_normal_and_finite() {
        for dt in DataType::ALL.into_iter().filter(|d| d.is_float()) {
            let l = Layout::of(dt).unwrap();
            let (lo, hi) = l.mid_fields;
            let big = l.pack(0, hi as i64 - l.bias as i64, l.man_mask());
            let small = l.pack(1, lo as i64 - l.bias as i64, 0);
            assert!(to_f64(dt, big).is_finite() && to_f64(dt, big) > 1.0, "{dt}");
            assert!(to_f64(dt, small) < 0.0 && to_f64(dt, small) > -1.0, "{dt}");
        }
    }
}
