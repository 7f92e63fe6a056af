//! Reduction kernels against the naive scalar reference, plus hand-worked cases for the rules
//! that are easy to get wrong: wrap-around, signed comparison, integer avg truncation, PreMulSum
//! scalars, float avg's rounded 1/n, and exact fp8 arithmetic.

use super::model::{finite, mix, naive};
use crate::core::dtype::DataType;
use crate::core::numeric::{from_f64, load, store, to_f64, width_mask};
use crate::core::op::RedOp;
use crate::core::reduce::reduce;

/// Runs the kernel on one element per rank.
fn one(dtype: DataType, op: RedOp, xs: &[u64]) -> u64 {
    let w = dtype.size();
    let inputs: Vec<Vec<u8>> = xs
        .iter()
        .map(|&x| {
            let mut b = vec![0u8; w];
            store(dtype, &mut b, 0, x);
            b
        })
        .collect();
    let refs: Vec<&[u8]> = inputs.iter().map(|v| v.as_slice()).collect();
    let mut out = vec![0u8; w];
    reduce(dtype, op, &refs, &mut out);
    load(dtype, &out, 0)
}

fn ints(dtype: DataType, op: RedOp, xs: &[i64]) -> i64 {
    let mask = width_mask(dtype);
    let bits: Vec<u64> = xs.iter().map(|&x| x as u64 & mask).collect();
    let r = one(dtype, op, &bits);
    let shift = 64 - 8 * dtype.size() as u32;
    if dtype.is_signed_int() {
        ((r << shift) as i64) >> shift
    } else {
        r as i64
    }
}

fn floats(dtype: DataType, op: RedOp, xs: &[f64]) -> f64 {
    let bits: Vec<u64> = xs.iter().map(|&x| from_f64(dtype, x)).collect();
    to_f64(dtype, one(dtype, op, &bits))
}

#[test]
fn integers_wrap_compare_with_sign_and_average_toward_zero() {
    use DataType::*;
    use RedOp::*;
    assert_eq!(ints(Int8, Sum, &[100, 100]), -56);
    assert_eq!(ints(Uint8, Sum, &[200, 100]), 44);
    assert_eq!(ints(Int64, Prod, &[i64::MAX, 2]), -2);
    assert_eq!(ints(Uint32, Prod, &[1 << 16, 1 << 16]), 0);
    assert_eq!(ints(Int8, Max, &[-1, 1]), 1);
    assert_eq!(ints(Uint8, Max, &[0xff, 1]), 0xff);
    assert_eq!(ints(Int32, Min, &[-5, 3, 7]), -5);
    assert_eq!(ints(Uint64, Min, &[-1, 3]), 3);
    // Truncation toward zero: -7/2 is -3 (flooring would give -4).
    assert_eq!(ints(Int32, Avg, &[-7, 0]), -3);
    assert_eq!(ints(Int8, Avg, &[7, 0, 0]), 2);
    // The sum wraps before the division: 127 + 1 = -128 in int8, / 2 = -64.
    assert_eq!(ints(Int8, Avg, &[127, 1]), -64);
    assert_eq!(ints(Uint32, Avg, &[u32::MAX as i64, 1]), 0);
    // PreMulSum scalars 1, 2, 1, 2.
    assert_eq!(ints(Int32, MulSum, &[5, 5, 5, 5]), 30);
    assert_eq!(ints(Uint8, MulSum, &[0, 200]), 144);
}

#[test]
fn float_rules_round_in_the_element_type() {
    use DataType::*;
    use RedOp::*;
    // fp8 cases exact in the format (no saturation).
    assert_eq!(floats(F8e4m3, Sum, &[1.0, 2.0]), 3.0);
    assert_eq!(floats(F8e4m3, Prod, &[0.5, 4.0, -1.5]), -3.0);
    assert_eq!(floats(F8e4m3, Avg, &[2.0, 4.0]), 3.0);
    assert_eq!(floats(F8e5m2, Sum, &[1.5, 0.25]), 1.75);
    assert_eq!(floats(F8e5m2, MulSum, &[1.0, 0.5, 0.5]), 2.5);
    assert_eq!(floats(F8e4m3, Max, &[-2.0, 0.125]), 0.125);
    // Float avg multiplies each input by 1/n rounded to the type, then sums: in half, 1/6
    // rounds to 0.1666259765625, and six such terms of 1 sum to 0.99951171875, not 1.
    assert_eq!(floats(Half, Avg, &[1.0; 6]), 0.99951171875);
    assert_eq!(floats(Half, Avg, &[7.0; 3]), 6.99609375);
    // Float sums round every step: 2^24 + 1 + 1 stays 2^24 in float, in this order.
    let big = 16_777_216.0;
    assert_eq!(floats(Float, Sum, &[big, 1.0, 1.0]), big);
    assert_eq!(floats(Double, Sum, &[big, 1.0, 1.0]), big + 2.0);
}

#[test]
fn every_dtype_and_op_matches_the_naive_reference() {
    for dtype in DataType::ALL {
        for op in RedOp::ALL {
            for n in [1usize, 2, 3, 5, 8] {
                let len = 257;
                let w = dtype.size();
                let el = |r: usize, i: usize| {
                    let h = mix((r as u64) << 32 ^ i as u64 ^ (w as u64) << 56);
                    if dtype.is_float() {
                        finite(dtype, h)
                    } else {
                        h & width_mask(dtype)
                    }
                };
                let inputs: Vec<Vec<u8>> = (0..n)
                    .map(|r| {
                        let mut b = vec![0u8; len * w];
                        (0..len).for_each(|i| store(dtype, &mut b, i, el(r, i)));
                        b
                    })
                    .collect();
                let refs: Vec<&[u8]> = inputs.iter().map(|v| v.as_slice()).collect();
                let mut out = vec![0u8; len * w];
                reduce(dtype, op, &refs, &mut out);
                for i in 0..len {
                    let xs: Vec<u64> = (0..n).map(|r| el(r, i)).collect();
                    assert_eq!(
                        load(dtype, &out, i),
                        naive(dtype, op, &xs),
                        "{dtype} {op} n={n} element {i} inputs {xs:x?}"
                    );
                }
            }
        }
    }
}
