//! The charts of the fixture curves hold what they promise.

use super::{count_in, groups, parse, text_in};
use crate::analysis::plot::{busbw_svg, model, time_svg};
use crate::analysis::testdata;

#[test]
fn busbw_chart_of_the_tuned_all_reduce_has_every_element() {
    let c = testdata::all_reduce();
    let svg = busbw_svg(&c);
    let doc = parse(&svg);
    let root = doc.root_element();
    assert_eq!(root.attribute("width"), Some("1200"));
    assert_eq!(root.attribute("height"), Some("700"));
    assert!(root
        .attribute("font-family")
        .is_some_and(|f| f.starts_with("'DejaVu Sans'") && f.ends_with("sans-serif")));
    assert_eq!(count_in(&doc, "points", "circle"), c.points.len());
    // Four samples per point: a whisker (three lines) on each.
    assert_eq!(count_in(&doc, "whiskers", "line"), 3 * c.points.len());
    assert_eq!(count_in(&doc, "model", "polyline"), 3);
    assert_eq!(count_in(&doc, "plateau", "line"), 1);
    assert!(text_in(&doc, "plateau").contains("plateau 347.60 GB/s"));
    assert_eq!(count_in(&doc, "half-perf", "line"), 1);
    assert!(text_in(&doc, "half-perf").contains("half-perf 5.72M"));
    assert_eq!(count_in(&doc, "sat90", "line"), 1);
    assert!(text_in(&doc, "sat90").contains("90% at 64M"));
    assert_eq!(count_in(&doc, "switch", "line"), 2);
    assert!(text_in(&doc, "switch").contains("switch 128K +13.6%"));
    assert_eq!(count_in(&doc, "bands", "rect"), 3);
    assert_eq!(text_in(&doc, "bands"), "Tree/LL|Ring/LL128|Ring/Simple");
    let legend = text_in(&doc, "legend");
    for item in [
        "measured",
        "fit 3: 8M..1G",
        "α 30.00 us, 350.00 GB/s",
        "NCCL Ring/LL128",
    ] {
        assert!(legend.contains(item), "legend lacks {item}: {legend}");
    }
    assert!(text_in(&doc, "title").contains("all_reduce float sum, 8 ranks, out_of_place"));
}

#[test]
fn every_label_is_at_least_14px() {
    for c in testdata::analysis().curves {
        for svg in [busbw_svg(&c), time_svg(&c)] {
            let doc = parse(&svg);
            for t in doc.descendants().filter(|n| n.has_tag_name("text")) {
                let size: f64 = t
                    .attribute("font-size")
                    .unwrap_or("0")
                    .parse()
                    .unwrap_or(0.0);
                assert!(size >= 14.0, "{:?} at {size}px", t.text());
            }
        }
    }
}

#[test]
fn curve_without_tuning_has_no_bands_and_x_labels_read_as_sizes() {
    let c = testdata::all_gather();
    let svg = busbw_svg(&c);
    let doc = parse(&svg);
    assert!(groups(&doc, "bands").is_empty());
    assert_eq!(count_in(&doc, "points", "circle"), c.points.len());
    assert_eq!(count_in(&doc, "model", "polyline"), 2);
    let grid = text_in(&doc, "grid");
    for label in ["1K", "4K", "64K", "1M", "16M", "256M", "0", "50", "150"] {
        assert!(
            grid.split('|').any(|t| t == label),
            "no tick {label}: {grid}"
        );
    }
}

#[test]
fn time_chart_is_log_log_with_points_fit_and_floor() {
    let c = testdata::all_reduce();
    let svg = time_svg(&c);
    let doc = parse(&svg);
    assert_eq!(count_in(&doc, "points", "circle"), c.points.len());
    assert_eq!(count_in(&doc, "model", "polyline"), 3);
    assert!(text_in(&doc, "floor").contains("latency floor 10.05 us"));
    assert_eq!(count_in(&doc, "switch", "line"), 2);
    let grid = text_in(&doc, "grid");
    for label in ["10 us", "100 us", "1 ms", "10 ms"] {
        assert!(
            grid.split('|').any(|t| t == label),
            "no tick {label}: {grid}"
        );
    }
}

#[test]
fn anomalies_are_ringed_on_both_charts() {
    let c = testdata::reduce_scatter();
    for svg in [busbw_svg(&c), time_svg(&c)] {
        let doc = parse(&svg);
        assert_eq!(count_in(&doc, "anomalies", "circle"), c.anomalies.len());
    }
}

/// The model line is the alpha-beta curve: at the half-performance size `alpha x B` the
/// busbw is half the regime's asymptote, and the time is twice alpha.
#[test]
fn model_has_half_the_bandwidth_at_the_half_performance_size() {
    let c = testdata::all_reduce();
    let r = &c.regimes[2];
    let half = r.alpha_us * 1e-6 * r.algbw_gbs * 1e9;
    let busbw = model::busbw_gbs(r, c.busbw_factor, half).expect("defined");
    assert!((busbw - r.busbw_gbs / 2.0).abs() < 1e-9, "{busbw}");
    let t = model::time_us(r, c.busbw_factor, half).expect("defined");
    assert!((t - 2.0 * r.alpha_us).abs() < 1e-9, "{t}");
}

#[test]
fn bands_follow_runs_of_the_same_choice_with_midpoint_edges() {
    let bands = model::bands(&testdata::all_reduce());
    let labels: Vec<&str> = bands.iter().map(|b| b.label.as_str()).collect();
    assert_eq!(labels, ["Tree/LL", "Ring/LL128", "Ring/Simple"]);
    assert_eq!(bands[0].lo_bytes, 0.0);
    assert!((bands[0].hi_bytes - 2f64.powf(16.5)).abs() < 1e-6);
    assert_eq!(bands[0].hi_bytes, bands[1].lo_bytes);
    assert!((bands[1].hi_bytes - 2f64.powf(22.5)).abs() < 1e-6);
    assert_eq!(bands[2].hi_bytes, f64::MAX);
    assert_ne!(bands[0].color, bands[1].color);
}
