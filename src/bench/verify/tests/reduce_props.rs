//! Property tests of the reduction patterns: for every dtype, op and rank count, the naive
//! reducer (rounding at every step) reaches exactly the expected value in every order, and the
//! inputs have the shape the patterns promise (finite, mostly nonzero, mixed signs; see
//! docs/verification.md).

use super::reducer::{reduce, Order, ORDERS};
use super::{bytes, inputs};
use crate::bench::verify::{count_wrong, Pattern};
use crate::core::collective::Content;
use crate::core::dtype::DataType;
use crate::core::numeric::to_f64;
use crate::core::op::RedOp;

const ELEMS: usize = 256;
const FIRST: usize = 12_345;

/// Reduces the columns of `ins` in `order` (shuffles vary per element).
fn reduced(dt: DataType, op: RedOp, ins: &[Vec<u64>], order: Order) -> Vec<u64> {
    (0..ins[0].len())
        .map(|k| {
            let col: Vec<u64> = ins.iter().map(|r| r[k]).collect();
            let order = match order {
                Order::Shuffled(s) => Order::Shuffled(s + k as u64),
                o => o,
            };
            reduce(dt, op, &col, order)
        })
        .collect()
}

/// Asserts that every order of the naive reducer verifies with 0 wrong (exactly equal, except
/// float avg which may use its tolerance).
fn exact_in_every_order(dt: DataType, op: RedOp, n: usize, seed: u64) {
    let p = Pattern::new(dt, op, n, seed);
    let ins = inputs(&p, FIRST, ELEMS);
    for order in ORDERS {
        let out = reduced(dt, op, &ins, order);
        let wrong = count_wrong(
            &p,
            0,
            Content::Reduced { first: FIRST },
            0,
            &bytes(dt, &out),
        );
        assert_eq!(wrong, 0, "{dt} {op} n={n} {order:?}");
        if dt.is_float() {
            assert!(
                out.iter().all(|&b| to_f64(dt, b).is_finite()),
                "{dt} {op} n={n}"
            );
        }
    }
}

#[test]
fn every_dtype_op_and_rank_count_reduces_exactly_in_every_order() {
    for dt in DataType::ALL {
        for op in RedOp::ALL {
            for n in [1, 2, 3, 4, 8] {
                exact_in_every_order(dt, op, n, 7);
            }
        }
    }
}

#[test]
fn sums_averages_and_extremes_stay_exact_for_many_ranks() {
    // 33 and 64 ranks overflow the fp8 min/max codes for distinct ordered values: those take
    // the folding path.
    for dt in DataType::ALL {
        for op in [
            RedOp::Sum,
            RedOp::MulSum,
            RedOp::Avg,
            RedOp::Min,
            RedOp::Max,
        ] {
            for n in [5, 16, 33, 64] {
                exact_in_every_order(dt, op, n, 8);
            }
        }
    }
}

#[test]
fn float_sum_inputs_are_finite_nonzero_on_every_rank_and_of_mixed_sign() {
    for dt in DataType::ALL.into_iter().filter(|d| d.is_float()) {
        for op in [RedOp::Sum, RedOp::MulSum] {
            // fp8 budgets (2^4, 2^3) cannot give 8 ranks nonzero values; 4 ranks fit.
            let n = if dt.size() == 1 { 3 } else { 8 };
            let p = Pattern::new(dt, op, n, 3);
            let ins = inputs(&p, 0, ELEMS);
            let vals: Vec<f64> = ins.iter().flatten().map(|&b| to_f64(dt, b)).collect();
            assert!(vals.iter().all(|v| v.is_finite() && *v != 0.0), "{dt} {op}");
            let neg = vals.iter().filter(|v| **v < 0.0).count();
            assert!(
                neg > vals.len() / 4 && neg < 3 * vals.len() / 4,
                "{dt} {op}: {neg} negative"
            );
            // The result is never zero, so an untouched (zeroed) output is always caught.
            let out = reduced(dt, op, &ins, Order::Left);
            assert!(out.iter().all(|&b| to_f64(dt, b) != 0.0), "{dt} {op}");
        }
    }
}

#[test]
fn with_more_ranks_than_the_fp8_budget_some_ranks_contribute_zero_but_every_rank_sometimes_counts()
{
    for dt in [DataType::F8e4m3, DataType::F8e5m2] {
        let n = 32;
        let p = Pattern::new(dt, RedOp::Sum, n, 4);
        let ins = inputs(&p, 0, 4 * ELEMS);
        for (r, row) in ins.iter().enumerate() {
            let nonzero = row.iter().filter(|&&b| to_f64(dt, b) != 0.0).count();
            assert!(
                nonzero > 0 && nonzero < row.len(),
                "{dt} rank {r}: {nonzero}"
            );
        }
    }
}

#[test]
fn integer_prod_inputs_are_odd_and_min_max_inputs_distinct() {
    for dt in DataType::ALL.into_iter().filter(|d| !d.is_float()) {
        let p = Pattern::new(dt, RedOp::Prod, 8, 5);
        assert!(
            inputs(&p, 0, ELEMS).iter().flatten().all(|b| b & 1 == 1),
            "{dt}"
        );
        let p = Pattern::new(dt, RedOp::Max, 8, 5);
        let ins = inputs(&p, 0, ELEMS);
        for k in 0..ELEMS {
            let mut col: Vec<u64> = ins.iter().map(|r| r[k]).collect();
            col.sort_unstable();
            col.dedup();
            assert_eq!(col.len(), 8, "{dt} element {k}");
        }
    }
}

#[test]
fn float_min_max_inputs_are_distinct_per_rank() {
    for dt in DataType::ALL.into_iter().filter(|d| d.is_float()) {
        let p = Pattern::new(dt, RedOp::Min, 8, 6);
        let ins = inputs(&p, 0, ELEMS);
        for k in 0..ELEMS {
            let mut col: Vec<u64> = ins.iter().map(|r| r[k]).collect();
            col.sort_unstable();
            col.dedup();
            assert_eq!(col.len(), 8, "{dt} element {k}");
        }
    }
}

#[test]
fn every_element_depends_on_seed_and_index_only_so_sub_ranges_agree() {
    for dt in [DataType::Float, DataType::Int8, DataType::F8e5m2] {
        for op in RedOp::ALL {
            let p = Pattern::new(dt, op, 4, 11);
            let whole = inputs(&p, 100, 64);
            let tail = inputs(&p, 132, 32);
            for r in 0..4 {
                assert_eq!(&whole[r][32..], &tail[r][..], "{dt} {op} rank {r}");
            }
            let other = inputs(&Pattern::new(dt, op, 4, 12), 100, 64);
            assert_ne!(whole, other, "{dt} {op}: seed must matter");
        }
    }
}

#[test]
fn one_byte_integer_extremes_over_more_ranks_than_ordered_values_fold_exactly() {
    // 129 ranks still fit int8's ordered values (128 steps); 150 take the folding path.
    for dt in [DataType::Int8, DataType::Uint8] {
        for op in [RedOp::Min, RedOp::Max] {
            for n in [129, 150] {
                exact_in_every_order(dt, op, n, 9);
            }
        }
    }
}

#[test]
fn signed_integer_extremes_cross_zero_so_an_unsigned_comparison_is_caught() {
    for dt in [DataType::Int8, DataType::Int32, DataType::Int64] {
        let p = Pattern::new(dt, RedOp::Max, 8, 10);
        let ins = inputs(&p, 0, ELEMS);
        let unsigned = match dt {
            DataType::Int8 => DataType::Uint8,
            DataType::Int32 => DataType::Uint32,
            _ => DataType::Uint64,
        };
        let out = reduced(unsigned, RedOp::Max, &ins, Order::Left);
        let wrong = count_wrong(&p, 0, Content::Reduced { first: 0 }, 0, &bytes(dt, &out));
        assert!(wrong > ELEMS as u64 / 8, "{dt}: only {wrong} caught");
    }
}
