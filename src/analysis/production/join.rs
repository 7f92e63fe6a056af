//! The job against the benchmark: for each group of a collective the benchmark ran at the
//! same rank count, the benchmark's busbw and time of one call at the group's size, the ratio
//! job median busbw / benchmark busbw, and the time lost: the group's time minus what its
//! calls would have taken at the benchmark's speed (`count x benchmark time`), so a group's
//! `lost_us` is exactly `total_time_us - count x time_us` of its `baseline`.

use crate::analysis::inspector::record::{Op, Record, SizeRule};
use crate::analysis::production::aggregate::{representative_bytes, Aggregation};
use crate::analysis::production::baseline::{at, AtSize, Baseline};
use crate::analysis::production::model::Versus;
use crate::analysis::units;
use crate::core::collective::Collective;
use std::collections::BTreeMap;

/// Per group, the benchmark at its size (`None` where there is no number).
pub type Bench = Vec<Option<AtSize>>;

/// The collective a group's records name, when the benchmark has one.
fn collective_of(records: &[Record], idx: &[usize]) -> Option<Collective> {
    idx.first().and_then(|&i| match records[i].op {
        Op::Collective(c) => Some(c),
        _ => None,
    })
}

/// Fills each group's `baseline` (or `baseline_note`) from `base`; returns the benchmark
/// point of each group and the notes on what could not be joined (one per collective and
/// rank count without a curve, with the time it leaves unexplained).
pub fn join(records: &[Record], agg: &mut Aggregation, base: &Baseline) -> (Bench, Vec<String>) {
    let mut bench = Vec::with_capacity(agg.groups.len());
    let mut missing: BTreeMap<String, (usize, f64)> = BTreeMap::new();
    for (g, idx) in agg.groups.iter_mut().zip(&agg.members) {
        let Some(collective) = collective_of(records, idx) else {
            g.baseline_note = Some(format!(
                "{}: ncclbench has no benchmark of this operation",
                g.collective
            ));
            bench.push(None);
            continue;
        };
        // A size whose convention the record does not tell (AllToAll, Gather, Scatter: the
        // plugin writes zero bandwidths for them) would be joined to the wrong benchmark row.
        if idx
            .iter()
            .any(|&i| records[i].size_rule == SizeRule::Unknown)
        {
            g.baseline_note = Some(format!(
                "{}: the record's size convention is unknown, so it is not joined to a benchmark size",
                g.collective
            ));
            bench.push(None);
            continue;
        }
        let curve = match base.curve_for(collective.name(), g.nranks) {
            Ok(c) => c,
            Err(why) => {
                let m = missing.entry(why.clone()).or_default();
                m.0 += 1;
                m.1 += g.total_time_us;
                g.baseline_note = Some(why);
                bench.push(None);
                continue;
            }
        };
        match at(curve, representative_bytes(g.bytes, g.bytes_hi)) {
            Ok(p) => {
                g.baseline = Some(Versus {
                    curve: units::key_label(curve),
                    source: p.source.to_string(),
                    busbw_gbs: p.busbw_gbs,
                    time_us: p.time_us,
                    ratio: g.busbw_gbs.p50 / p.busbw_gbs,
                    lost_us: g.total_time_us - g.count as f64 * p.time_us,
                });
                bench.push(Some(p));
            }
            Err(why) => {
                g.baseline_note = Some(why);
                bench.push(None);
            }
        }
    }
    let total = agg.total_time_us;
    let notes = missing
        .into_iter()
        .map(|(why, (groups, time))| {
            format!(
                "{why}: {groups} group(s), {} of the job's communication time, have no ratio",
                units::pct(if total > 0.0 {
                    time / total * 100.0
                } else {
                    0.0
                })
            )
        })
        .collect();
    (bench, notes)
}
