//! A job's Inspector records added up: one [`Group`] per (communicator, collective, size,
//! ranks), with the count, busbw and time percentiles, the share of the job's communication
//! time and the timing sources; and the per-rank and per-host view of the same records.
//!
//! Percentiles are **nearest rank**: the p-th percentile of n sorted values is the value at
//! 1-based rank `max(1, ceil(p/100 x n))` (p50 of 4 values is the 2nd, p95 of 20 the 19th),
//! the definition `-I`'s p95/p99 use in `core::stats`; every value reported is one a record
//! carried. A record's busbw is the one the plugin wrote, else computed from its size and time
//! with nccl-tests' bus factor. Each record also gets a *relative* busbw: its busbw over its
//! group's median, so ranks and hosts are compared on the same calls whatever their sizes.
//!
//! A rank's (host's) relative busbw is the **weighted median** of its records' relative busbw,
//! each weighted by its group's median time: a job makes far more small, latency-bound calls
//! than large ones, and a slow link or GPU shows in the large ones, which carry the time; an
//! unweighted median would let a flood of 16K calls outvote the 64M calls where the rank is
//! slow. The group's median time, not the record's own, so a slow record weighs no more than
//! a fast one of the same call.

use crate::analysis::inspector::record::{Op, Record, Size, Timing};
use crate::analysis::production::model::{Group, HostRow, RankRow, Spread, Tally};
use std::collections::{BTreeMap, BTreeSet};

/// The nearest-rank `p`-th percentile (0 < p <= 100) of ascending `sorted`; `NaN` when empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The weighted median of `(value, weight)` pairs: the smallest value whose cumulative weight
/// reaches half the total (with equal weights, the nearest-rank median); pairs with a
/// non-finite value or a weight that is not a positive number are left out; `NaN` when none
/// is left.
pub fn weighted_median(pairs: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    let mut v: Vec<(f64, f64)> = pairs
        .into_iter()
        .filter(|(x, w)| x.is_finite() && w.is_finite() && *w > 0.0)
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = v.iter().map(|p| p.1).sum::<f64>() / 2.0;
    let mut acc = 0.0;
    for (x, w) in &v {
        acc += w;
        if acc >= half {
            return *x;
        }
    }
    f64::NAN
}

/// p5, p50 and p95 of `values` (any order; non-finite values left out).
pub fn spread(values: impl IntoIterator<Item = f64>) -> Spread {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    Spread {
        p5: percentile(&v, 5.0),
        p50: percentile(&v, 50.0),
        p95: percentile(&v, 95.0),
    }
}

/// The operation's name in reports: ncclbench's collective names, `send`/`recv`, or NCCL's
/// name as written.
pub fn op_name(op: &Op) -> String {
    match op {
        Op::Collective(c) => c.name().to_string(),
        Op::Other(name) => name.to_string(),
        Op::Send { .. } => "send".into(),
        Op::Recv { .. } => "recv".into(),
    }
}

/// (bytes, bucket upper bound) of a size.
pub fn size_key(size: Size) -> (u64, Option<u64>) {
    match size {
        Size::Exact(b) => (b, None),
        Size::Bucket { lo, hi } => (lo, Some(hi)),
    }
}

/// The size a benchmark is read at: the exact size, or a bucket's midpoint.
pub fn representative_bytes(bytes: u64, bytes_hi: Option<u64>) -> f64 {
    match bytes_hi {
        Some(hi) => (bytes as f64 + hi as f64) / 2.0,
        None => bytes as f64,
    }
}

/// The record's bus bandwidth in GB/s: as written, else from size, time and the collective's
/// factor; `None` when neither is possible.
pub fn busbw_of(r: &Record) -> Option<f64> {
    if let Some(b) = r.busbw_gbs.filter(|b| b.is_finite() && *b >= 0.0) {
        return Some(b);
    }
    let Op::Collective(c) = &r.op else {
        return None;
    };
    let (bytes, hi) = size_key(r.size);
    let n = r.source.nranks as usize;
    let b =
        representative_bytes(bytes, hi) * c.algbw_ratio(n) / r.time_us * 1e-3 * c.busbw_factor(n);
    (r.time_us > 0.0 && b.is_finite()).then_some(b)
}

/// The communicator a record belongs to: its hash, or for records without one (Prometheus
/// snapshots write none) its name.
pub fn comm_key(r: &Record) -> String {
    if r.source.comm_id.is_empty() {
        format!("name:{}", r.source.comm_name.as_deref().unwrap_or_default())
    } else {
        r.source.comm_id.to_string()
    }
}

/// The timing source's name (`unknown` when the record has none).
pub fn timing_name(t: Option<&Timing>) -> String {
    match t {
        Some(Timing::KernelGpu) => "kernel_gpu".into(),
        Some(Timing::KernelCpu) => "kernel_cpu".into(),
        Some(Timing::CollectiveCpu) => "collective_cpu".into(),
        Some(Timing::Other(s)) => s.to_string(),
        None => "unknown".into(),
    }
}

/// The grouped records.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregation {
    /// One per (communicator, collective, size, ranks), in key order.
    pub groups: Vec<Group>,
    /// Indices into the records of each group's members.
    pub members: Vec<Vec<usize>>,
    /// Per record: its busbw (`NaN` when none).
    pub busbw: Vec<f64>,
    /// Per record: busbw over its group's median (`NaN` when either is missing or zero).
    pub rel: Vec<f64>,
    /// Per record: its weight in a rank's or host's median `rel` (its group's median time;
    /// `NaN` for records in no group).
    pub weight: Vec<f64>,
    /// Sum of every usable record's time, microseconds.
    pub total_time_us: f64,
    /// Records left out because their time is not a finite positive number.
    pub unusable: usize,
}

type Key = (String, String, u64, Option<u64>, u32);

/// Groups `records`; records whose time is not a finite positive number are counted in
/// `unusable` and belong to no group.
pub fn aggregate(records: &[Record]) -> Aggregation {
    let mut by_key: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
    let mut unusable = 0;
    for (i, r) in records.iter().enumerate() {
        if !(r.time_us.is_finite() && r.time_us > 0.0) {
            unusable += 1;
            continue;
        }
        let (bytes, hi) = size_key(r.size);
        let key = (comm_key(r), op_name(&r.op), bytes, hi, r.source.nranks);
        by_key.entry(key).or_default().push(i);
    }
    let busbw: Vec<f64> = records
        .iter()
        .map(|r| busbw_of(r).unwrap_or(f64::NAN))
        .collect();
    let total_time_us: f64 = by_key.values().flatten().map(|&i| records[i].time_us).sum();
    let mut rel = vec![f64::NAN; records.len()];
    let mut weight = vec![f64::NAN; records.len()];
    let mut groups = Vec::new();
    let mut members = Vec::new();
    for ((_, collective, bytes, bytes_hi, nranks), idx) in by_key {
        let comm_id = records[idx[0]].source.comm_id.to_string();
        let bw = spread(idx.iter().map(|&i| busbw[i]));
        for &i in &idx {
            if bw.p50 > 0.0 {
                rel[i] = busbw[i] / bw.p50;
            }
        }
        let total: f64 = idx.iter().map(|&i| records[i].time_us).sum();
        let time_us = spread(idx.iter().map(|&i| records[i].time_us));
        for &i in &idx {
            weight[i] = time_us.p50;
        }
        groups.push(Group {
            comm_name: idx
                .iter()
                .find_map(|&i| records[i].source.comm_name.as_deref().map(str::to_string)),
            comm_id,
            collective,
            bytes,
            bytes_hi,
            nranks,
            count: idx.len(),
            busbw_gbs: bw,
            time_us,
            total_time_us: total,
            time_share: if total_time_us > 0.0 {
                total / total_time_us
            } else {
                0.0
            },
            timing: tally(idx.iter().map(|&i| timing_name(records[i].timing.as_ref()))),
            algo_proto: tally(
                idx.iter()
                    .filter_map(|&i| records[i].source.algo_proto.clone()),
            ),
            baseline: None,
            baseline_note: None,
        });
        members.push(idx);
    }
    Aggregation {
        groups,
        members,
        busbw,
        rel,
        weight,
        total_time_us,
        unusable,
    }
}

/// Counts of each value, most frequent first (ties by value).
fn tally(values: impl Iterator<Item = String>) -> Vec<Tally> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    let mut out: Vec<Tally> = counts
        .into_iter()
        .map(|(value, count)| Tally { value, count })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then(a.value.cmp(&b.value)));
    out
}

/// One row per (communicator, rank) with a rank, in that order.
pub fn ranks(records: &[Record], agg: &Aggregation) -> Vec<RankRow> {
    let mut by_rank: BTreeMap<(String, u32), Vec<usize>> = BTreeMap::new();
    for &i in agg.members.iter().flatten() {
        if let Some(rank) = records[i].source.rank {
            by_rank
                .entry((comm_key(&records[i]), rank))
                .or_default()
                .push(i);
        }
    }
    by_rank
        .into_iter()
        .map(|((_, rank), idx)| RankRow {
            comm_id: records[idx[0]].source.comm_id.to_string(),
            comm_name: idx
                .iter()
                .find_map(|&i| records[i].source.comm_name.as_deref().map(str::to_string)),
            rank,
            host: idx
                .iter()
                .find_map(|&i| records[i].source.host.as_deref().map(str::to_string)),
            count: idx.len(),
            rel_busbw_p50: weighted_median(idx.iter().map(|&i| (agg.rel[i], agg.weight[i]))),
            total_time_us: idx.iter().map(|&i| records[i].time_us).sum(),
        })
        .collect()
}

/// One row per host (`unknown` for records without one), by name.
pub fn hosts(records: &[Record], agg: &Aggregation) -> Vec<HostRow> {
    let mut by_host: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for &i in agg.members.iter().flatten() {
        let host = records[i]
            .source
            .host
            .as_deref()
            .unwrap_or("unknown")
            .to_string();
        by_host.entry(host).or_default().push(i);
    }
    by_host
        .into_iter()
        .map(|(host, idx)| {
            let ranks: BTreeSet<(String, Option<u32>)> = idx
                .iter()
                .map(|&i| (comm_key(&records[i]), records[i].source.rank))
                .collect();
            HostRow {
                host,
                ranks: ranks.len(),
                count: idx.len(),
                rel_busbw_p50: weighted_median(idx.iter().map(|&i| (agg.rel[i], agg.weight[i]))),
                total_time_us: idx.iter().map(|&i| records[i].time_us).sum(),
            }
        })
        .collect()
}
