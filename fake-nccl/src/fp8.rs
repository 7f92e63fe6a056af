//! FP8 E4M3 and E5M2 <-> f32, as CUDA's `__nv_fp8` types with `__NV_SATFINITE`: round to
//! nearest even, out-of-range values (and infinities) saturate to the largest finite value,
//! NaN stays NaN.

/// An fp8 format: exponent and mantissa widths, bias, largest finite code.
#[derive(Debug, Clone, Copy)]
pub struct Format {
    pub mbits: u32,
    pub bias: i32,
    pub max_code: u8,
    pub nan_code: u8,
    /// E5M2 has infinities and IEEE NaNs (exponent all ones); E4M3 only S.1111.111 is NaN.
    pub ieee_special: bool,
}

/// `__nv_fp8_e4m3`: max 448.
pub const E4M3: Format = Format {
    mbits: 3,
    bias: 7,
    max_code: 0x7E,
    nan_code: 0x7F,
    ieee_special: false,
};
/// `__nv_fp8_e5m2`: max 57344.
pub const E5M2: Format = Format {
    mbits: 2,
    bias: 15,
    max_code: 0x7B,
    nan_code: 0x7F,
    ieee_special: true,
};

/// The value of code `b`.
pub fn decode(f: Format, b: u8) -> f32 {
    let sign: f32 = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let mag = b & 0x7F;
    let exp = (mag >> f.mbits) as i32;
    let man = (mag & ((1 << f.mbits) - 1)) as i32;
    let exp_max: i32 = 0x7F >> f.mbits;
    if f.ieee_special && exp == exp_max {
        return if man == 0 {
            sign * f32::INFINITY
        } else {
            f32::NAN
        };
    }
    if !f.ieee_special && mag == 0x7F {
        return f32::NAN;
    }
    let v = if exp == 0 {
        man as f64 * 2f64.powi(1 - f.bias - f.mbits as i32)
    } else {
        (man + (1 << f.mbits)) as f64 * 2f64.powi(exp - f.bias - f.mbits as i32)
    };
    sign * v as f32
}

/// The code nearest to `v` (ties to even), saturating to the largest finite value.
pub fn encode(f: Format, v: f32) -> u8 {
    if v.is_nan() {
        return f.nan_code;
    }
    let sign = if v.is_sign_negative() { 0x80u8 } else { 0 };
    let a = (v as f64).abs();
    let max = decode(f, f.max_code) as f64;
    if a >= max {
        return sign | f.max_code;
    }
    if a == 0.0 {
        return sign;
    }
    let emin = 1 - f.bias;
    let e = ((a.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    let quantum = 2f64.powi(e.max(emin) - f.mbits as i32);
    let value = (a / quantum).round_ties_even() * quantum;
    if value > max {
        return sign | f.max_code;
    }
    if value == 0.0 {
        return sign;
    }
    let e2 = ((value.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    let code = if e2 < emin {
        (value / 2f64.powi(emin - f.mbits as i32)) as u32
    } else {
        let man = (value / 2f64.powi(e2 - f.mbits as i32)) as u32 - (1 << f.mbits);
        (((e2 + f.bias) as u32) << f.mbits) | man
    };
    sign | code as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_finite_code_round_trips() {
        for f in [E4M3, E5M2] {
            for b in 0..=255u8 {
                let v = decode(f, b);
                if v.is_finite() {
                    let back = encode(f, v);
                    assert!(
                        back == b || (v == 0.0 && back & 0x7F == 0),
                        "{b:#x} -> {v} -> {back:#x}"
                    );
                }
            }
        }
    }

    #[test]
    fn known_values_round_to_nearest_even_and_saturate() {
        assert_eq!(decode(E4M3, 0x7E), 448.0);
        assert_eq!(decode(E5M2, 0x7B), 57344.0);
        assert_eq!(encode(E4M3, 1.0), 0x38);
        assert_eq!(encode(E4M3, 1e9), 0x7E);
        assert_eq!(encode(E4M3, -f32::INFINITY), 0xFE);
        assert_eq!(encode(E5M2, f32::INFINITY), 0x7B);
        // 1 + 1/16 is halfway between 1 and 1.125 in E4M3: ties to even (1.0).
        assert_eq!(encode(E4M3, 1.0625), 0x38);
        assert_eq!(encode(E4M3, 1.1875), 0x3A);
        // The smallest E4M3 subnormal is 2^-9; half of it rounds to zero (even).
        assert_eq!(encode(E4M3, 2f32.powi(-9)), 0x01);
        assert_eq!(encode(E4M3, 2f32.powi(-10)), 0x00);
        assert!(decode(E4M3, 0x7F).is_nan() && decode(E5M2, 0x7E).is_nan());
    }
}
