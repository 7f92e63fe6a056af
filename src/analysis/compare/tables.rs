//! The comparison's tables as plain cells, defined once for the text and markdown reports
//! (which reuse the analysis report's table renderers): the per-curve summary, and per curve
//! its sizes. Numbers go through the analysis formatters (`units`) plus the few here.

use super::model::{Change, Comparison, CurveComparison, CurveId, Side, SizeComparison};
use crate::analysis::report::table::{Align, Table};
use crate::analysis::units;
use Align::{Left, Right};

/// A table with `(title, alignment)` columns and these rows.
fn table(columns: &[(&'static str, Align)], rows: Vec<Vec<String>>) -> Table {
    Table {
        headers: columns.iter().map(|c| c.0).collect(),
        align: columns.iter().map(|c| c.1).collect(),
        rows,
    }
}

/// `all_reduce float sum, root 0, 8 ranks, out_of_place` (root only when there is one).
pub(crate) fn label(id: &CurveId) -> String {
    let mut head = vec![id.collective.as_str(), id.dtype.as_str()];
    if !id.op.is_empty() {
        head.push(id.op.as_str());
    }
    let root = if id.root >= 0 {
        format!(", root {}", id.root)
    } else {
        String::new()
    };
    format!(
        "{}{root}, {} ranks, {}",
        head.join(" "),
        units::nranks(id.nranks),
        id.placement
    )
}

/// A ratio with three decimals, `-` when undefined.
pub(crate) fn ratio(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.3}")
    } else {
        units::NONE.into()
    }
}

/// `0.981..1.023`, `-` without an interval.
fn interval(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(lo), Some(hi)) => format!("{}..{}", ratio(lo), ratio(hi)),
        _ => units::NONE.into(),
    }
}

/// A q-value: three decimals, `<0.001` below that, `-` without a test.
fn qv(q: Option<f64>) -> String {
    match q {
        Some(q) if q < 0.001 => "<0.001".into(),
        Some(q) => format!("{q:.3}"),
        None => units::NONE.into(),
    }
}

/// `18.17 -> 19.50 (+7.3%)` with the given number formatter.
fn change(c: &Change, fmt: fn(f64) -> String) -> String {
    let rel = c
        .change
        .map_or(String::new(), |r| format!(" ({})", units::jump(r)));
    let side = |v: Option<f64>| v.map_or_else(|| units::NONE.to_string(), fmt);
    format!("{} -> {}{rel}", side(c.before), side(c.after))
}

/// One row per compared curve: key, counts by verdict, and the whole-curve changes.
pub(crate) fn summary(cmp: &Comparison) -> Table {
    let rows = cmp
        .curves
        .iter()
        .map(|c| {
            vec![
                c.id.collective.clone(),
                c.id.dtype.clone(),
                c.id.op.clone(),
                c.id.root.to_string(),
                units::nranks(c.id.nranks),
                c.id.placement.clone(),
                c.sizes.len().to_string(),
                c.slower.to_string(),
                c.faster.to_string(),
                change(&c.latency_floor_us, units::us),
                change(&c.plateau_busbw_gbs, units::gbs),
                change(&c.half_perf_bytes, units::size_f),
            ]
        })
        .collect();
    table(
        &[
            ("collective", Left),
            ("dtype", Left),
            ("op", Left),
            ("root", Right),
            ("ranks", Right),
            ("placement", Left),
            ("sizes", Right),
            ("slower", Right),
            ("faster", Right),
            ("latency(us)", Left),
            ("plateau(GB/s)", Left),
            ("half-perf", Left),
        ],
        rows,
    )
}

/// The sizes of one curve: medians, ratio, interval, q, samples, verdict and its basis, and
/// NCCL's decision change when there is one in the curve.
pub(crate) fn sizes(c: &CurveComparison) -> Table {
    let with_tuning = !c.tuning_changes_bytes.is_empty();
    let mut columns = vec![
        ("size", Right),
        ("before(us)", Right),
        ("after(us)", Right),
        ("ratio", Right),
        ("95% CI", Right),
        ("q", Right),
        ("n", Right),
        ("verdict", Left),
        ("basis", Left),
    ];
    if with_tuning {
        columns.push(("NCCL decision", Left));
    }
    let rows = c
        .sizes
        .iter()
        .map(|s: &SizeComparison| {
            let mut row = vec![
                units::size(s.bytes),
                units::us(s.before.median_us),
                units::us(s.after.median_us),
                ratio(s.ratio),
                interval(s.ci_low, s.ci_high),
                qv(s.q_value),
                format!("{}/{}", s.before.samples, s.after.samples),
                s.verdict.clone(),
                s.basis.clone(),
            ];
            if with_tuning {
                row.push(s.tuning_change.clone().unwrap_or_default());
            }
            row
        })
        .collect();
    table(&columns, rows)
}

/// Lines under a curve's table: sizes on one side only, and how decision changes line up with
/// speed changes.
pub(crate) fn curve_notes(c: &CurveComparison) -> Vec<String> {
    let list = |v: &[u64]| {
        v.iter()
            .map(|b| units::size(*b))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut notes = Vec::new();
    for (what, change) in [
        ("latency floor", &c.latency_floor_us),
        ("half-performance size", &c.half_perf_bytes),
    ] {
        if let Some(reason) = &change.reason {
            notes.push(format!("no {what} change: {reason}"));
        }
    }
    if !c.only_before_bytes.is_empty() {
        notes.push(format!(
            "only before (not compared): {}",
            list(&c.only_before_bytes)
        ));
    }
    if !c.only_after_bytes.is_empty() {
        notes.push(format!(
            "only after (not compared): {}",
            list(&c.only_after_bytes)
        ));
    }
    if !c.tuning_changes_bytes.is_empty() {
        let moved = c
            .sizes
            .iter()
            .filter(|s| s.tuning_change.is_some() && s.verdict != "unchanged")
            .count();
        notes.push(format!(
            "NCCL decision changed at {} size(s): {}; {moved} of them changed speed",
            c.tuning_changes_bytes.len(),
            list(&c.tuning_changes_bytes)
        ));
    }
    notes
}

/// `a.csv, b.csv (160 rows, 0 skipped)`.
pub(crate) fn side(s: &Side) -> String {
    format!(
        "{} ({} rows, {} skipped)",
        s.files.join(", "),
        s.rows_read,
        s.rows_skipped
    )
}

/// The method line.
pub(crate) fn method(cmp: &Comparison) -> String {
    format!(
        "threshold {}%, Welch t test on log time, Benjamini-Hochberg over each curve's sizes, q <= {}",
        units::factor(cmp.threshold_pct),
        units::factor(cmp.alpha)
    )
}

/// Curves on one side only, as lines.
pub(crate) fn unmatched(cmp: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    for (which, ids) in [
        ("before", &cmp.only_before_curves),
        ("after", &cmp.only_after_curves),
    ] {
        for id in ids.iter() {
            out.push(format!("only {which} (not compared): {}", label(id)));
        }
    }
    out
}

/// The closing verdict line.
pub(crate) fn result(cmp: &Comparison) -> String {
    let t = &cmp.totals;
    let counts = format!(
        "{} sizes compared: {} slower, {} faster, {} unchanged",
        t.compared, t.slower, t.faster, t.unchanged
    );
    if t.compared == 0 {
        "nothing compared: no curve is on both sides".to_string()
    } else if cmp.regression {
        format!("REGRESSION: {counts}")
    } else {
        format!("no regression: {counts}")
    }
}
