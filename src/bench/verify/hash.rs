//! The per-element randomness of the verifiable patterns: one 64-bit mix of (seed, global element
//! index), a cheap second word derived from it, and branch-free ways to cut small values out of
//! those words.
//!
//! Everything here is plain integer arithmetic without tables or branches so that the fill and
//! check loops built on it vectorize.

/// Added to the seed of a decoy pattern so it never equals the plain pattern of the same seed.
const DECOY_SALT: u64 = 0x5DEE_CE66_D1CE_D00D;

/// The per-pattern key of a seed (a full avalanche of the seed, computed once per call).
pub(crate) fn key_of(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The key of the decoy pattern of a seed.
pub(crate) fn decoy_key_of(seed: u64) -> u64 {
    key_of(seed ^ DECOY_SALT)
}

/// A global element index split into its 32-bit halves. Loops keep `hi` fixed and count `lo`,
/// so the per-element arithmetic stays in 32-bit vector lanes (twice as many per vector, and
/// 32-bit multiplies are far cheaper than 64-bit ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Idx {
    /// Bits 32..64.
    pub hi: u32,
    /// Bits 0..32.
    pub lo: u32,
}

impl From<u64> for Idx {
    fn from(g: u64) -> Idx {
        Idx {
            hi: (g >> 32) as u32,
            lo: g as u32,
        }
    }
}

/// Murmur3's 32-bit finalizer: a bijection with full avalanche.
#[inline(always)]
fn fmix32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 13;
    x = x.wrapping_mul(0xC2B2_AE35);
    x ^ (x >> 16)
}

/// The one mix per element: 64 well-spread bits from (key, global index), in 32-bit operations.
/// The low word is a bijection of the index's low half (under a key- and `hi`-dependent
/// offset, hoisted out of loops), so elements of one run never share it; the high word is
/// derived from the low one.
#[inline(always)]
pub(crate) fn mix(key: u64, g: Idx) -> u64 {
    let c = fmix32(g.hi ^ (key >> 32) as u32) ^ key as u32;
    let lo = fmix32(g.lo ^ c);
    let t = (lo ^ c.rotate_left(16)).wrapping_mul(0x9E37_79B1);
    ((t ^ (t >> 16)) as u64) << 32 | lo as u64
}

/// A second word from the first, for patterns that need more than 64 bits per element. Its bits
/// are not independent of `h`, only differently arranged; that is all the patterns need. Two
/// 32x32-bit multiplies, which vectorize far more cheaply than one 64-bit multiply.
#[inline(always)]
pub(crate) fn second(h: u64) -> u64 {
    ((h & 0xffff_ffff) * 0xD6E8_FEB9) ^ ((h >> 32) * 0x8CB9_2BA7)
}

/// A 32-bit second word from `h` in 32-bit arithmetic only, for loops that work in 32-bit lanes.
#[inline(always)]
pub(crate) fn second32(h: u64) -> u32 {
    let w = (h as u32 ^ ((h >> 32) as u32).rotate_right(16)).wrapping_mul(0x9E37_79B1);
    w ^ (w >> 15)
}

/// A value in `0..span` from 16 bits of `bits` (starting at bit `shift`); `span <= 65536`.
#[inline(always)]
pub(crate) fn pick16(bits: u64, shift: u32, span: u64) -> u64 {
    (((bits >> shift) & 0xffff) * span) >> 16
}

/// A value in `0..span` from the low 32 bits of `bits`; `span <= 2^32`.
#[inline(always)]
pub(crate) fn pick32(bits: u64, span: u64) -> u64 {
    ((bits & 0xffff_ffff) * span) >> 32
}

/// Mask of the low `k` bits (`k <= 64`).
pub(crate) fn low_mask(k: u32) -> u64 {
    if k >= 64 {
        u64::MAX
    } else {
        (1u64 << k) - 1
    }
}

/// Largest `k` with `2^k * unit <= budget` (0 when even `unit` does not fit).
pub(crate) fn log2_fit(budget: u64, unit: u64) -> u32 {
    let mut k = 0;
    while k < 62 && (unit as u128) << (k + 1) <= budget as u128 {
        k += 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_stay_in_range_and_reach_both_ends() {
        assert_eq!(pick16(0, 0, 7), 0);
        assert_eq!(pick16(0xffff, 0, 7), 6);
        assert_eq!(pick32(0xffff_ffff, 1000), 999);
        assert_eq!(pick32(u64::MAX, 1), 0);
    }

    #[test]
    fn log2_fit_finds_the_largest_power() {
        assert_eq!(log2_fit(100, 3), 5); // 32 * 3 = 96 <= 100 < 192
        assert_eq!(log2_fit(2, 3), 0);
        // No wrap-around near the top of u64.
        assert_eq!(log2_fit(1 << 63, 4), 61);
        assert_eq!(low_mask(0), 0);
        assert_eq!(low_mask(64), u64::MAX);
    }

    #[test]
    fn the_mix_spreads_neighbouring_indices_and_keys() {
        let m = |k, g: u64| mix(key_of(k), Idx::from(g));
        let a = m(1, 10);
        assert_ne!(a, m(1, 11));
        assert_ne!(a, m(2, 10));
        assert_ne!(a, m(1, 10 + (1 << 32)), "the high half matters");
        assert_ne!(key_of(1), decoy_key_of(1));
        // About half the bits flip between neighbours, in both words.
        for g in [1000u64, 77 << 32] {
            let flips = m(3, g) ^ m(3, g + 1);
            assert!(
                (6..=26).contains(&(flips as u32).count_ones()),
                "{flips:#x}"
            );
            assert!(
                (6..=26).contains(&((flips >> 32) as u32).count_ones()),
                "{flips:#x}"
            );
        }
    }
}
