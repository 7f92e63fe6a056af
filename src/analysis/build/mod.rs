//! From rows to curve reports: the builder behind `ncclbench analyze`.
//!
//! [`analyze`] groups a [`ReadSet`]'s rows into curves, one per (collective, dtype, op, nranks,
//! placement), pooling cycles, runs and roots; pools each curve's samples per size
//! ([`pool`]); fits time versus bytes with piecewise alpha-beta regimes and derives the
//! whole-curve numbers ([`metrics`]); and looks for anomalies ([`anomaly`]), including the
//! comparison of the two placements of a key. The fitting itself is the pure leaf
//! [`crate::analysis::fit`]; this module is where rows, sizes and bandwidth units live.
//!
//! Undefined numbers are never NaN: fields without a value are 0 (documented per field in
//! [`metrics`]) or `None`. A regime whose time does not grow with size over its range has no
//! bandwidth term: its `algbw_gbs` and `busbw_gbs` are 0. Curves with fewer than three usable
//! sizes get no regimes; their numbers come from the points alone.

pub mod anomaly;
pub mod metrics;
pub mod pool;

use crate::analysis::curve::{Analysis, CurveKey, CurveReport};
use crate::analysis::input::{InputRow, ReadSet};
use pool::Scale;
use std::collections::BTreeMap;

/// Analyses every curve of `set`: curves sorted by [`CurveKey`], `rows_read` the rows the
/// readers produced, `rows_skipped` and `skipped` what they could not use.
/// `peak_gbs` (the `--peak-gbs` value) turns the measured plateaus into efficiencies; a value
/// that is not a positive number is ignored.
pub fn analyze(set: &ReadSet, peak_gbs: Option<f64>) -> Analysis {
    let peak_gbs = peak_gbs.filter(|p| p.is_finite() && *p > 0.0);
    let mut groups: BTreeMap<CurveKey, Vec<&InputRow>> = BTreeMap::new();
    for row in &set.rows {
        groups.entry(key_of(row)).or_default().push(row);
    }
    let mut curves: Vec<CurveReport> = groups
        .iter()
        .map(|(key, rows)| curve_report(key, rows, peak_gbs))
        .collect();
    anomaly::placement_disagreements(&mut curves);
    for c in &mut curves {
        c.anomalies
            .sort_by(|a, b| (a.bytes, &a.kind).cmp(&(b.bytes, &b.kind)));
    }
    Analysis {
        rows_read: set.rows.len(),
        rows_skipped: set.skipped.len(),
        skipped: set.skipped.clone(),
        peak_gbs,
        curves,
    }
}

/// The curve a row belongs to: unknown collectives are `unknown`, unknown rank counts 0.
pub fn key_of(row: &InputRow) -> CurveKey {
    CurveKey {
        collective: row.collective.clone().unwrap_or_else(|| "unknown".into()),
        dtype: row.dtype.clone(),
        op: row.op.clone(),
        nranks: row.nranks.unwrap_or(0),
        placement: row.placement.name().into(),
    }
}

/// The report of one curve from its rows, without the cross-placement comparison (which needs
/// the other curve; [`analyze`] adds it).
pub fn curve_report(key: &CurveKey, rows: &[&InputRow], peak_gbs: Option<f64>) -> CurveReport {
    let scale = Scale::of(key, rows);
    let (points, mut anomalies) = pool::pool(rows, &scale);
    let fitted = metrics::fit_regimes(&points, &scale);
    let plateau = metrics::plateau_busbw_gbs(&points);
    anomalies.extend(anomaly::dips(&points));
    anomalies.extend(anomaly::cycle_disagreements(&points));
    anomalies.extend(anomaly::wrong_data(rows));
    anomalies.extend(anomaly::outliers(&points, &fitted.outliers, fitted.noise));
    anomalies.extend(anomaly::unfitted_decision_changes(&points, &fitted.regimes));
    CurveReport {
        collective: key.collective.clone(),
        dtype: key.dtype.clone(),
        op: key.op.clone(),
        nranks: key.nranks,
        placement: key.placement.clone(),
        rows: rows.len(),
        busbw_factor: scale.busbw_factor,
        latency_floor_us: metrics::latency_floor_us(&points),
        plateau_busbw_gbs: plateau,
        plateau_busbw_fit_gbs: metrics::plateau_fit_gbs(&fitted.regimes),
        half_perf_bytes: metrics::half_perf_bytes(&fitted.regimes, &scale),
        sat90_bytes: metrics::sat90_bytes(&points, plateau),
        efficiency_pct: metrics::efficiency_pct(plateau, peak_gbs),
        switch_points_bytes: fitted
            .regimes
            .iter()
            .skip(1)
            .map(|r| r.from_bytes)
            .collect(),
        switch_points: metrics::switch_points(&points, &fitted.regimes),
        regimes: fitted.regimes,
        anomalies,
        points,
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod untrusted;
