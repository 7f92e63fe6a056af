//! From rows to curve reports: the builder behind `ncclbench analyze`.
//!
//! [`analyze`] groups a [`ReadSet`]'s rows into curves, one per (collective, dtype, op, nranks,
//! placement), pooling cycles, runs and roots; pools each curve's samples per size
//! ([`pool`]); fits time versus bytes with piecewise alpha-beta regimes and derives the
//! whole-curve numbers ([`metrics`]); and looks for anomalies ([`anomaly`]), including the
//! comparison of the two placements of a key. The fitting itself is the pure leaf
//! [`crate::analysis::fit`]; this module is where rows, sizes and bandwidth units live. Files
//! of different setups ([`setup`]) never share a curve unless the caller pools them, and both
//! cases are said in the notes.
//!
//! Undefined numbers are never NaN: fields without a value are 0 (documented per field in
//! [`metrics`]) or `None`. A regime whose time does not grow with size over its range has no
//! bandwidth term: its `algbw_gbs` and `busbw_gbs` are 0. Curves with fewer than three usable
//! sizes get no regimes; their numbers come from the points alone.

pub mod anomaly;
pub mod metrics;
pub mod pool;
pub mod setup;

use crate::analysis::curve::{Analysis, CurveKey, CurveReport};
use crate::analysis::input::{InputRow, ReadSet};
use pool::Scale;
use std::collections::{BTreeMap, BTreeSet};

/// Analyses every curve of `set`: curves sorted by [`CurveKey`], `rows_read` the rows the
/// readers produced, `rows_skipped` and `skipped` what they could not use.
/// `peak_gbs` (the `--peak-gbs` value) turns the measured plateaus into efficiencies; a value
/// that is not a positive number is ignored. Every file is taken to share one setup.
pub fn analyze(set: &ReadSet, peak_gbs: Option<f64>) -> Analysis {
    analyze_setups(set, peak_gbs, &setup::Setups::new(), true)
}

/// [`analyze`] knowing each file's setup ([`setup::Setups`], which the command reads from the
/// files' headers): the rows of one curve from files of different setups become one curve per
/// setup (each with its `setup`), and a note says which and why, unless `pool`
/// (`--pool-setups`) pools them, which a note says too.
pub fn analyze_setups(
    set: &ReadSet,
    peak_gbs: Option<f64>,
    setups: &setup::Setups,
    pool: bool,
) -> Analysis {
    let peak_gbs = peak_gbs.filter(|p| p.is_finite() && *p > 0.0);
    let mut by_key: BTreeMap<CurveKey, Vec<&InputRow>> = BTreeMap::new();
    for row in &set.rows {
        by_key.entry(key_of(row)).or_default().push(row);
    }
    let mut notes = inference_notes(set);
    if set.group_rows > 0 {
        notes.push(format!(
            "{} per-group lines (--per-group) left out: the aggregate rows of the same sizes \
             are analysed",
            set.group_rows
        ));
    }
    let mut groups: BTreeMap<(Option<String>, CurveKey), Vec<&InputRow>> = BTreeMap::new();
    for (key, rows) in by_key {
        let of_file = setup::groups(rows.iter().map(|r| r.source.file.as_str()), setups);
        let distinct: BTreeSet<&String> = of_file.values().flatten().collect();
        if distinct.len() > 1 {
            let list: Vec<&str> = distinct.iter().map(|s| s.as_str()).collect();
            notes.push(format!(
                "{} {} {} {} ranks: files of different setups ({}){}",
                key.collective,
                key.dtype,
                key.op,
                key.nranks,
                list.join(" | "),
                if pool {
                    " pooled into one curve (--pool-setups)"
                } else {
                    " kept apart, one curve per setup (--pool-setups pools them)"
                }
            ));
        }
        for row in rows {
            let label = if pool {
                None
            } else {
                of_file.get(row.source.file.as_str()).cloned().flatten()
            };
            groups.entry((label, key.clone())).or_default().push(row);
        }
    }
    notes.dedup();
    let mut curves: Vec<CurveReport> = groups
        .iter()
        .map(|((label, key), rows)| {
            let mut c = curve_report(key, rows, peak_gbs);
            c.setup.clone_from(label);
            c.collective_basis = collective_basis(set, key, rows);
            c
        })
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
        notes,
    }
}

/// The inference behind a curve's collective, when its rows' tables did not name it.
fn collective_basis(set: &ReadSet, key: &CurveKey, rows: &[&InputRow]) -> Option<String> {
    let files: BTreeSet<&str> = rows.iter().map(|r| r.source.file.as_str()).collect();
    let bases: BTreeSet<&str> = set
        .inferred
        .iter()
        .filter(|i| i.collective.as_deref() == Some(key.collective.as_str()))
        .filter(|i| files.contains(i.source.file.as_str()))
        .map(|i| i.basis.as_str())
        .collect();
    (!bases.is_empty()).then(|| bases.into_iter().collect::<Vec<_>>().join(" | "))
}

/// A note per table whose collective stayed unknown.
fn inference_notes(set: &ReadSet) -> Vec<String> {
    set.inferred
        .iter()
        .filter(|i| i.collective.is_none())
        .map(|i| {
            format!(
                "{}:{}: collective {}",
                i.source.file, i.source.line, i.basis
            )
        })
        .collect()
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
    anomalies.extend(anomaly::time_drops(&points, fitted.noise));
    anomalies.extend(anomaly::cycle_disagreements(&points));
    anomalies.extend(anomaly::wrong_data(rows));
    anomalies.extend(anomaly::outliers(&points, &fitted.outliers, fitted.noise));
    anomalies.extend(anomaly::unfitted_decision_changes(&points, &fitted.regimes));
    let (latency_floor_us, floor_note) =
        metrics::latency_floor_us(&points, &fitted.regimes, &scale);
    let (half_perf_bytes, half_note) = metrics::half_perf_bytes(&fitted.regimes, &scale);
    let extrapolates = metrics::fit_extrapolates(&points, &fitted.regimes);
    if let (Some(max), Some(r)) = (extrapolates, fitted.regimes.last()) {
        anomalies.push(anomaly::fit_extrapolation(r, max));
    }
    CurveReport {
        collective: key.collective.clone(),
        dtype: key.dtype.clone(),
        op: key.op.clone(),
        nranks: key.nranks,
        placement: key.placement.clone(),
        rows: rows.len(),
        collective_basis: None,
        setup: None,
        busbw_factor: scale.busbw_factor,
        latency_floor_us,
        plateau_busbw_gbs: plateau,
        plateau_busbw_fit_gbs: metrics::plateau_fit_gbs(&fitted.regimes),
        plateau_fit_extrapolates: extrapolates.is_some(),
        half_perf_bytes,
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
        notes: floor_note.into_iter().chain(half_note).collect(),
    }
}

#[cfg(test)]
mod tests;
