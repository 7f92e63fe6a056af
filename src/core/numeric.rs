//! Bit-level element conversions: every element is handled as its raw bits in a `u64`, and the
//! float types convert to and from `f64` (which holds every value of every narrower type exactly).
//!
//! `half` and `bfloat16` use the `half` crate; the two fp8 formats use 256-entry tables built
//! from their definitions, and round to nearest, ties to even, saturating to the largest finite
//! value (NCCL converts with `__NV_SATFINITE`).

use crate::core::dtype::DataType;
use std::sync::OnceLock;

/// Reads element `i` of a little-endian buffer of `dtype` as raw bits.
#[inline]
pub fn load(dtype: DataType, buf: &[u8], i: usize) -> u64 {
    let w = dtype.size();
    let b = &buf[i * w..i * w + w];
    match w {
        1 => b[0] as u64,
        2 => u16::from_le_bytes([b[0], b[1]]) as u64,
        4 => u32::from_le_bytes(b.try_into().unwrap()) as u64,
        _ => u64::from_le_bytes(b.try_into().unwrap()),
    }
}

/// Writes raw bits as element `i` of a little-endian buffer of `dtype`.
#[inline]
pub fn store(dtype: DataType, buf: &mut [u8], i: usize, bits: u64) {
    let w = dtype.size();
    buf[i * w..i * w + w].copy_from_slice(&bits.to_le_bytes()[..w]);
}

/// Mask of the valid bits of one element.
#[inline]
pub fn width_mask(dtype: DataType) -> u64 {
    match dtype.size() {
        8 => u64::MAX,
        w => (1u64 << (8 * w)) - 1,
    }
}

/// Value of float bits as `f64` (exact). Integer types are not floats: this panics on them.
#[inline]
pub fn to_f64(dtype: DataType, bits: u64) -> f64 {
    match dtype {
        DataType::Float => f32::from_bits(bits as u32) as f64,
        DataType::Double => f64::from_bits(bits),
        DataType::Half => half::f16::from_bits(bits as u16).to_f64(),
        DataType::Bfloat16 => half::bf16::from_bits(bits as u16).to_f64(),
        DataType::F8e4m3 | DataType::F8e5m2 => fp8_table(dtype).decode[(bits & 0xff) as usize],
        _ => panic!("to_f64 called on integer type {dtype}"),
    }
}

/// Rounds an `f64` to the nearest value of float type `dtype` (ties to even) and returns its bits.
#[inline]
pub fn from_f64(dtype: DataType, v: f64) -> u64 {
    match dtype {
        DataType::Float => (v as f32).to_bits() as u64,
        DataType::Double => v.to_bits(),
        DataType::Half => half::f16::from_f64(v).to_bits() as u64,
        DataType::Bfloat16 => half::bf16::from_f64(v).to_bits() as u64,
        DataType::F8e4m3 | DataType::F8e5m2 => fp8_encode(dtype, v),
        _ => panic!("from_f64 called on integer type {dtype}"),
    }
}

/// Decoded values of one fp8 format plus its positive finite codes in ascending value order.
struct Fp8Table {
    decode: [f64; 256],
    /// Largest positive finite code (0x7E for E4M3, 0x7B for E5M2).
    max_code: u8,
}

fn fp8_table(dtype: DataType) -> &'static Fp8Table {
    static E4M3: OnceLock<Fp8Table> = OnceLock::new();
    static E5M2: OnceLock<Fp8Table> = OnceLock::new();
    let cell = if dtype == DataType::F8e4m3 {
        &E4M3
    } else {
        &E5M2
    };
    cell.get_or_init(|| build_fp8_table(dtype))
}

fn build_fp8_table(dtype: DataType) -> Fp8Table {
    let f = dtype.float_format().expect("fp8 type");
    let mut decode = [0f64; 256];
    let mut max_code = 0u8;
    for (code, slot) in decode.iter_mut().enumerate() {
        let mag = code & 0x7f;
        let e = (mag >> f.man_bits) as i32;
        let m = (mag & ((1 << f.man_bits) - 1)) as f64;
        let top = (1i32 << f.exp_bits) - 1;
        let v = if f.ieee_special && e == top {
            if m == 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        } else if !f.ieee_special && mag == 0x7f {
            f64::NAN
        } else if e == 0 {
            m * 2f64.powi(1 - f.bias - f.man_bits as i32)
        } else {
            (1.0 + m / (1u64 << f.man_bits) as f64) * 2f64.powi(e - f.bias)
        };
        if v.is_finite() && code < 0x80 {
            max_code = max_code.max(code as u8);
        }
        *slot = if code & 0x80 != 0 { -v } else { v };
    }
    Fp8Table { decode, max_code }
}

fn fp8_encode(dtype: DataType, v: f64) -> u64 {
    let t = fp8_table(dtype);
    if v.is_nan() {
        return 0x7f;
    }
    let sign = if v.is_sign_negative() { 0x80u64 } else { 0 };
    let a = v.abs();
    // Positive finite codes are ordered by value, so a binary search finds the neighbours.
    let (mut lo, mut hi) = (0u8, t.max_code);
    if a >= t.decode[hi as usize] {
        return sign | hi as u64;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if t.decode[mid as usize] <= a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (dl, dh) = (a - t.decode[lo as usize], t.decode[hi as usize] - a);
    let code = if dl < dh || (dl == dh && lo % 2 == 0) {
        lo
    } else {
        hi
    };
    sign | code as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_known_values_decode_as_the_ocp_spec_says() {
        assert_eq!(to_f64(DataType::F8e4m3, 0x7e), 448.0);
        assert_eq!(to_f64(DataType::F8e4m3, 0x38), 1.0);
        assert_eq!(to_f64(DataType::F8e4m3, 0x01), 2f64.powi(-9));
        assert!(to_f64(DataType::F8e4m3, 0x7f).is_nan());
        assert_eq!(to_f64(DataType::F8e5m2, 0x7b), 57344.0);
        assert_eq!(to_f64(DataType::F8e5m2, 0x3c), 1.0);
        assert_eq!(to_f64(DataType::F8e5m2, 0x7c), f64::INFINITY);
        assert_eq!(to_f64(DataType::F8e5m2, 0xbc), -1.0);
    }

    #[test]
    fn every_finite_code_round_trips_for_all_float_types() {
        for dt in [
            DataType::F8e4m3,
            DataType::F8e5m2,
            DataType::Half,
            DataType::Bfloat16,
        ] {
            let codes = if dt.size() == 1 { 256u64 } else { 65536 };
            for c in 0..codes {
                let v = to_f64(dt, c);
                if v.is_finite() && !(v == 0.0 && c != 0 && dt.size() == 1 && c != 0x80) {
                    assert_eq!(from_f64(dt, v), c, "{dt} code {c:#x} value {v}");
                }
            }
        }
    }

    #[test]
    fn fp8_rounds_to_nearest_even_and_saturates() {
        // 1.0 and 1.125 are neighbours in E4M3; the midpoint goes to the even code (1.0).
        assert_eq!(from_f64(DataType::F8e4m3, 1.0625), 0x38);
        // 1.125 and 1.25: the midpoint 1.1875 goes to 1.25 (code 0x3a, even).
        assert_eq!(from_f64(DataType::F8e4m3, 1.1875), 0x3a);
        assert_eq!(from_f64(DataType::F8e4m3, 1e9), 0x7e);
        assert_eq!(from_f64(DataType::F8e5m2, -1e9), 0xfb);
    }

    #[test]
    fn load_and_store_are_little_endian() {
        let mut b = vec![0u8; 16];
        store(DataType::Int32, &mut b, 1, 0xdeadbeef);
        assert_eq!(&b[4..8], &[0xef, 0xbe, 0xad, 0xde]);
        assert_eq!(load(DataType::Int32, &b, 1), 0xdeadbeef);
        assert_eq!(width_mask(DataType::Half), 0xffff);
    }
}
