//! The terminal report: golden text for the fixture, and edge cases.

use crate::analysis::curve::Analysis;
use crate::analysis::report::{render, Format};
use crate::analysis::testdata;

/// The whole expected report of the fixture: summary table sorted as given, detail sections
/// only for curves with regimes, switch points or anomalies (not the 2-point broadcast), the
/// counts with the peak, five skipped reasons and the count of the rest.
const GOLDEN: &str = "\
collective      dtype     op    ranks  placement     lat(us)  busbw(GB/s)  fit(GB/s)  half-perf  90%  regimes    eff
all_gather      float     none      8  in_place         8.05       139.20     140.00      3.05M  32M        2  34.8%
all_reduce      float     sum       8  out_of_place    10.05       347.60     350.00      5.72M  64M        3  86.9%
broadcast       int8      none      2  out_of_place     9.50      0.00170          -          -  16B        0   0.0%
reduce_scatter  bfloat16  sum       4  out_of_place    15.20        59.10      60.00      1.14M  16M        1  14.8%

all_gather float none, 8 ranks, in_place
  regime  sizes     alpha(us)  algbw(GB/s)  busbw(GB/s)  fit err  points
       1  1K..512K       8.00        30.00        26.25     0.9%      10
       2  1M..256M      20.00       160.00       140.00     0.4%       9
  switch  time jump  tuning
      1M      +4.2%  -

all_reduce float sum, 8 ranks, out_of_place
  regime  sizes     alpha(us)  algbw(GB/s)  busbw(GB/s)  fit err  points  tuning
       1  8B..64K       10.00        20.00        35.00     1.2%      14  Tree/LL
       2  128K..4M      14.00       120.00       210.00     1.8%       6  Ring/LL128
       3  8M..1G        30.00       200.00       350.00     0.6%       8  Ring/Simple
  switch  time jump  tuning
    128K     +13.6%  Tree/LL -> Ring/LL128
      8M      +5.2%  Ring/LL128 -> Ring/Simple

reduce_scatter bfloat16 sum, 4 ranks, out_of_place
  regime  sizes    alpha(us)  algbw(GB/s)  busbw(GB/s)  fit err  points
       1  4K..64M      15.00        80.00        60.00     8.5%      15
  anomaly                 size  detail
  placement_disagreement    1M  in-place 18.20 us vs out-of-place 14.90 us (+22.1%)
  dip                       4M  busbw 37.1 GB/s, 29% below the neighbours (52.0 GB/s)
  wrong_data               16M  #wrong 2 in cycle 1 of 3

rows read 197, skipped 7, peak 400.00 GB/s
  logs/<script>alert(1)</script>.txt:12: unparsable row: 7 fields, expected 13
  runs/a.txt:40: time column is not a number: 'N/A'
  runs/a.txt:41: time column is not a number: 'N/A'
  runs/b.json:3: missing key <time> & <size>
  runs/b.json:4: missing key 'time'
  ... and 2 more
";

#[test]
fn fixture_report_matches_golden_text() {
    let got = render(&testdata::analysis(), Format::Text);
    assert_eq!(got, GOLDEN, "\n--- got ---\n{got}");
}

#[test]
fn efficiency_column_only_with_a_peak() {
    let mut a = testdata::analysis();
    a.peak_gbs = None;
    for c in &mut a.curves {
        c.efficiency_pct = None;
    }
    let text = render(&a, Format::Text);
    let header = text.lines().next().unwrap_or_default();
    assert!(header.ends_with("regimes"), "{header}");
    assert!(text.contains("rows read 197, skipped 7\n"), "{text}");
}

#[test]
fn empty_analysis_says_so_and_counts() {
    let text = render(&Analysis::default_empty(), Format::Text);
    assert_eq!(text, "no curves\n\nrows read 0, skipped 0\n");
}

#[test]
fn control_characters_in_input_cannot_break_lines() {
    let mut a = testdata::analysis();
    a.skipped[0].reason = "bad\nrow\x1b[2J".into();
    a.curves[1].anomalies.push(crate::analysis::curve::Anomaly {
        kind: "outlier".into(),
        bytes: 8,
        detail: "two\nlines".into(),
    });
    let text = render(&a, Format::Text);
    assert!(text.contains(":12: bad row [2J\n"), "{text}");
    assert!(text.contains("  outlier    8B  two lines\n"), "{text}");
    assert!(!text.contains('\x1b'));
}

/// Skipped counts larger than the reasons kept still add up.
#[test]
fn more_count_uses_the_skipped_total() {
    let mut a = testdata::analysis();
    a.rows_skipped = 50;
    let text = render(&a, Format::Text);
    assert!(text.contains("rows read 197, skipped 50, peak"), "{text}");
    assert!(text.ends_with("  ... and 45 more\n"), "{text}");
}

impl Analysis {
    /// No rows, no curves.
    fn default_empty() -> Analysis {
        Analysis {
            rows_read: 0,
            rows_skipped: 0,
            skipped: vec![],
            peak_gbs: None,
            curves: vec![],
            notes: vec![],
        }
    }
}
