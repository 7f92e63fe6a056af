//! Findings in a curve that an engineer should look at, each an [`Anomaly`] with its size and
//! the numbers behind it:
//!
//! * `dip`: busbw falls from one size to the next by more than the noise band. The band is the
//!   larger relative sample spread (`(max - min) / median`) of the two sizes when both were
//!   measured more than once (cycles, runs), else [`DEFAULT_NOISE`]; never below
//!   [`MIN_NOISE`].
//! * `time_drop`: the time falls from one size to the next larger one by more than that band
//!   (reported at the smaller size, naming both).
//! * `fit_extrapolates`: the last regime's fitted busbw is above every busbw measured in it.
//! * `placement_disagreement`: the in-place and out-of-place median times of one size differ by
//!   more than [`DISAGREEMENT`] of the out-of-place time (reported on both curves).
//! * `wrong_data`: rows with `#wrong > 0` (or a legacy `error` above 0), with the values.
//! * `cycle_disagreement`: the samples of one size spread by more than [`DISAGREEMENT`] of
//!   their median.
//! * `outlier`: the robust fit rejected the size.
//! * `unusable_time` (from pooling): rows whose time is not a finite non-negative number.
//! * `decision_change_without_step`: NCCL's annotated decision changes but the fit has no step
//!   within one size of it.

use crate::analysis::curve::{Anomaly, CurvePoint, CurveReport, Regime};
use crate::analysis::input::InputRow;
use std::collections::BTreeMap;

/// Noise band for dips when a size has a single sample.
pub const DEFAULT_NOISE: f64 = 0.05;
/// Smallest noise band for dips (rounding of printed times).
pub const MIN_NOISE: f64 = 0.01;
/// Multiples of the fit's noise a time must fall by to be a `time_drop`.
pub const NOISE_SIGMAS: f64 = 3.0;
/// Relative difference above which placements or cycles disagree.
pub const DISAGREEMENT: f64 = 0.10;

fn anomaly(kind: &str, bytes: u64, detail: String) -> Anomaly {
    Anomaly {
        kind: kind.into(),
        bytes,
        detail,
    }
}

/// Relative spread of a point's samples, `None` with a single sample.
fn spread(p: &CurvePoint) -> Option<f64> {
    (p.samples >= 2 && p.time_us > 0.0).then(|| (p.time_max_us - p.time_min_us) / p.time_us)
}

/// `dip` anomalies between consecutive sizes.
pub fn dips(points: &[CurvePoint]) -> Vec<Anomaly> {
    points
        .windows(2)
        .filter_map(|w| {
            let (a, b) = (&w[0], &w[1]);
            let band = match (spread(a), spread(b)) {
                (Some(x), Some(y)) => x.max(y),
                _ => DEFAULT_NOISE,
            }
            .max(MIN_NOISE);
            (a.busbw_gbs > 0.0 && b.busbw_gbs < a.busbw_gbs * (1.0 - band)).then(|| {
                let drop = (1.0 - b.busbw_gbs / a.busbw_gbs) * 100.0;
                let detail = format!(
                    "busbw falls from {:.3} to {:.3} GB/s after {} B (-{drop:.1}%, noise band {:.1}%)",
                    a.busbw_gbs,
                    b.busbw_gbs,
                    a.bytes,
                    band * 100.0
                );
                anomaly("dip", b.bytes, detail)
            })
        })
        .collect()
}

/// `time_drop` anomalies: a larger size that takes less time than the size before it by more
/// than the noise: the band of [`dips`], and at least [`NOISE_SIGMAS`] times the fit's relative
/// noise `noise` (small sizes of a jittery host jump by 10-20% both ways). A collective moving
/// more data cannot be faster unless the smaller size ran with a poor protocol or algorithm
/// choice; both sizes are named.
pub fn time_drops(points: &[CurvePoint], noise: f64) -> Vec<Anomaly> {
    points
        .windows(2)
        .filter_map(|w| {
            let (a, b) = (&w[0], &w[1]);
            let band = match (spread(a), spread(b)) {
                (Some(x), Some(y)) => x.max(y),
                _ => DEFAULT_NOISE,
            }
            .max(MIN_NOISE)
            .max(NOISE_SIGMAS * noise.max(0.0));
            let falls = a.bytes > 0 && b.bytes > a.bytes && b.time_us < a.time_us * (1.0 - band);
            falls.then(|| {
                let detail = format!(
                    "time falls from {:.2} us at {} B to {:.2} us at {} B (-{:.1}%, noise band \
                     {:.1}%): the smaller size probably ran with a poor protocol or algorithm choice",
                    a.time_us,
                    a.bytes,
                    b.time_us,
                    b.bytes,
                    (1.0 - b.time_us / a.time_us) * 100.0,
                    band * 100.0
                );
                anomaly("time_drop", a.bytes, detail)
            })
        })
        .collect()
}

/// The `fit_extrapolates` anomaly of a last regime whose fitted busbw exceeds every measured
/// busbw in it (`max_measured`).
pub fn fit_extrapolation(r: &Regime, max_measured: f64) -> Anomaly {
    let detail = format!(
        "fitted plateau {:.2} GB/s is above every measured busbw of its regime {} B..{} B (at \
         most {:.2} GB/s): the fit extrapolates beyond the data; quote the measured plateau",
        r.busbw_gbs, r.from_bytes, r.to_bytes, max_measured
    );
    anomaly("fit_extrapolates", r.from_bytes, detail)
}

/// `cycle_disagreement` anomalies: sizes whose samples spread too far.
pub fn cycle_disagreements(points: &[CurvePoint]) -> Vec<Anomaly> {
    points
        .iter()
        .filter_map(|p| {
            let s = spread(p).filter(|s| *s > DISAGREEMENT)?;
            let detail = format!(
                "{} samples span {:.3}..{:.3} us ({:.1}% of the {:.3} us median)",
                p.samples,
                p.time_min_us,
                p.time_max_us,
                s * 100.0,
                p.time_us
            );
            Some(anomaly("cycle_disagreement", p.bytes, detail))
        })
        .collect()
}

/// `wrong_data` anomalies: one per size with rows reporting wrong elements.
pub fn wrong_data(rows: &[&InputRow]) -> Vec<Anomaly> {
    let mut by_size: BTreeMap<u64, (usize, usize, f64)> = BTreeMap::new();
    for r in rows {
        let e = by_size.entry(r.bytes).or_insert((0, 0, 0.0));
        e.1 += 1;
        if let Some(w) = r.wrong.filter(|w| *w > 0.0) {
            e.0 += 1;
            e.2 = e.2.max(w);
        }
    }
    by_size
        .into_iter()
        .filter(|(_, (bad, _, _))| *bad > 0)
        .map(|(bytes, (bad, all, max))| {
            let detail = format!("#wrong = {max} (largest) in {bad} of {all} rows");
            anomaly("wrong_data", bytes, detail)
        })
        .collect()
}

/// `outlier` anomalies for the points the robust fit rejected.
pub fn outliers(points: &[CurvePoint], rejected: &[usize], noise: f64) -> Vec<Anomaly> {
    rejected
        .iter()
        .filter_map(|&i| points.get(i))
        .map(|p| {
            let detail = format!(
                "the robust fit rejected {:.3} us (fit noise {:.1}%)",
                p.time_us,
                noise * 100.0
            );
            anomaly("outlier", p.bytes, detail)
        })
        .collect()
}

/// Adds `placement_disagreement` anomalies to both curves of every pair that differs only in
/// placement. `curves` must be sorted by key (placement is the last key field, so the pair is
/// adjacent), and
/// each curve's points sorted by size.
pub fn placement_disagreements(curves: &mut [CurveReport]) {
    for i in 1..curves.len() {
        let (left, right) = curves.split_at_mut(i);
        let (a, b) = (&mut left[i - 1], &mut right[0]);
        let same = (&a.collective, &a.dtype, &a.op, a.nranks, &a.setup)
            == (&b.collective, &b.dtype, &b.op, b.nranks, &b.setup);
        let (ip, oop) = match (a.placement.as_str(), b.placement.as_str()) {
            ("in_place", "out_of_place") if same => (a, b),
            ("out_of_place", "in_place") if same => (b, a),
            _ => continue,
        };
        let found: Vec<Anomaly> = oop
            .points
            .iter()
            .filter_map(|o| {
                let j = ip.points.binary_search_by_key(&o.bytes, |p| p.bytes).ok()?;
                let p = &ip.points[j];
                let rel = (p.time_us - o.time_us) / o.time_us;
                (o.time_us > 0.0 && rel.abs() > DISAGREEMENT).then(|| {
                    let detail = format!(
                        "in-place {:.3} us vs out-of-place {:.3} us ({:+.1}%)",
                        p.time_us,
                        o.time_us,
                        rel * 100.0
                    );
                    anomaly("placement_disagreement", o.bytes, detail)
                })
            })
            .collect();
        ip.anomalies.extend(found.iter().cloned());
        oop.anomalies.extend(found);
    }
}

/// Sizes where NCCL's decision changes but the fit has no step at or next to it
/// (`decision_change_without_step`): the new algorithm or protocol performs like the old one
/// there, or the fit merged two regimes — either way worth a look next to the steps that do
/// match a decision change (their `tuning_change` on the switch point).
pub fn unfitted_decision_changes(points: &[CurvePoint], regimes: &[Regime]) -> Vec<Anomaly> {
    let steps: Vec<u64> = regimes.iter().skip(1).map(|r| r.from_bytes).collect();
    let mut out = Vec::new();
    if points.len() < 2 {
        return out;
    }
    for i in 1..points.len() {
        let (Some(a), Some(b)) = (&points[i - 1].tuning, &points[i].tuning) else {
            continue;
        };
        if a.same_decision(b) {
            continue;
        }
        // A step within one size of the change counts as matching it.
        let lo = points[i.saturating_sub(2)].bytes;
        let hi = points[(i + 1).min(points.len() - 1)].bytes;
        if steps.iter().any(|&s| s > lo && s <= hi) {
            continue;
        }
        out.push(Anomaly {
            kind: "decision_change_without_step".into(),
            bytes: points[i].bytes,
            detail: format!(
                "NCCL switches {}/{} -> {}/{} here but the fit has no step near it",
                a.algo, a.proto, b.algo, b.proto
            ),
        });
    }
    out
}
