//! The causes of lost time that need the benchmark, each with its rule (slow ranks and hosts,
//! which compare the job with itself, are in `slow`):
//!
//! * `small_size`: a communicator's sizes of one collective below the benchmark curve's
//!   half-performance size (alpha x bandwidth of its last regime: where busbw is half the
//!   plateau), when they carry at least [`SMALL_MIN_SHARE`] of the job's communication time.
//!   The framework cuts its messages (gradient buckets, shards) too small for the hardware.
//! * `contention`: one (communicator, collective, size) runs near the benchmark some of the
//!   time and far below it at other times: at least [`SHARE`] of its records at or above
//!   [`NEAR`] x the benchmark busbw and at least [`SHARE`] below [`FAR`] x, the slow ones from
//!   at least two ranks, over at least [`MIN_RECORDS`] records, records of slow ranks/hosts left
//!   out. The hardware can do the call; something shares it at those times.
//! * `algo_proto`: the algorithm/protocol most of a group's records carry differs from the
//!   benchmark's at that size (when both carry one, and for a size the benchmark did not run
//!   both measured neighbours agree).

use crate::analysis::inspector::record::Record;
use crate::analysis::production::aggregate::{comm_key, representative_bytes, Aggregation};
use crate::analysis::production::baseline::Baseline;
use crate::analysis::production::join::Bench;
use crate::analysis::production::model::{Cause, Group};
use crate::analysis::units;
use crate::core::collective::Collective;
use std::collections::{BTreeMap, BTreeSet};

/// Smallest share of the job's communication time worth a `small_size` finding.
pub const SMALL_MIN_SHARE: f64 = 0.01;
/// `contention`: "at benchmark speed" is at least this fraction of the benchmark busbw.
pub const NEAR: f64 = 0.8;
/// `contention`: "far below" is under this fraction.
pub const FAR: f64 = 0.5;
/// `contention`: each mode holds at least this share of the records.
pub const SHARE: f64 = 0.1;
/// `contention`: fewest records for shares to mean anything.
pub const MIN_RECORDS: usize = 10;

/// `small_size` findings, one per (communicator, collective).
pub fn small_sizes(agg: &Aggregation, base: &Baseline) -> Vec<Cause> {
    let mut by_comm: BTreeMap<(&str, Option<&str>, &str), Vec<&Group>> = BTreeMap::new();
    let mut knee = BTreeMap::new();
    for g in &agg.groups {
        let Ok(curve) = base.curve_for(&g.collective, g.nranks) else {
            continue;
        };
        let Some(half) = curve.half_perf_bytes.filter(|h| *h > 0.0) else {
            continue;
        };
        if representative_bytes(g.bytes, g.bytes_hi) < half {
            by_comm
                .entry((
                    g.comm_id.as_str(),
                    g.comm_name.as_deref(),
                    g.collective.as_str(),
                ))
                .or_default()
                .push(g);
            knee.insert(
                (
                    g.comm_id.as_str(),
                    g.comm_name.as_deref(),
                    g.collective.as_str(),
                ),
                curve,
            );
        }
    }
    let mut out = Vec::new();
    for (key, groups) in by_comm {
        let share: f64 = groups.iter().map(|g| g.time_share).sum();
        if share < SMALL_MIN_SHARE {
            continue;
        }
        let curve = knee[&key];
        let half = curve.half_perf_bytes.unwrap_or(0.0);
        let time: f64 = groups.iter().map(|g| g.total_time_us).sum();
        let at_plateau: f64 = groups
            .iter()
            .map(|g| g.count as f64 * plateau_time(curve, g))
            .sum();
        let lost: Vec<f64> = groups
            .iter()
            .filter_map(|g| g.baseline.as_ref().map(|b| b.lost_us))
            .collect();
        let sizes: Vec<String> = groups.iter().map(|g| units::size(g.bytes)).collect();
        out.push(Cause {
            kind: "small_size".into(),
            comm_id: key.0.to_string(),
            comm_name: key.1.map(str::to_string),
            collective: Some(key.2.to_string()),
            bytes: (groups.len() == 1).then(|| groups[0].bytes),
            rank: None,
            host: None,
            rule: format!(
                "sizes below the benchmark's half-performance size, carrying >= {} of the \
                 job's communication time",
                units::pct(SMALL_MIN_SHARE * 100.0)
            ),
            evidence: format!(
                "{} size(s) ({}) below the half-performance size {} of {} carry {} of the \
                 job's communication time ({} ms); at the benchmark's plateau of {} GB/s the \
                 same bytes would take {} ms",
                groups.len(),
                sizes.join(", "),
                units::size_f(half),
                units::key_label(curve),
                units::pct(share * 100.0),
                units::us(time / 1e3),
                units::gbs(curve.plateau_busbw_gbs),
                units::us(at_plateau / 1e3)
            ),
            advice: Some(format!(
                "send fewer, larger messages: buckets of at least {} (half the plateau \
                 busbw), {} for about 80% (T = alpha + S/B gives busbw/plateau = S/(S + \
                 half-perf size)); e.g. raise DDP's bucket_cap_mb or FSDP/ZeRO bucket sizes, or \
                 fuse small tensors into one call",
                units::size_f(half),
                units::size_f(4.0 * half)
            )),
            lost_us: (!lost.is_empty()).then(|| lost.iter().sum()),
        });
    }
    out
}

/// One call of the group at the curve's measured plateau busbw, microseconds.
fn plateau_time(curve: &crate::analysis::curve::CurveReport, g: &Group) -> f64 {
    let n = g.nranks as usize;
    let ratio = Collective::parse(&g.collective).map_or(1.0, |c| c.algbw_ratio(n));
    let algbw = curve.plateau_busbw_gbs / curve.busbw_factor;
    representative_bytes(g.bytes, g.bytes_hi) * ratio / (algbw * 1e3)
}

/// `contention` findings, one per group; records of `covered` (communicator, rank) pairs
/// (slow ranks and hosts) are left out.
pub fn contention(
    records: &[Record],
    agg: &Aggregation,
    bench: &Bench,
    covered: &BTreeSet<(String, u32)>,
) -> Vec<Cause> {
    let mut out = Vec::new();
    for ((g, idx), p) in agg.groups.iter().zip(&agg.members).zip(bench) {
        let Some(p) = p.as_ref().filter(|p| p.busbw_gbs > 0.0) else {
            continue;
        };
        let kept: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|&i| agg.busbw[i].is_finite())
            .filter(|&i| match records[i].source.rank {
                Some(r) => !covered.contains(&(comm_key(&records[i]), r)),
                None => true,
            })
            .collect();
        let n = kept.len();
        if n < MIN_RECORDS {
            continue;
        }
        let rel = |i: usize| agg.busbw[i] / p.busbw_gbs;
        let near: Vec<usize> = kept.iter().copied().filter(|&i| rel(i) >= NEAR).collect();
        let far: Vec<usize> = kept.iter().copied().filter(|&i| rel(i) < FAR).collect();
        let far_ranks: BTreeSet<u32> = far.iter().filter_map(|&i| records[i].source.rank).collect();
        let ranks_ok =
            far_ranks.len() >= 2 || far.iter().all(|&i| records[i].source.rank.is_none());
        let share = |v: &[usize]| v.len() as f64 / n as f64;
        if share(&near) < SHARE || share(&far) < SHARE || !ranks_ok {
            continue;
        }
        let med = |v: &[usize]| {
            crate::analysis::production::aggregate::spread(v.iter().map(|&i| agg.busbw[i])).p50
        };
        let seqs: Vec<u64> = far.iter().filter_map(|&i| records[i].seq).collect();
        let seq = match (seqs.iter().min(), seqs.iter().max()) {
            (Some(a), Some(b)) => format!(", slow calls' sequence numbers {a}..{b}"),
            _ => String::new(),
        };
        out.push(Cause {
            kind: "contention".into(),
            comm_id: g.comm_id.clone(),
            comm_name: g.comm_name.clone(),
            collective: Some(g.collective.clone()),
            bytes: Some(g.bytes),
            rank: None,
            host: None,
            rule: format!(
                "one communicator, collective and size: >= {} of records at >= {} x the \
                 benchmark busbw and >= {} below {} x, the slow ones on >= 2 ranks \
                 (>= {MIN_RECORDS} records, slow ranks and hosts left out)",
                units::pct(SHARE * 100.0),
                NEAR,
                units::pct(SHARE * 100.0),
                FAR
            ),
            evidence: format!(
                "{} {}: {} of {} records at >= {}% of the benchmark's {} GB/s (median {} \
                 GB/s), {} below {}% (median {} GB/s) on {} ranks{seq}",
                g.collective,
                units::size(g.bytes),
                near.len(),
                n,
                NEAR * 100.0,
                units::gbs(p.busbw_gbs),
                units::gbs(med(&near)),
                far.len(),
                FAR * 100.0,
                units::gbs(med(&far)),
                far_ranks.len(),
            ),
            advice: Some(
                "the same calls reach the benchmark at other times, so the hardware can do \
                 them: something shares the links when they are slow (another communicator \
                 of this job overlapping, e.g. data-parallel with tensor- or pipeline-parallel \
                 traffic, or another job on the network); look at what runs at the slow \
                 calls' times"
                    .into(),
            ),
            lost_us: Some(far.iter().map(|&i| records[i].time_us - p.time_us).sum()),
        });
    }
    out
}

/// `Ring_ll`, `Ring/LL` and `ring/ll` alike.
fn normalise(choice: &str) -> String {
    choice.to_ascii_lowercase().replace('_', "/")
}

/// `algo_proto` findings, one per group.
pub fn algo_proto(agg: &Aggregation, bench: &Bench) -> Vec<Cause> {
    let mut out = Vec::new();
    for (g, p) in agg.groups.iter().zip(bench) {
        let (Some(p), Some(job)) = (p, g.algo_proto.first()) else {
            continue;
        };
        let Some(theirs) = p.algo_proto.as_ref().filter(|c| !c.contains("mixed")) else {
            continue;
        };
        if normalise(&job.value) == normalise(theirs) {
            continue;
        }
        out.push(Cause {
            kind: "algo_proto".into(),
            comm_id: g.comm_id.clone(),
            comm_name: g.comm_name.clone(),
            collective: Some(g.collective.clone()),
            bytes: Some(g.bytes),
            rank: None,
            host: None,
            rule: "the algorithm/protocol of most of the group's records differs from the \
                   benchmark's at that size"
                .into(),
            evidence: format!(
                "{} {}: job {} on {} of {} records, benchmark {} ({}); job busbw {} x the \
                 benchmark's",
                g.collective,
                units::size(g.bytes),
                job.value,
                job.count,
                g.count,
                theirs,
                p.source,
                g.baseline
                    .as_ref()
                    .map_or_else(|| units::NONE.to_string(), |b| format!("{:.2}", b.ratio)),
            ),
            advice: Some(
                "the job's NCCL decided differently from the benchmark's: compare the two \
                 NCCL versions and their NCCL_ALGO, NCCL_PROTO and tuner-plugin settings; \
                 rerun the benchmark with the job's choice forced to see what it costs"
                    .into(),
            ),
            lost_us: g.baseline.as_ref().map(|b| b.lost_us),
        });
    }
    out
}
