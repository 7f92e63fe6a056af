//! NCCL version codes and what each version supports, as pure functions.
//!
//! `ncclGetVersion` returns one integer whose scheme changed at 2.9: `major*1000 + minor*100 +
//! patch` before (2.8.4 is 2804), `major*10000 + minor*100 + patch` from 2.9 on (2.32.3 is 23203).
//! Old codes are all below 10000 and new ones above, so codes compare in version order.

use crate::{data_type, red_op};

/// First version with `ncclBfloat16` and `ncclAvg` (2.10.0).
pub const BF16_MIN_VERSION: i32 = 21000;
/// First version with `ncclAvg` (2.10.0).
pub const AVG_MIN_VERSION: i32 = 21000;
/// First version with `ncclRedOpCreatePreMulSum` (2.11.0).
pub const PREMULSUM_MIN_VERSION: i32 = 21100;
/// First version with `ncclFloat8e4m3` and `ncclFloat8e5m2` (2.24.0).
pub const FP8_MIN_VERSION: i32 = 22400;

/// The code NCCL's `NCCL_VERSION(X, Y, Z)` macro gives for a version.
pub fn version_code(major: i32, minor: i32, patch: i32) -> i32 {
    if major <= 2 && minor <= 8 {
        major * 1000 + minor * 100 + patch
    } else {
        major * 10000 + minor * 100 + patch
    }
}

/// `(major, minor, patch)` of a version code, either scheme.
pub fn split_version(code: i32) -> (i32, i32, i32) {
    if code < 10000 {
        (code / 1000, code % 1000 / 100, code % 100)
    } else {
        (code / 10000, code % 10000 / 100, code % 100)
    }
}

/// `"2.32.3"` for 23203, `"2.8.4"` for 2804.
pub fn version_string(code: i32) -> String {
    let (major, minor, patch) = split_version(code);
    format!("{major}.{minor}.{patch}")
}

/// Whether NCCL `version` accepts the `ncclDataType_t` code `dtype` (see [`data_type`]).
pub fn supports_dtype(version: i32, dtype: i32) -> bool {
    match dtype {
        data_type::INT8..=data_type::FLOAT64 => true,
        data_type::BFLOAT16 => version >= BF16_MIN_VERSION,
        data_type::FLOAT8E4M3 | data_type::FLOAT8E5M2 => version >= FP8_MIN_VERSION,
        _ => false,
    }
}

/// Whether NCCL `version` has the built-in `ncclRedOp_t` code `op` (see [`red_op`]).
/// PreMulSum is not a built-in code; ask [`supports_premulsum`].
pub fn supports_red_op(version: i32, op: i32) -> bool {
    match op {
        red_op::SUM..=red_op::MIN => true,
        red_op::AVG => version >= AVG_MIN_VERSION,
        _ => false,
    }
}

/// Whether NCCL `version` can create PreMulSum operators (`ncclRedOpCreatePreMulSum`).
pub fn supports_premulsum(version: i32) -> bool {
    version >= PREMULSUM_MIN_VERSION
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_both_schemes_of_the_nccl_version_macro() {
        assert_eq!(version_code(2, 8, 4), 2804);
        assert_eq!(version_code(2, 9, 6), 20906);
        assert_eq!(version_code(2, 32, 3), 23203);
        assert_eq!(version_code(3, 0, 1), 30001);
        assert_eq!(version_code(2, 10, 0), BF16_MIN_VERSION);
        assert_eq!(version_code(2, 11, 0), PREMULSUM_MIN_VERSION);
        assert_eq!(version_code(2, 24, 0), FP8_MIN_VERSION);
    }

    #[test]
    fn strings_round_trip_through_codes_of_both_schemes() {
        assert_eq!(version_string(23203), "2.32.3");
        assert_eq!(version_string(21000), "2.10.0");
        assert_eq!(version_string(20906), "2.9.6");
        assert_eq!(version_string(2804), "2.8.4");
        assert_eq!(version_string(2406), "2.4.6");
        for (major, minor, patch) in [(2, 0, 5), (2, 8, 4), (2, 9, 9), (2, 19, 3), (2, 32, 3)] {
            let code = version_code(major, minor, patch);
            assert_eq!(split_version(code), (major, minor, patch), "code {code}");
        }
    }

    #[test]
    fn old_scheme_codes_sort_below_new_ones() {
        assert!(version_code(2, 8, 99) < version_code(2, 9, 0));
    }

    #[test]
    fn bfloat16_needs_2_10_and_fp8_needs_2_24() {
        let v2_9 = version_code(2, 9, 9);
        let v2_10 = version_code(2, 10, 3);
        let v2_23 = version_code(2, 23, 4);
        let v2_24 = version_code(2, 24, 3);
        for dtype in data_type::INT8..=data_type::FLOAT64 {
            assert!(supports_dtype(2804, dtype), "dtype {dtype}");
        }
        assert!(!supports_dtype(v2_9, data_type::BFLOAT16));
        assert!(supports_dtype(v2_10, data_type::BFLOAT16));
        assert!(!supports_dtype(v2_23, data_type::FLOAT8E4M3));
        assert!(!supports_dtype(v2_23, data_type::FLOAT8E5M2));
        assert!(supports_dtype(v2_24, data_type::FLOAT8E4M3));
        assert!(supports_dtype(v2_24, data_type::FLOAT8E5M2));
        assert!(!supports_dtype(23203, 12), "ncclNumTypes is not a type");
        assert!(!supports_dtype(23203, -1));
    }

    #[test]
    fn avg_needs_2_10_and_premulsum_needs_2_11() {
        for op in red_op::SUM..=red_op::MIN {
            assert!(supports_red_op(2804, op), "op {op}");
        }
        assert!(!supports_red_op(version_code(2, 9, 9), red_op::AVG));
        assert!(supports_red_op(version_code(2, 10, 0), red_op::AVG));
        assert!(!supports_red_op(23203, 5), "ncclNumOps is not an op");
        assert!(!supports_premulsum(version_code(2, 10, 3)));
        assert!(supports_premulsum(version_code(2, 11, 4)));
    }
}
