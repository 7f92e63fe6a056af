//! The builder on hostile input: random rows with every kind of bad value (NaN, infinities,
//! negative, zero and subnormal times, duplicate sizes, unknown collectives and rank counts,
//! huge sizes) must give a report without panicking and without a non-finite number.

use crate::analysis::build::*;
use crate::analysis::input::{SourceRef, Tuning};
use crate::result::Placement;

/// xorshift64*.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn pick<T: Copy>(state: &mut u64, from: &[T]) -> T {
    from[(next(state) % from.len() as u64) as usize]
}

fn random_row(state: &mut u64) -> InputRow {
    let times = [
        f64::NAN,
        f64::INFINITY,
        -1.0,
        0.0,
        1e-310,
        1e300,
        5.0,
        12.5,
        1e4,
    ];
    let time_us = if next(state) % 3 == 0 {
        pick(state, &times)
    } else {
        (next(state) % 100_000) as f64 / 10.0 + 1.0
    };
    InputRow {
        source: SourceRef {
            file: "fuzz".into(),
            line: 1,
        },
        collective: pick(
            state,
            &[None, Some("all_reduce"), Some("hypercube"), Some("bogus")],
        )
        .map(str::to_string),
        dtype: pick(state, &["float", "half"]).into(),
        op: "sum".into(),
        root: -1,
        nranks: pick(state, &[None, Some(0), Some(1), Some(2), Some(8)]),
        placement: pick(state, &Placement::BOTH),
        cycle: (next(state) % 3) as u32,
        run: 0,
        bytes: pick(state, &[0, 8, 1 << 20, u64::MAX]) >> (next(state) % 40),
        count: 1,
        time_us,
        algbw_gbs: pick(state, &[f64::NAN, 0.0, -3.0, 1.5, 1e308]),
        busbw_gbs: pick(state, &[f64::NAN, 0.0, 2.0, f64::INFINITY]),
        wrong: pick(state, &[None, Some(f64::NAN), Some(0.0), Some(2.0)]),
        tuning: (next(state) % 4 == 0).then(|| Tuning {
            algo: pick(state, &["Ring", "Tree"]).into(),
            proto: "LL".into(),
            channels: "0..1".into(),
            model_time_us: None,
        }),
    }
}

/// Every f64 in the serialised report is a number (serde_json writes non-finite values as
/// `null`; the only nulls allowed are those of `Option` fields).
fn assert_finite(a: &Analysis) {
    let json = serde_json::to_value(a).expect("serialise");
    fn walk(v: &serde_json::Value, key: &str) {
        match v {
            serde_json::Value::Null => assert!(
                matches!(
                    key,
                    "efficiency_pct"
                        | "sat90_bytes"
                        | "tuning"
                        | "tuning_change"
                        | "peak_gbs"
                        | "latency_floor_us"
                        | "half_perf_bytes"
                ),
                "non-finite number at {key}"
            ),
            serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, key)),
            serde_json::Value::Object(m) => m.iter().for_each(|(k, v)| walk(v, k)),
            _ => {}
        }
    }
    walk(&json, "");
}

#[test]
fn random_hostile_rows_never_panic_nor_produce_non_finite_numbers() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut fitted = 0;
    for round in 0..200 {
        let mut rows: Vec<InputRow> = (0..(round % 60)).map(|_| random_row(&mut state)).collect();
        if round % 2 == 0 {
            // One long curve, so the fit itself meets the bad values.
            for r in &mut rows {
                (r.collective, r.nranks) = (Some("all_reduce".into()), Some(8));
                (r.dtype, r.placement) = ("float".into(), Placement::OutOfPlace);
            }
        }
        let set = ReadSet {
            rows,
            skipped: vec![],
            inferred: vec![],
            group_rows: 0,
        };
        let peak = pick(&mut state, &[None, Some(0.0), Some(f64::NAN), Some(400.0)]);
        let a = analyze(&set, peak);
        assert_eq!(a.rows_read, set.rows.len());
        assert_eq!(
            a.curves.iter().map(|c| c.rows).sum::<usize>(),
            set.rows.len()
        );
        assert_finite(&a);
        fitted += a.curves.iter().filter(|c| !c.regimes.is_empty()).count();
    }
    assert!(
        fitted > 10,
        "the fit itself must meet the bad values ({fitted} fitted curves)"
    );
}
