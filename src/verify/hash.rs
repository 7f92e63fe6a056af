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

/// The one mix per element: 64 well-spread bits from (key, global index).
#[inline(always)]
pub(crate) fn mix(key: u64, g: u64) -> u64 {
    let mut z = (g ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z ^= z >> 29;
    z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^ (z >> 32)
}

/// A second word from the first, for patterns that need more than 64 bits per element. Its bits
/// are not independent of `h`, only differently arranged; that is all the patterns need.
#[inline(always)]
pub(crate) fn second(h: u64) -> u64 {
    (h ^ (h >> 29)).wrapping_mul(0xD6E8_FEB8_6659_FD93)
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

/// All ones when bit `bit` of `bits` is set, else zero: a sign mask for `(v ^ m) - m`.
#[inline(always)]
pub(crate) fn bit_mask(bits: u64, bit: u32) -> i64 {
    -(((bits >> bit) & 1) as i64)
}

/// `v` negated when `mask` is all ones (from [`bit_mask`]), unchanged when it is zero.
#[inline(always)]
pub(crate) fn apply_sign(v: i64, mask: i64) -> i64 {
    (v ^ mask).wrapping_sub(mask)
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
    while k < 62 && unit.checked_shl(k + 1).is_some_and(|v| v <= budget) {
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
    fn sign_helpers_negate_only_when_the_bit_is_set() {
        assert_eq!(apply_sign(5, bit_mask(0b10, 1)), -5);
        assert_eq!(apply_sign(5, bit_mask(0b10, 0)), 5);
    }

    #[test]
    fn log2_fit_finds_the_largest_power() {
        assert_eq!(log2_fit(100, 3), 5); // 32 * 3 = 96 <= 100 < 192
        assert_eq!(log2_fit(2, 3), 0);
        assert_eq!(low_mask(0), 0);
        assert_eq!(low_mask(64), u64::MAX);
    }

    #[test]
    fn the_mix_spreads_neighbouring_indices_and_keys() {
        let a = mix(key_of(1), 10);
        assert_ne!(a, mix(key_of(1), 11));
        assert_ne!(a, mix(key_of(2), 10));
        assert_ne!(key_of(1), decoy_key_of(1));
        // About half the bits flip between neighbours.
        let flips = (mix(key_of(3), 1000) ^ mix(key_of(3), 1001)).count_ones();
        assert!((16..=48).contains(&flips), "{flips}");
    }
}
