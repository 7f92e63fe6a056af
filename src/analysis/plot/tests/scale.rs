//! Axis scales and tick labels.

use crate::analysis::plot::scale::{
    linear_ticks, nice_step, size_ticks, time_label, time_ticks, Axis, Kind,
};

fn labels(ticks: &[(f64, String)]) -> Vec<&str> {
    ticks.iter().map(|t| t.1.as_str()).collect()
}

#[test]
fn size_axis_8b_to_1g_labels_every_other_doubling() {
    let axis = Axis::new(Kind::Log2, 2.5, 30.5, 100.0, 900.0);
    let ticks = size_ticks(&axis);
    assert_eq!(
        labels(&ticks.major),
        [
            "16B", "64B", "256B", "1K", "4K", "16K", "64K", "256K", "1M", "4M", "16M", "64M",
            "256M", "1G"
        ]
    );
    assert_eq!(ticks.minor.len(), 14, "odd doublings are minor");
}

#[test]
fn wide_size_axis_strides_by_ten_doublings() {
    let axis = Axis::new(Kind::Log2, 0.0, 63.0, 100.0, 900.0);
    let ticks = size_ticks(&axis);
    assert!(ticks.major.len() <= 15, "{:?}", ticks.major);
    assert!(labels(&ticks.major).contains(&"1G"));
}

#[test]
fn time_labels_pick_the_unit() {
    assert_eq!(time_label(0.1), "0.1 us");
    assert_eq!(time_label(10.0), "10 us");
    assert_eq!(time_label(1000.0), "1 ms");
    assert_eq!(time_label(2.5e6), "2.5 s");
    let axis = Axis::new(Kind::Log10, 1.0, 4.0, 600.0, 92.0);
    assert_eq!(
        labels(&time_ticks(&axis).major),
        ["10 us", "100 us", "1 ms", "10 ms"]
    );
    let short = Axis::new(Kind::Log10, 0.0, 1.0, 600.0, 92.0);
    assert_eq!(
        labels(&time_ticks(&short).major),
        ["1 us", "2 us", "5 us", "10 us"]
    );
}

#[test]
fn linear_ticks_use_1_2_2_5_5_steps_and_enough_decimals() {
    assert_eq!(nice_step(380.0, 6.0), 100.0);
    assert_eq!(nice_step(140.0, 6.0), 25.0);
    assert_eq!(nice_step(0.0018, 6.0), 0.0005);
    let axis = Axis::new(Kind::Linear, 0.0, 150.0, 600.0, 92.0);
    assert_eq!(
        labels(&linear_ticks(&axis, 25.0).major),
        ["0", "25", "50", "75", "100", "125", "150"]
    );
    let small = Axis::new(Kind::Linear, 0.0, 0.75, 600.0, 92.0);
    assert_eq!(
        labels(&linear_ticks(&small, 0.25).major),
        ["0.00", "0.25", "0.50", "0.75"]
    );
}

#[test]
fn values_off_a_log_axis_map_to_none_and_others_clamp() {
    let axis = Axis::new(Kind::Log2, 3.0, 30.0, 100.0, 900.0);
    assert_eq!(axis.px(0.0), None);
    assert_eq!(axis.px(-5.0), None);
    assert_eq!(axis.px(f64::NAN), None);
    assert_eq!(axis.px(1.0), Some(100.0));
    assert_eq!(axis.px(f64::MAX), Some(900.0));
    let empty = Axis::new(Kind::Linear, f64::NAN, f64::NAN, 0.0, 10.0);
    assert_eq!(empty.px(0.5), Some(5.0));
}
