//! A deliberately naive reducer for the tests: applies NCCL's per-type semantics one step at a
//! time, rounding to the element type after every step, in a chosen order or association.

use crate::core::dtype::DataType;
use crate::core::numeric::{from_f64, to_f64, width_mask};
use crate::core::op::{mulsum_scalar, RedOp};

/// The order or association in which rank contributions are combined.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Order {
    /// `((x0 + x1) + x2) + ...`
    Left,
    /// `x0 + (x1 + (x2 + ...))`
    Right,
    /// Left fold over a permutation drawn from this seed.
    Shuffled(u64),
    /// Pairwise halves, as a tree reduction does.
    Tree,
}

/// Every order the property tests try (the shuffle seed is varied per element by the caller).
pub(crate) const ORDERS: [Order; 4] = [Order::Left, Order::Right, Order::Shuffled(1), Order::Tree];

/// Rank `r`'s contribution after NCCL's pre-operation (avg's 1/n scalar for floats, mulsum's
/// per-rank scalar).
fn pre(dtype: DataType, op: RedOp, n: usize, r: usize, x: u64) -> u64 {
    let mask = width_mask(dtype);
    match (dtype.is_float(), op) {
        (true, RedOp::Avg) => {
            let q = to_f64(dtype, from_f64(dtype, 1.0 / n as f64));
            from_f64(dtype, to_f64(dtype, x) * q)
        }
        (true, RedOp::MulSum) => from_f64(dtype, to_f64(dtype, x) * mulsum_scalar(r) as f64),
        (false, RedOp::MulSum) => x.wrapping_mul(mulsum_scalar(r) as u64) & mask,
        _ => x,
    }
}

/// Sign-extends integer bits of `dtype` (signed types) or returns them as they are.
fn int_value(dtype: DataType, v: u64) -> i128 {
    let bits = 8 * dtype.size() as u32;
    if dtype.is_signed_int() {
        ((v << (64 - bits)) as i64 >> (64 - bits)) as i128
    } else {
        v as i128
    }
}

/// One reduction step, rounded to the element type.
pub(crate) fn combine(dtype: DataType, op: RedOp, a: u64, b: u64) -> u64 {
    let mask = width_mask(dtype);
    if dtype.is_float() {
        let (x, y) = (to_f64(dtype, a), to_f64(dtype, b));
        return match op {
            RedOp::Prod => from_f64(dtype, x * y),
            RedOp::Max => {
                if x >= y {
                    a
                } else {
                    b
                }
            }
            RedOp::Min => {
                if x <= y {
                    a
                } else {
                    b
                }
            }
            _ => from_f64(dtype, x + y),
        };
    }
    match op {
        RedOp::Prod => a.wrapping_mul(b) & mask,
        RedOp::Max => {
            if int_value(dtype, a) >= int_value(dtype, b) {
                a
            } else {
                b
            }
        }
        RedOp::Min => {
            if int_value(dtype, a) <= int_value(dtype, b) {
                a
            } else {
                b
            }
        }
        _ => a.wrapping_add(b) & mask,
    }
}

/// A permutation of `0..n` from `seed` (Fisher-Yates on a small LCG).
fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    for i in (1..n).rev() {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        p.swap(i, (s >> 33) as usize % (i + 1));
    }
    p
}

fn tree(dtype: DataType, op: RedOp, xs: &[u64]) -> u64 {
    if xs.len() == 1 {
        return xs[0];
    }
    let (l, r) = xs.split_at(xs.len() / 2);
    combine(dtype, op, tree(dtype, op, l), tree(dtype, op, r))
}

/// Reduces `inputs` (one element per rank, index = rank) in `order`.
pub(crate) fn reduce(dtype: DataType, op: RedOp, inputs: &[u64], order: Order) -> u64 {
    let n = inputs.len();
    let xs: Vec<u64> = (0..n).map(|r| pre(dtype, op, n, r, inputs[r])).collect();
    let c = |a, b| combine(dtype, op, a, b);
    let v = match order {
        Order::Left => xs[1..].iter().fold(xs[0], |a, &b| c(a, b)),
        Order::Right => xs[..n - 1].iter().rev().fold(xs[n - 1], |a, &b| c(b, a)),
        Order::Shuffled(seed) => {
            let p = permutation(n, seed);
            p[1..].iter().fold(xs[p[0]], |a, &i| c(a, xs[i]))
        }
        Order::Tree => tree(dtype, op, &xs),
    };
    if op == RedOp::Avg && !dtype.is_float() {
        let mask = width_mask(dtype);
        return (int_value(dtype, v) / n as i128) as u64 & mask;
    }
    v
}

#[test]
fn the_reducer_follows_nccl_integer_and_float_semantics() {
    // int8: 100 + 100 wraps to -56; avg of (-56 wrapped sum of [100, 100, 0]) / 3 truncates to -18.
    assert_eq!(
        reduce(DataType::Int8, RedOp::Sum, &[100, 100], Order::Left),
        200
    );
    assert_eq!(
        reduce(DataType::Int8, RedOp::Avg, &[100, 100, 0], Order::Left),
        (-18i64) as u64 & 0xff
    );
    assert_eq!(
        reduce(DataType::Uint8, RedOp::Avg, &[100, 100, 0], Order::Left),
        66
    );
    // Signed max of int8: 0x80 is -128.
    assert_eq!(
        reduce(DataType::Int8, RedOp::Max, &[0x80, 1], Order::Tree),
        1
    );
    assert_eq!(
        reduce(DataType::Uint8, RedOp::Max, &[0x80, 1], Order::Tree),
        0x80
    );
    // mulsum doubles odd ranks.
    assert_eq!(
        reduce(DataType::Int32, RedOp::MulSum, &[1, 1, 1], Order::Right),
        4
    );
    let one = from_f64(DataType::Half, 1.0);
    let want = from_f64(DataType::Half, 4.0);
    assert_eq!(
        reduce(
            DataType::Half,
            RedOp::MulSum,
            &[one, one, one],
            Order::Shuffled(3)
        ),
        want
    );
    // Rounding at every step: 2048 + 1 + 1 in half is 2048 left to right, 2050 right to left.
    let (big, small) = (from_f64(DataType::Half, 2048.0), one);
    assert_eq!(
        reduce(
            DataType::Half,
            RedOp::Sum,
            &[big, small, small],
            Order::Left
        ),
        big
    );
    assert_eq!(
        reduce(
            DataType::Half,
            RedOp::Sum,
            &[big, small, small],
            Order::Right
        ),
        from_f64(DataType::Half, 2050.0)
    );
}
