//! The checks of an acceptance run, as pure functions of what the stages produced: the rows
//! read back from each stage's CSV and how each run ended. Nothing here runs anything.
//!
//! Bandwidth and latency checks judge out-of-place rows (the perf stages run float/sum), take
//! the median over samples of each size, then the median over the sizes in the check's range,
//! so one noisy size neither passes nor fails a curve on its own. A check with no measured
//! size in its range fails: an acceptance check that could not be judged is not a pass.

use super::model::{Check, FailureClass, Stage, Status};
use super::profile::{BusbwCheck, LatencyCheck};
use crate::analysis::input::InputRow;
use crate::core::error::Error;
use crate::core::stats::median;
use crate::core::units::iec_bytes_whole;
use crate::result::Placement;
use std::collections::BTreeMap;

/// How a stage run ended, as far as the checks care.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    /// It completed (wrong data included); `seconds` of wall time.
    Completed {
        /// Wall time.
        seconds: f64,
    },
    /// It stopped on an error of this class, with this message.
    Failed(FailureClass, String),
    /// An earlier stage stopped the suite before this one ran; the class of that stop.
    NotRun(FailureClass),
}

/// The failure class of an error that stopped a stage.
pub fn class_of(e: &Error) -> FailureClass {
    match e {
        Error::Timeout { .. } => FailureClass::Timeout,
        Error::Backend(_) => FailureClass::Backend,
        Error::Usage(_) | Error::Cuda(_) | Error::NotEnoughDevices(_) => FailureClass::Setup,
        Error::Io { .. } | Error::Output(_) | Error::Interrupted(_) => FailureClass::Setup,
    }
}

fn base(stage: Stage, collective: &str, name: String) -> Check {
    Check {
        stage,
        collective: Some(collective.to_string()),
        name,
        measured: String::new(),
        expected: String::new(),
        measured_value: None,
        expected_value: None,
        unit: None,
        status: Status::Pass,
        class: FailureClass::Performance,
        detail: None,
    }
}

/// "The stage ran to its end": every stage run has one.
pub fn completion(
    stage: Stage,
    collective: &str,
    end: &RunEnd,
    rows: &[InputRow],
    timeout_s: u64,
) -> Check {
    let mut c = base(
        stage,
        collective,
        format!("completes within -T {timeout_s} s"),
    );
    c.expected = "no error".into();
    let sizes = distinct_sizes(rows);
    let covered = match (sizes.first(), sizes.last()) {
        (Some(lo), Some(hi)) => format!(
            "{} sizes, {}..{}",
            sizes.len(),
            iec_bytes_whole(*lo),
            iec_bytes_whole(*hi)
        ),
        _ => String::new(),
    };
    match end {
        RunEnd::Completed { seconds } => {
            c.measured = if covered.is_empty() {
                format!("no rows in {seconds:.1} s")
            } else {
                format!("{covered} in {seconds:.1} s")
            };
            c.measured_value = Some(*seconds);
            c.unit = Some("s".into());
        }
        RunEnd::Failed(class, msg) => {
            c.status = Status::Fail;
            c.class = *class;
            c.measured = if covered.is_empty() {
                format!("{} before any row", class.name())
            } else {
                format!("{} after {covered}", class.name())
            };
            c.detail = Some(msg.clone());
        }
        RunEnd::NotRun(class) => {
            c.status = Status::NotRun;
            c.class = *class;
            c.measured = format!("not run (stopped on {})", class.name());
        }
    }
    c
}

/// "No wrong elements" over every row of a correctness stage.
pub fn no_wrong(collective: &str, end: &RunEnd, rows: &[InputRow]) -> Check {
    let mut c = base(Stage::Correctness, collective, "no wrong elements".into());
    c.class = FailureClass::Correctness;
    c.expected = "0 wrong".into();
    c.expected_value = Some(0.0);
    c.unit = Some("elements".into());
    if let RunEnd::NotRun(class) = end {
        c.status = Status::NotRun;
        c.class = *class;
        c.measured = "not run".into();
        return c;
    }
    let checked: Vec<&InputRow> = rows.iter().filter(|r| r.wrong.is_some()).collect();
    let wrong: f64 = checked.iter().filter_map(|r| r.wrong).sum();
    c.measured_value = Some(wrong);
    c.measured = format!("{wrong} wrong in {} checked cases", checked.len());
    if wrong > 0.0 {
        c.status = Status::Fail;
        let bad: Vec<String> = checked
            .iter()
            .filter(|r| r.wrong.unwrap_or(0.0) > 0.0)
            .map(|r| {
                let op = if r.op.is_empty() { "-" } else { &r.op };
                format!(
                    "{} {op} {} {}: {} wrong",
                    r.dtype,
                    iec_bytes_whole(r.bytes),
                    r.placement.name(),
                    r.wrong.unwrap_or(0.0)
                )
            })
            .collect();
        let shown = bad.iter().take(5).cloned().collect::<Vec<_>>().join("; ");
        let more = bad.len().saturating_sub(5);
        c.detail = Some(if more > 0 {
            format!("{shown}; and {more} more cases")
        } else {
            shown
        });
    } else if checked.is_empty() {
        // A correctness stage that checked nothing proves nothing.
        c.status = Status::Fail;
        c.class = match end {
            RunEnd::Failed(class, _) => *class,
            _ => FailureClass::Correctness,
        };
        c.measured = "nothing checked".into();
        c.detail = Some("the stage produced no verified row".into());
    } else if let RunEnd::Failed(class, msg) = end {
        // Correct as far as it went; the completion check carries the failure.
        let _ = (class, msg);
        c.detail = Some("the stage stopped early; only the rows it completed were judged".into());
    }
    c
}

/// Sizes present in `rows`, ascending.
fn distinct_sizes(rows: &[InputRow]) -> Vec<u64> {
    let mut s: Vec<u64> = rows.iter().map(|r| r.bytes).collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// Per size in `lo..=hi`, the median over samples of `value`, for one collective's
/// out-of-place rows.
fn per_size(
    rows: &[InputRow],
    collective: &str,
    lo: u64,
    hi: u64,
    value: fn(&InputRow) -> f64,
) -> Vec<(u64, f64)> {
    let mut by: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for r in rows.iter().filter(|r| {
        r.placement == Placement::OutOfPlace
            && r.collective.as_deref() == Some(collective)
            && (lo..=hi).contains(&r.bytes)
            && value(r).is_finite()
    }) {
        by.entry(r.bytes).or_default().push(value(r));
    }
    by.into_iter()
        .map(|(b, v)| (b, nonempty_median(v)))
        .collect()
}

/// The median of a list the caller knows is non-empty: a size's samples (each size in the map
/// has one), or the sizes in range (the checks return early when there is none). NaN marks the
/// impossible empty case rather than a panic.
fn nonempty_median(values: Vec<f64>) -> f64 {
    median(values).unwrap_or(f64::NAN)
}

fn range_name(lo: u64, hi: Option<u64>) -> String {
    match hi {
        Some(hi) if hi == lo => iec_bytes_whole(lo),
        Some(hi) if lo == 0 => format!("<= {}", iec_bytes_whole(hi)),
        Some(hi) => format!("{}..{}", iec_bytes_whole(lo), iec_bytes_whole(hi)),
        None => format!(">= {}", iec_bytes_whole(lo)),
    }
}

fn typical(t: Option<(f64, f64)>) -> String {
    t.map_or(String::new(), |(a, b)| format!(" (typical {a}-{b})"))
}

/// The sizes a range check could not find, as a failure.
fn nothing_in_range(c: &mut Check, rows: &[InputRow], collective: &str) {
    c.status = Status::Fail;
    c.measured = "no size in range".into();
    let sizes = distinct_sizes(
        &rows
            .iter()
            .filter(|r| r.collective.as_deref() == Some(collective))
            .cloned()
            .collect::<Vec<_>>(),
    );
    c.detail = Some(match (sizes.first(), sizes.last()) {
        (Some(a), Some(b)) => format!(
            "the sweep measured {}..{}",
            iec_bytes_whole(*a),
            iec_bytes_whole(*b)
        ),
        _ => "the sweep measured nothing".into(),
    });
}

/// A profile's minimum bus bandwidth over a size range.
pub fn busbw(chk: &BusbwCheck, rows: &[InputRow], end: &RunEnd) -> Check {
    let coll = chk.collective.name();
    let mut c = base(
        Stage::Performance,
        coll,
        format!("busbw {}", range_name(chk.min_bytes, chk.max_bytes)),
    );
    c.expected = format!(">= {} GB/s{}", chk.min_gbs, typical(chk.typical_gbs));
    c.expected_value = Some(chk.min_gbs);
    c.unit = Some("GB/s".into());
    if let RunEnd::NotRun(class) = end {
        c.status = Status::NotRun;
        c.class = *class;
        c.measured = "not run".into();
        return c;
    }
    let sizes = per_size(
        rows,
        coll,
        chk.min_bytes,
        chk.max_bytes.unwrap_or(u64::MAX),
        |r| r.busbw_gbs,
    );
    if sizes.is_empty() {
        nothing_in_range(&mut c, rows, coll);
        return c;
    }
    let m = nonempty_median(sizes.iter().map(|s| s.1).collect());
    c.measured = format!("{m:.2} GB/s");
    c.measured_value = Some(m);
    let (worst_b, worst) = sizes
        .iter()
        .copied()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, f64::NAN));
    if m < chk.min_gbs {
        c.status = Status::Fail;
        c.detail = Some(format!(
            "median over {} sizes; lowest {worst:.2} GB/s at {}",
            sizes.len(),
            iec_bytes_whole(worst_b)
        ));
    }
    c
}

/// A profile's maximum small-message time over a size range.
pub fn latency(chk: &LatencyCheck, rows: &[InputRow], end: &RunEnd) -> Check {
    let coll = chk.collective.name();
    let mut c = base(
        Stage::Performance,
        coll,
        format!("time {}", range_name(chk.min_bytes, Some(chk.max_bytes))),
    );
    c.expected = format!("<= {} us{}", chk.max_us, typical(chk.typical_us));
    c.expected_value = Some(chk.max_us);
    c.unit = Some("us".into());
    if let RunEnd::NotRun(class) = end {
        c.status = Status::NotRun;
        c.class = *class;
        c.measured = "not run".into();
        return c;
    }
    let sizes = per_size(rows, coll, chk.min_bytes, chk.max_bytes, |r| r.time_us);
    if sizes.is_empty() {
        nothing_in_range(&mut c, rows, coll);
        return c;
    }
    let m = nonempty_median(sizes.iter().map(|s| s.1).collect());
    c.measured = format!("{m:.2} us");
    c.measured_value = Some(m);
    let (worst_b, worst) = sizes
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, f64::NAN));
    if m > chk.max_us {
        c.status = Status::Fail;
        c.detail = Some(format!(
            "median over {} sizes; highest {worst:.2} us at {}",
            sizes.len(),
            iec_bytes_whole(worst_b)
        ));
    }
    c
}

/// One check per compared curve against the baseline: no size called slower (the compare
/// rules: significant and beyond the threshold).
pub fn baseline(cmp: &crate::analysis::compare::model::Comparison) -> Vec<Check> {
    cmp.curves
        .iter()
        .filter(|curve| curve.id.placement == Placement::OutOfPlace.name())
        .map(|curve| {
            let mut c = base(
                Stage::Baseline,
                &curve.id.collective,
                format!(
                    "no slower size than baseline ({} {})",
                    curve.id.dtype, curve.id.op
                )
                .replace(" )", ")"),
            );
            c.expected = format!("0 sizes slower by > {}%", cmp.threshold_pct);
            c.expected_value = Some(0.0);
            c.unit = Some("sizes".into());
            c.measured_value = Some(curve.slower as f64);
            c.measured = format!("{} of {} sizes slower", curve.slower, curve.sizes.len());
            if curve.slower > 0 {
                c.status = Status::Fail;
                let worst: Vec<String> = curve
                    .sizes
                    .iter()
                    .filter(|s| s.verdict == "slower")
                    .take(5)
                    .map(|s| format!("{} x{:.3} time", iec_bytes_whole(s.bytes), s.ratio))
                    .collect();
                c.detail = Some(format!("slower: {}", worst.join(", ")));
            }
            c
        })
        .collect()
}

#[cfg(test)]
mod tests;
