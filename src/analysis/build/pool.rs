//! Pooling one curve's rows into points (one per size: median time, spread, sample count), and
//! the two scale factors that turn a time into bandwidths.
//!
//! Every cycle, run and root of a size is one sample. Rows whose time is not a finite
//! non-negative number cannot be pooled; they are reported as `unusable_time` anomalies rather
//! than silently dropped.

use crate::analysis::curve::{Anomaly, CurveKey, CurvePoint};
use crate::analysis::input::{InputRow, Tuning};
use crate::core::collective::spec::AlgBytes;
use crate::core::collective::Collective;
use crate::core::stats::median;
use std::collections::BTreeMap;

/// How a curve's bandwidths follow from size and time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// algbw numerator / bytes: 1 for every collective except hypercube, `(n-1)/n` there.
    pub algbw_ratio: f64,
    /// busbw = algbw x this factor.
    pub busbw_factor: f64,
}

impl Scale {
    /// The factors of a curve. With both the collective and nranks known they come from the
    /// collective's spec ([`Collective::busbw_factor`] and [`Collective::algbw_ratio`]).
    /// Otherwise the busbw factor is measured: the median of `busbw / algbw` over the rows with
    /// `algbw >= 1 GB/s` (printed with at least three significant digits), or over all rows with
    /// `algbw > 0` when none is that large, and 1 when no row has a positive algbw. A collective
    /// whose algbw counts only peer blocks (hypercube), at an unknown size, takes its algbw
    /// ratio from its largest-algbw row; every other collective,
    /// known or not, has ratio 1 (nccl-tests' definition).
    pub fn of(key: &CurveKey, rows: &[&InputRow]) -> Scale {
        let collective = Collective::parse(&key.collective);
        let n = key.nranks;
        let algbw_ratio = match collective {
            Some(c) if n > 0 => c.algbw_ratio(n),
            Some(c) if c.spec().algbw == AlgBytes::PeerBlocks => measured_ratio(rows),
            _ => 1.0,
        };
        let busbw_factor = match collective {
            Some(c) if n > 0 => c.busbw_factor(n),
            _ => measured_factor(rows),
        };
        Scale {
            algbw_ratio,
            busbw_factor,
        }
    }

    /// Bus bandwidth in GB/s of `bytes` moved in `time_us`; 0 when the time is not positive (or
    /// so small that the bandwidth overflows).
    pub fn busbw_gbs(&self, bytes: u64, time_us: f64) -> f64 {
        let busbw = self.algbw_ratio * bytes as f64 / time_us * 1e-3 * self.busbw_factor;
        if time_us > 0.0 && busbw.is_finite() {
            busbw
        } else {
            0.0
        }
    }
}

/// Median of `busbw / algbw`, preferring precisely printed rows.
fn measured_factor(rows: &[&InputRow]) -> f64 {
    fn ratios(rows: &[&InputRow], keep: fn(f64) -> bool) -> Vec<f64> {
        rows.iter()
            .filter(|r| keep(r.algbw_gbs))
            .map(|r| r.busbw_gbs / r.algbw_gbs)
            .filter(|f| f.is_finite() && *f >= 0.0)
            .collect()
    }
    let precise = ratios(rows, |a| a.is_finite() && a >= 1.0);
    let chosen = if precise.is_empty() {
        ratios(rows, |a| a.is_finite() && a > 0.0)
    } else {
        precise
    };
    median(chosen).unwrap_or(1.0)
}

/// `algbw x time / bytes` of the row with the largest algbw (the most significant digits).
fn measured_ratio(rows: &[&InputRow]) -> f64 {
    rows.iter()
        .filter(|r| r.bytes > 0 && r.time_us > 0.0 && r.algbw_gbs.is_finite())
        .max_by(|a, b| a.algbw_gbs.total_cmp(&b.algbw_gbs))
        .map(|r| r.algbw_gbs * 1e3 * r.time_us / r.bytes as f64)
        .filter(|f| f.is_finite() && *f > 0.0)
        .unwrap_or(1.0)
}

/// True when a row's time can be pooled.
pub fn usable(row: &InputRow) -> bool {
    row.time_us.is_finite() && row.time_us >= 0.0
}

/// One point per size, by increasing size, plus an `unusable_time` anomaly per size that had
/// rows with unusable times.
pub fn pool(rows: &[&InputRow], scale: &Scale) -> (Vec<CurvePoint>, Vec<Anomaly>) {
    let mut by_size: BTreeMap<u64, Vec<&InputRow>> = BTreeMap::new();
    for row in rows {
        by_size.entry(row.bytes).or_default().push(row);
    }
    let mut points = Vec::with_capacity(by_size.len());
    let mut anomalies = Vec::new();
    for (bytes, samples) in by_size {
        let bad = samples.iter().filter(|r| !usable(r)).count();
        if bad > 0 {
            anomalies.push(Anomaly {
                kind: "unusable_time".into(),
                bytes,
                detail: format!(
                    "{bad} of {} rows have a time that is not a finite non-negative number",
                    samples.len()
                ),
            });
        }
        let good: Vec<&InputRow> = samples.into_iter().filter(|r| usable(r)).collect();
        let times: Vec<f64> = good.iter().map(|r| r.time_us).collect();
        let Some(time_us) = median(times.clone()) else {
            continue;
        };
        points.push(CurvePoint {
            bytes,
            time_us,
            time_min_us: times.iter().copied().fold(f64::INFINITY, f64::min),
            time_max_us: times.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            samples: times.len(),
            busbw_gbs: scale.busbw_gbs(bytes, time_us),
            tuning: combined_tuning(&good),
        });
    }
    (points, anomalies)
}

/// The samples' common tuning; fields on which annotated samples differ become `mixed`.
fn combined_tuning(rows: &[&InputRow]) -> Option<Tuning> {
    let mut tunings = rows.iter().filter_map(|r| r.tuning.as_ref());
    let mut out = tunings.next()?.clone();
    for t in tunings {
        for (field, other) in [
            (&mut out.algo, &t.algo),
            (&mut out.proto, &t.proto),
            (&mut out.channels, &t.channels),
        ] {
            if field != other {
                *field = "mixed".into();
            }
        }
    }
    Some(out)
}
