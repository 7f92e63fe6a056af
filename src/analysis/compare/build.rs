//! From two read sides to a [`Comparison`]: align curves and sizes, test each size, adjust
//! the curve's p-values (Benjamini-Hochberg), give verdicts, and compare the whole-curve
//! numbers of the existing analysis (latency floor, plateau, half-performance size) over the
//! sizes both sides share, so a wider sweep on one side cannot move them.

use super::model::{
    Change, Comparison, CurveComparison, CurveId, Side, SideStats, SizeComparison, Totals,
};
use super::setup;
use super::side::Grouped;
use super::stats::{self, Verdict};
use crate::analysis::build::curve_report;
use crate::analysis::build::metrics::tuning_change;
use crate::analysis::curve::{CurveKey, CurvePoint, CurveReport};
use crate::analysis::input::InputRow;
use crate::core::stats::median;
use std::collections::BTreeMap;

/// Compares two grouped sides; `threshold` is a fraction (0.05 = 5%).
pub fn compare(before: (&Grouped, Side), after: (&Grouped, Side), threshold: f64) -> Comparison {
    let (gb, side_b) = before;
    let (ga, side_a) = after;
    let mut curves = Vec::new();
    for (id, sizes_b) in gb {
        if let Some(sizes_a) = ga.get(id) {
            curves.push(curve(id, sizes_b, sizes_a, threshold));
        }
    }
    let only = |x: &Grouped, y: &Grouped| -> Vec<CurveId> {
        x.keys().filter(|k| !y.contains_key(*k)).cloned().collect()
    };
    let mut totals = Totals::default();
    for c in &curves {
        totals.compared += c.sizes.len();
        totals.slower += c.slower;
        totals.faster += c.faster;
        totals.unchanged += c.unchanged;
        totals.only_before += c.only_before_bytes.len();
        totals.only_after += c.only_after_bytes.len();
    }
    let mut differences = setup::differences(&side_b.setup, &side_a.setup);
    differences.sort_by_key(|d| !d.warning);
    Comparison {
        threshold_pct: threshold * 100.0,
        alpha: stats::ALPHA,
        unlike_setup: differences.iter().any(|d| d.warning),
        banner: setup::banner(&differences),
        differences,
        only_before_curves: only(gb, ga),
        only_after_curves: only(ga, gb),
        regression: totals.slower > 0,
        totals,
        curves,
        before: side_b,
        after: side_a,
    }
}

/// The analysis key of a curve (the analysis pools roots; here each root is its own curve).
fn key(id: &CurveId) -> CurveKey {
    CurveKey {
        collective: id.collective.clone(),
        dtype: id.dtype.clone(),
        op: id.op.clone(),
        nranks: id.nranks,
        placement: id.placement.clone(),
    }
}

/// The analysis report of one side over the given sizes.
fn report(id: &CurveId, sizes: &BTreeMap<u64, Vec<&InputRow>>, keep: &[u64]) -> CurveReport {
    let rows: Vec<&InputRow> = keep
        .iter()
        .filter_map(|b| sizes.get(b))
        .flatten()
        .copied()
        .collect();
    curve_report(&key(id), &rows, None)
}

/// The change of one whole-curve number; a side without the number (with its reason among
/// that side's notes, found by the field name) makes the change null and says why.
fn change(
    field: &str,
    before: (Option<f64>, &CurveReport),
    after: (Option<f64>, &CurveReport),
) -> Change {
    let why = |side: &str, r: &CurveReport| {
        let note = r.notes.iter().find(|n| n.starts_with(field))?;
        Some(format!("{side}: {note}"))
    };
    let reasons: Vec<String> = [
        before
            .0
            .is_none()
            .then(|| why("before", before.1))
            .flatten(),
        after.0.is_none().then(|| why("after", after.1)).flatten(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let change = match (before.0, after.0) {
        (Some(b), Some(a)) => Some(a / b - 1.0).filter(|r| b > 0.0 && r.is_finite()),
        _ => None,
    };
    Change {
        before: before.0,
        after: after.0,
        change,
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
    }
}

fn side_stats(rows: &[&InputRow], point: Option<&CurvePoint>) -> (SideStats, Vec<f64>) {
    let times: Vec<f64> = rows.iter().map(|r| r.time_us).collect();
    let stats = SideStats {
        median_us: median(times.clone()).unwrap_or(0.0),
        min_us: times.iter().copied().fold(f64::INFINITY, f64::min),
        max_us: times.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        samples: times.len(),
        busbw_gbs: point.map_or(0.0, |p| p.busbw_gbs),
        tuning: point.and_then(|p| p.tuning.clone()),
    };
    (stats, times)
}

/// One curve on both sides.
fn curve(
    id: &CurveId,
    before: &BTreeMap<u64, Vec<&InputRow>>,
    after: &BTreeMap<u64, Vec<&InputRow>>,
    threshold: f64,
) -> CurveComparison {
    let common: Vec<u64> = before
        .keys()
        .filter(|b| after.contains_key(*b))
        .copied()
        .collect();
    let (rb, ra) = (report(id, before, &common), report(id, after, &common));
    let point = |r: &CurveReport, b: u64| r.points.iter().find(|p| p.bytes == b).cloned();
    let mut sizes = Vec::with_capacity(common.len());
    let mut tests = Vec::with_capacity(common.len());
    for &bytes in &common {
        let (sb, tb) = side_stats(&before[&bytes], point(&rb, bytes).as_ref());
        let (sa, ta) = side_stats(&after[&bytes], point(&ra, bytes).as_ref());
        let test = stats::welch_log(&tb, &ta);
        let tuning_change = match (&sb.tuning, &sa.tuning) {
            (Some(x), Some(y)) if !x.same_decision(y) => tuning_change(Some(x), Some(y)),
            _ => None,
        };
        tests.push(test);
        sizes.push(SizeComparison {
            bytes,
            ratio: sa.median_us / sb.median_us,
            before: sb,
            after: sa,
            ci_low: test.map(|t| t.ci_low),
            ci_high: test.map(|t| t.ci_high),
            p_value: test.map(|t| t.p_value),
            q_value: None,
            verdict: String::new(),
            basis: String::new(),
            tuning_change,
        });
    }
    let q = stats::bh_adjust(
        &tests
            .iter()
            .map(|t| t.map(|t| t.p_value))
            .collect::<Vec<_>>(),
    );
    let (mut slower, mut faster, mut unchanged) = (0, 0, 0);
    for ((s, t), q) in sizes.iter_mut().zip(&tests).zip(q) {
        let (v, basis) = stats::verdict(s.ratio, threshold, q, t.map(|t| t.ratio_gm));
        s.q_value = q;
        s.verdict = match v {
            Verdict::Slower => {
                slower += 1;
                "slower"
            }
            Verdict::Faster => {
                faster += 1;
                "faster"
            }
            Verdict::Unchanged => {
                unchanged += 1;
                "unchanged"
            }
        }
        .to_string();
        s.basis = basis.text().to_string();
    }
    let only = |x: &BTreeMap<u64, Vec<&InputRow>>, y: &BTreeMap<u64, Vec<&InputRow>>| {
        x.keys().filter(|b| !y.contains_key(*b)).copied().collect()
    };
    CurveComparison {
        id: id.clone(),
        tuning_changes_bytes: sizes
            .iter()
            .filter(|s| s.tuning_change.is_some())
            .map(|s| s.bytes)
            .collect(),
        sizes,
        only_before_bytes: only(before, after),
        only_after_bytes: only(after, before),
        slower,
        faster,
        unchanged,
        latency_floor_us: change(
            "latency_floor_us",
            (rb.latency_floor_us, &rb),
            (ra.latency_floor_us, &ra),
        ),
        plateau_busbw_gbs: change(
            "plateau_busbw_gbs",
            (Some(rb.plateau_busbw_gbs), &rb),
            (Some(ra.plateau_busbw_gbs), &ra),
        ),
        half_perf_bytes: change(
            "half_perf_bytes",
            (rb.half_perf_bytes, &rb),
            (ra.half_perf_bytes, &ra),
        ),
    }
}
