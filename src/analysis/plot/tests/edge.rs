//! Degenerate and hostile curves: no panics, valid SVG, no non-finite numbers, PNG renders.

use super::{count_in, parse};
use crate::analysis::curve::{CurvePoint, CurveReport, Regime};
use crate::analysis::plot::{busbw_svg, svg_to_png, time_svg};
use crate::analysis::testdata;

/// Both charts are well-formed, NaN-free, and rasterise.
fn check_both(c: &CurveReport) {
    for svg in [busbw_svg(c), time_svg(c)] {
        parse(&svg);
        for bad in ["NaN", "inf"] {
            assert!(!svg.contains(bad), "{bad} in\n{svg}");
        }
        let png = svg_to_png(&svg).expect("rendered");
        assert_eq!(&png[1..4], b"PNG");
    }
}

#[test]
fn curve_with_no_points_draws_empty_axes() {
    let mut c = testdata::broadcast();
    c.points.clear();
    c.latency_floor_us = Some(f64::NAN);
    c.plateau_busbw_gbs = f64::NAN;
    c.sat90_bytes = None;
    check_both(&c);
    assert_eq!(count_in(&parse(&busbw_svg(&c)), "points", "circle"), 0);
}

#[test]
fn curve_with_one_point() {
    let mut c = testdata::broadcast();
    c.points.truncate(1);
    check_both(&c);
    assert_eq!(count_in(&parse(&time_svg(&c)), "points", "circle"), 1);
}

#[test]
fn two_points_and_no_regimes_is_nan_free() {
    let c = testdata::broadcast();
    check_both(&c);
    assert_eq!(count_in(&parse(&busbw_svg(&c)), "model", "polyline"), 0);
}

#[test]
fn non_finite_and_absurd_values_are_left_out() {
    let mut c = testdata::all_reduce();
    let weird = |bytes: u64, time_us: f64, busbw_gbs: f64| CurvePoint {
        bytes,
        time_us,
        time_min_us: f64::NAN,
        time_max_us: f64::INFINITY,
        samples: 3,
        busbw_gbs,
        tuning: None,
    };
    c.points.push(weird(0, 1.0, 1.0));
    c.points.push(weird(64, f64::NAN, f64::NAN));
    c.points.push(weird(u64::MAX, -5.0, f64::INFINITY));
    c.points.push(weird(128, 1e300, 1e-300));
    c.regimes.push(Regime {
        from_bytes: 0,
        to_bytes: u64::MAX,
        alpha_us: f64::NAN,
        algbw_gbs: 0.0,
        busbw_gbs: -1.0,
        rms_rel_err: f64::NAN,
        points: 0,
    });
    c.regimes[0].alpha_us = -1e6;
    c.half_perf_bytes = Some(f64::INFINITY);
    c.sat90_bytes = Some(0);
    c.latency_floor_us = Some(-3.0);
    c.plateau_busbw_gbs = f64::MAX;
    c.busbw_factor = f64::NAN;
    c.switch_points[0].time_jump = f64::NAN;
    check_both(&c);
}

#[test]
fn hostile_text_is_escaped_and_long_titles_are_cut() {
    let mut c = testdata::all_reduce();
    c.collective = format!("<b>&\"'{}", "x".repeat(500));
    c.points[0].tuning = Some(crate::analysis::input::Tuning {
        algo: "<Ring>".into(),
        proto: "\u{1}LL&".into(),
        channels: String::new(),
        model_time_us: None,
    });
    let svg = busbw_svg(&c);
    parse(&svg);
    assert!(!svg.contains("<b>"));
    assert!(svg.contains("&lt;b&gt;&amp;&quot;&apos;"));
    assert!(!svg.contains(&"x".repeat(100)));
    check_both(&c);
}
