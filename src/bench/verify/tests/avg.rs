//! The proof of the float `avg` tolerance: for every float type, every n in 1..=64 and many
//! elements, the ways NCCL may compute an average all land within 2 units (bit-pattern distance)
//! of the expectation:
//! * A: scalar `1/n` and products rounded to the element type, sum in the element type (this is
//!   the expectation itself, so it must match exactly);
//! * B: scalar and products rounded in `float`, products then converted to the element type,
//!   sum in the element type (both orders);
//! * C: everything in `float`, one conversion to the element type at the end.

use super::reducer::{combine, reduce, Order};
use super::{bytes, inputs};
use crate::bench::verify::{count_wrong, tolerance, Pattern};
use crate::core::collective::Content;
use crate::core::dtype::DataType;
use crate::core::numeric::{from_f64, to_f64};
use crate::core::op::RedOp;

const ELEMS: usize = 200;

/// Variant B for one element: products in `float`, converted, summed in the element type.
fn via_f32_products(dt: DataType, col: &[u64], reverse: bool) -> u64 {
    let q = (1.0 / col.len() as f64) as f32;
    let ys: Vec<u64> = col
        .iter()
        .map(|&x| from_f64(dt, (to_f64(dt, x) as f32 * q) as f64))
        .collect();
    let mut it: Box<dyn Iterator<Item = &u64>> = if reverse {
        Box::new(ys.iter().rev())
    } else {
        Box::new(ys.iter())
    };
    let first = *it.next().unwrap();
    it.fold(first, |a, &b| combine(dt, RedOp::Sum, a, b))
}

/// Variant C for one element: all arithmetic in `float`.
fn all_in_f32(dt: DataType, col: &[u64]) -> u64 {
    let q = (1.0 / col.len() as f64) as f32;
    let s = col.iter().fold(0f32, |a, &x| a + to_f64(dt, x) as f32 * q);
    from_f64(dt, s as f64)
}

/// Largest bit-pattern distance between `got` and `want`.
fn max_distance(got: &[u64], want: &[u64]) -> u64 {
    got.iter()
        .zip(want)
        .map(|(a, b)| a.abs_diff(*b))
        .max()
        .unwrap_or(0)
}

#[test]
fn every_nccl_style_average_is_within_two_units_for_n_up_to_64() {
    for dt in DataType::ALL.into_iter().filter(|d| d.is_float()) {
        let narrow = dt != DataType::Double;
        let mut worst = 0;
        for n in 1..=64usize {
            let p = Pattern::new(dt, RedOp::Avg, n, n as u64);
            let ins = inputs(&p, 777, ELEMS);
            let cols: Vec<Vec<u64>> = (0..ELEMS)
                .map(|k| ins.iter().map(|r| r[k]).collect())
                .collect();
            let a: Vec<u64> = cols
                .iter()
                .map(|c| reduce(dt, RedOp::Avg, c, Order::Left))
                .collect();
            let mut variants = vec![("A", a)];
            if narrow {
                for rev in [false, true] {
                    variants.push((
                        "B",
                        cols.iter().map(|c| via_f32_products(dt, c, rev)).collect(),
                    ));
                }
                variants.push(("C", cols.iter().map(|c| all_in_f32(dt, c)).collect()));
            }
            let expected = {
                let mut buf = vec![0u8; ELEMS * dt.size()];
                crate::bench::verify::write_content(
                    &p,
                    0,
                    Content::Reduced { first: 777 },
                    0,
                    &mut buf,
                );
                (0..ELEMS)
                    .map(|k| crate::core::numeric::load(dt, &buf, k))
                    .collect::<Vec<_>>()
            };
            for (name, got) in &variants {
                let d = max_distance(got, &expected);
                worst = worst.max(d);
                assert!(
                    d <= tolerance(dt, RedOp::Avg),
                    "{dt} n={n} variant {name}: {d} units"
                );
                if *name == "A" {
                    assert_eq!(d, 0, "{dt} n={n}: the expectation is variant A");
                }
                let wrong = count_wrong(&p, 0, Content::Reduced { first: 777 }, 0, &bytes(dt, got));
                assert_eq!(wrong, 0, "{dt} n={n} variant {name}");
            }
        }
        // The tolerance is needed at all: some variant differs somewhere (not for double,
        // which only has variant A).
        assert!(
            !narrow || dt == DataType::Float || worst > 0,
            "{dt}: no variant ever differed"
        );
    }
}

#[test]
fn only_two_ranks_contribute_to_each_average_and_they_have_one_sign() {
    for dt in DataType::ALL.into_iter().filter(|d| d.is_float()) {
        for n in [2usize, 3, 17] {
            let p = Pattern::new(dt, RedOp::Avg, n, 1);
            let ins = inputs(&p, 0, ELEMS);
            for k in 0..ELEMS {
                let vals: Vec<f64> = ins
                    .iter()
                    .map(|r| to_f64(dt, r[k]))
                    .filter(|v| *v != 0.0)
                    .collect();
                assert_eq!(vals.len(), 2, "{dt} n={n} element {k}");
                assert_eq!(vals[0] < 0.0, vals[1] < 0.0, "{dt} n={n} element {k}");
            }
        }
    }
}
