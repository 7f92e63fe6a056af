//! The production report: a training job's NCCL Inspector records against what a benchmark
//! of the same machine says the hardware does. Where is the job losing communication time,
//! and why.
//!
//! Data flows one way: the job's records ([`crate::analysis::inspector`]) are grouped per
//! (communicator, collective, size, ranks) with exact percentiles, per rank and per host
//! ([`aggregate`]); each group is joined to the benchmark curve of its collective and rank
//! count, read at the group's size without extrapolating ([`baseline`], [`join`]); the causes
//! are looked for, each with a stated rule ([`slow`] compares the job with itself,
//! [`causes`] with the benchmark); [`report`] renders text, markdown, HTML with charts and
//! the JSON `ncclbench-production/1` ([`model`] holds its types).

pub mod aggregate;
pub mod baseline;
pub mod causes;
pub mod join;
pub mod model;
pub mod report;
pub mod slow;

#[cfg(test)]
mod tests;

use crate::analysis::inspector::record::{Origin, Record};
use baseline::Baseline;
use model::{Inputs, Report};

/// The whole report on `records` (with `inputs` saying what was read), against `base` when
/// given. Without one: the aggregates, ranks, hosts and slow ranks/hosts, and a note saying
/// that ratios, lost time and the other causes need `--baseline`.
pub fn build(records: &[Record], mut inputs: Inputs, base: Option<&Baseline>) -> Report {
    let mut agg = aggregate::aggregate(records);
    let mut notes = input_notes(records, &agg);
    inputs.records = records.len();
    let bench = base.map(|b| {
        inputs.baseline_files.clone_from(&b.files);
        inputs.baseline_curves = b.curves.len();
        let (bench, missing) = join::join(records, &mut agg, b);
        notes.extend(missing);
        bench
    });
    if base.is_none() {
        notes.push(
            "no --baseline: aggregates, ranks and hosts only; the ratio to the benchmark, the \
             time lost and the causes that need it (small sizes, contention, algorithm/protocol) \
             come with --baseline BENCHMARK_RESULTS"
                .into(),
        );
    }
    let (mut causes, covered) = slow::slow(records, &agg, bench.as_ref());
    if let (Some(base), Some(bench)) = (base, &bench) {
        causes.extend(causes::small_sizes(&agg, base));
        causes.extend(causes::contention(records, &agg, bench, &covered));
        causes.extend(causes::algo_proto(&agg, bench));
    }
    causes.sort_by(|a, b| {
        let lost = |c: &model::Cause| c.lost_us.unwrap_or(f64::NEG_INFINITY);
        lost(b)
            .total_cmp(&lost(a))
            .then_with(|| a.kind.cmp(&b.kind))
    });
    let ranks = aggregate::ranks(records, &agg);
    let hosts = aggregate::hosts(records, &agg);
    let mut groups = agg.groups;
    groups.sort_by(|a, b| {
        let lost = |g: &model::Group| g.baseline.as_ref().map_or(f64::NEG_INFINITY, |v| v.lost_us);
        lost(b)
            .total_cmp(&lost(a))
            .then(b.total_time_us.total_cmp(&a.total_time_us))
    });
    let total_lost_us = base.map(|_| {
        groups
            .iter()
            .filter_map(|g| g.baseline.as_ref())
            .map(|v| v.lost_us.max(0.0))
            .sum()
    });
    Report {
        inputs,
        total_time_us: agg.total_time_us,
        total_lost_us,
        groups,
        ranks,
        hosts,
        causes,
        notes,
    }
}

/// Notes on the records themselves: unusable times, timing sources not comparable with a
/// benchmark, Prometheus snapshots.
fn input_notes(records: &[Record], agg: &aggregate::Aggregation) -> Vec<String> {
    let mut notes = Vec::new();
    if agg.unusable > 0 {
        notes.push(format!(
            "{} record(s) without a positive finite time were left out",
            agg.unusable
        ));
    }
    let cpu: usize = agg
        .groups
        .iter()
        .flat_map(|g| &g.timing)
        .filter(|t| t.value != "kernel_gpu")
        .map(|t| t.count)
        .sum();
    if cpu > 0 {
        notes.push(format!(
            "{cpu} record(s) are not GPU-kernel timed (kernel_cpu, collective_cpu or no \
             source): their times include host-side delays, so they read slower than the \
             hardware; the timing column says which groups"
        ));
    }
    let prom = records
        .iter()
        .filter(|r| r.source.origin == Origin::Prometheus)
        .count();
    if prom > 0 {
        notes.push(format!(
            "{prom} record(s) come from Prometheus snapshots: each is one label set's latest \
             call (counts are label sets, not calls), and sizes are buckets read against the \
             benchmark at their midpoint"
        ));
    }
    notes
}
