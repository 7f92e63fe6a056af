//! Axis scales and their ticks: log2 for message sizes (labels `8B`, `1K`, `64K`, `1G`),
//! log10 for times (labels `10 us`, `1 ms`), linear from zero for bandwidths (1-2-2.5-5 steps).
//! Values a scale cannot show (non-positive on a log axis, non-finite anywhere) map to `None`.

use crate::analysis::units;

/// How values map onto an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// log2 of the value (sizes).
    Log2,
    /// log10 of the value (times).
    Log10,
    /// The value itself (bandwidths).
    Linear,
}

/// One axis: a domain `lo..hi` in transformed units mapped onto pixels `px_lo..px_hi`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Axis {
    /// Mapping.
    pub kind: Kind,
    /// Domain start, transformed (log2 bytes, log10 us, or GB/s).
    pub lo: f64,
    /// Domain end, transformed; always greater than `lo`.
    pub hi: f64,
    /// Pixel of `lo`.
    pub px_lo: f64,
    /// Pixel of `hi`.
    pub px_hi: f64,
}

/// The value in the axis's transformed units, `None` when it cannot be shown.
pub(crate) fn transform(kind: Kind, v: f64) -> Option<f64> {
    let t = match kind {
        Kind::Log2 if v > 0.0 => v.log2(),
        Kind::Log10 if v > 0.0 => v.log10(),
        Kind::Linear => v,
        _ => return None,
    };
    t.is_finite().then_some(t)
}

impl Axis {
    /// An axis over the transformed domain `lo..hi`; an empty or inverted domain is widened
    /// to one unit so that the mapping always exists.
    pub(crate) fn new(kind: Kind, lo: f64, hi: f64, px_lo: f64, px_hi: f64) -> Axis {
        let (lo, hi) = match (lo.is_finite(), hi.is_finite()) {
            (true, true) if hi > lo => (lo, hi),
            (true, _) => (lo, lo + 1.0),
            _ => (0.0, 1.0),
        };
        Axis {
            kind,
            lo,
            hi,
            px_lo,
            px_hi,
        }
    }

    /// Pixel of a transformed value, clamped to the axis.
    pub(crate) fn px_t(&self, t: f64) -> f64 {
        let f = ((t - self.lo) / (self.hi - self.lo)).clamp(0.0, 1.0);
        self.px_lo + f * (self.px_hi - self.px_lo)
    }

    /// Pixel of a value, clamped to the axis; `None` when the value cannot be shown.
    pub(crate) fn px(&self, v: f64) -> Option<f64> {
        transform(self.kind, v).map(|t| self.px_t(t))
    }

    /// Whether the value lies inside the domain.
    pub(crate) fn contains(&self, v: f64) -> bool {
        transform(self.kind, v).is_some_and(|t| t >= self.lo && t <= self.hi)
    }
}

/// Ticks of an axis: labelled major positions and unlabelled minor ones (transformed units).
#[derive(Debug, Clone, Default)]
pub(crate) struct Ticks {
    /// (position, label).
    pub major: Vec<(f64, String)>,
    /// Grid-only positions.
    pub minor: Vec<f64>,
}

/// Powers of two with a stride from 1, 2, 5, 10, 20 doublings (so 1K, 1M and 1G stay labelled
/// whenever the stride allows), at most about 15 labels; every doubling is a minor tick.
pub(crate) fn size_ticks(axis: &Axis) -> Ticks {
    let first = axis.lo.ceil() as i64;
    let last = axis.hi.floor() as i64;
    let span = (last - first).max(0);
    let stride = [1i64, 2, 5, 10, 20]
        .into_iter()
        .find(|s| span / s < 15)
        .unwrap_or(span / 14 + 1);
    let mut ticks = Ticks::default();
    for k in first.max(0)..=last.min(63) {
        if k % stride == 0 {
            ticks.major.push((k as f64, units::size(1u64 << k)));
        } else if span <= 64 {
            ticks.minor.push(k as f64);
        }
    }
    ticks
}

/// A time in microseconds in the nearest unit: `0.1 us`, `10 us`, `1 ms`, `2 s`.
pub(crate) fn time_label(us: f64) -> String {
    let (v, unit) = if us >= 1e6 {
        (us / 1e6, "s")
    } else if us >= 1e3 {
        (us / 1e3, "ms")
    } else {
        (us, "us")
    };
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} {unit}")
}

/// Decades (every `stride`-th when there are many) labelled as times; 2 and 5 times a decade
/// are labelled too on a short axis, and 2..9 are minor ticks on a moderate one.
pub(crate) fn time_ticks(axis: &Axis) -> Ticks {
    let first = axis.lo.floor() as i64;
    let last = axis.hi.ceil() as i64;
    let span = (last - first).max(1);
    let stride = span / 10 + 1;
    let mut ticks = Ticks::default();
    for d in first.max(-300)..=last.min(300) {
        let decade = 10f64.powi(d as i32);
        if (d - first) % stride == 0 && axis.contains(decade) {
            ticks.major.push((d as f64, time_label(decade)));
        }
        if span > 12 {
            continue;
        }
        for m in 2..10 {
            let v = decade * f64::from(m);
            if !axis.contains(v) {
                continue;
            }
            let t = v.log10();
            if span <= 2 && (m == 2 || m == 5) {
                ticks.major.push((t, time_label(v)));
            } else {
                ticks.minor.push(t);
            }
        }
    }
    ticks
}

/// A 1-2-2.5-5 step giving about `target` intervals over `0..max`.
pub(crate) fn nice_step(max: f64, target: f64) -> f64 {
    if !(max > 0.0 && max.is_finite()) {
        return 1.0;
    }
    let raw = max / target;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// Linear ticks every `step` from 0 to `axis.hi`, with as many decimals as the step needs.
pub(crate) fn linear_ticks(axis: &Axis, step: f64) -> Ticks {
    let mut ticks = Ticks::default();
    if !(step > 0.0 && step.is_finite()) {
        return ticks;
    }
    let exponent = step.log10().floor();
    let half = step_has_half(step) && exponent <= 0.0;
    let decimals = (-exponent).max(0.0) as usize + usize::from(half);
    let count = ((axis.hi - axis.lo) / step).floor().min(100.0) as i64;
    for i in 0..=count.max(0) {
        let v = axis.lo + i as f64 * step;
        ticks.major.push((v, format!("{v:.decimals$}")));
    }
    ticks
}

/// Whether a step's mantissa is 2.5 (needs one more decimal than its magnitude).
fn step_has_half(step: f64) -> bool {
    let mantissa = step / 10f64.powf(step.log10().floor());
    (mantissa - 2.5).abs() < 1e-9
}
