//! Slow ranks and hosts: within one communicator, a rank (or host) whose calls run well below
//! the same calls on the other ranks.
//!
//! Each record is first made relative: its busbw over its group's median (the same
//! collective and size on the same communicator), so a rank is judged on the calls it shares
//! with the others whatever the job's size mix, and a rank's median is weighted by each call's
//! group median time (see `aggregate`: the calls that carry the time decide). The rule, per
//! communicator with at least [`MIN_MEMBERS`] ranks (hosts): a rank's (host's) median relative
//! busbw `x` is flagged when
//! `x < 0.8 m` **and** `x < m - 3 x 1.4826 x MAD`, where `m` is the median of the ranks'
//! (hosts') medians and MAD their median absolute deviation from `m` (1.4826 makes it a
//! standard deviation for normal noise). The first condition keeps a uniform, quiet
//! communicator (MAD near 0) from flagging small differences, the second keeps a noisy one
//! from flagging its tail. A flagged host takes its ranks' findings into its own.

use crate::analysis::inspector::record::Record;
use crate::analysis::production::aggregate::{comm_key, percentile, weighted_median, Aggregation};
use crate::analysis::production::join::Bench;
use crate::analysis::production::model::Cause;
use crate::analysis::units;
use crate::core::stats::median;
use std::collections::{BTreeMap, BTreeSet};

/// Fewest ranks (hosts) of a communicator for the rule to apply.
pub const MIN_MEMBERS: usize = 3;
/// A flagged member's median is below this fraction of the communicator's.
pub const FRACTION: f64 = 0.8;
/// ... and this many scaled MADs below it.
pub const MADS: f64 = 3.0;

/// The slow ranks and hosts, and the (communicator key, rank) pairs they cover (their records are
/// left out of the contention rule, which would otherwise see their slowness as bimodality).
pub fn slow(
    records: &[Record],
    agg: &Aggregation,
    bench: Option<&Bench>,
) -> (Vec<Cause>, BTreeSet<(String, u32)>) {
    let mut lost_of = vec![None; records.len()];
    if let Some(bench) = bench {
        for (idx, p) in agg.members.iter().zip(bench) {
            if let Some(p) = p {
                for &i in idx {
                    lost_of[i] = Some(records[i].time_us - p.time_us);
                }
            }
        }
    }
    let mut by_comm: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for &i in agg.members.iter().flatten() {
        if agg.rel[i].is_finite() {
            by_comm.entry(comm_key(&records[i])).or_default().push(i);
        }
    }
    let mut causes = Vec::new();
    let mut covered = BTreeSet::new();
    for (comm, idx) in by_comm {
        let comm_id = records[idx[0]].source.comm_id.to_string();
        let hosts = members(
            &idx,
            |i| records[i].source.host.as_deref().map(str::to_string),
            agg,
        );
        let slow_hosts = flagged(&hosts);
        let ranks = members(&idx, |i| records[i].source.rank, agg);
        for (host, x, m, mad) in &slow_hosts {
            let on: Vec<usize> = idx
                .iter()
                .copied()
                .filter(|&i| records[i].source.host.as_deref() == Some(host.as_str()))
                .collect();
            let on_ranks: BTreeSet<u32> =
                on.iter().filter_map(|&i| records[i].source.rank).collect();
            covered.extend(on_ranks.iter().map(|r| (comm.clone(), *r)));
            causes.push(Cause {
                kind: "slow_host".into(),
                comm_id: comm_id.clone(),
                comm_name: name(records, &idx),
                collective: None,
                bytes: None,
                rank: None,
                host: Some(host.clone()),
                rule: rule("host"),
                evidence: format!(
                    "host {host} (ranks {}): time-weighted median relative busbw {:.2} over {} records; the \
                     communicator's hosts: median {:.2}, MAD {:.3}",
                    list(&on_ranks),
                    x,
                    on.len(),
                    m,
                    mad
                ),
                advice: Some(ADVICE_HOST.into()),
                lost_us: sum_lost(&on, &lost_of),
            });
        }
        for (rank, x, m, mad) in flagged(&ranks) {
            if covered.contains(&(comm.clone(), rank)) {
                continue;
            }
            let mine: Vec<usize> = idx
                .iter()
                .copied()
                .filter(|&i| records[i].source.rank == Some(rank))
                .collect();
            let host = mine
                .iter()
                .find_map(|&i| records[i].source.host.as_deref().map(str::to_string));
            covered.insert((comm.clone(), rank));
            causes.push(Cause {
                kind: "slow_rank".into(),
                comm_id: comm_id.clone(),
                comm_name: name(records, &idx),
                collective: None,
                bytes: None,
                rank: Some(rank),
                rule: rule("rank"),
                evidence: format!(
                    "rank {rank}{}: time-weighted median relative busbw {x:.2} over {} records ({}); the \
                     communicator's ranks: median {m:.2}, MAD {mad:.3}",
                    host.as_ref()
                        .map(|h| format!(" on {h}"))
                        .unwrap_or_default(),
                    mine.len(),
                    example(agg, &mine),
                ),
                host,
                advice: Some(ADVICE_RANK.into()),
                lost_us: sum_lost(&mine, &lost_of),
            });
        }
    }
    (causes, covered)
}

const ADVICE_RANK: &str = "check this GPU and its links: clocks and throttling (nvidia-smi -q -d \
                           PERFORMANCE), NVLink/PCIe errors and width, its NIC's counters; a \
                           rank whose compute lags makes its own calls look fast, so a rank \
                           that is slow here is slow inside the collective";
const ADVICE_HOST: &str = "check the host's network (NIC link speed and errors, switch port, \
                           GPUDirect RDMA in use) and its GPUs' clocks; run the benchmark on \
                           that host against a good one";

fn rule(what: &str) -> String {
    format!(
        "a {what} whose median busbw relative to the same calls' median (each call weighted by \
         its size's typical time) is below {FRACTION} x \
         the communicator's median {what} and more than {MADS} scaled MADs below it \
         (>= {MIN_MEMBERS} {what}s)"
    )
}

/// Weighted median relative busbw per member (records without the member's key left out).
fn members<K: Ord>(
    idx: &[usize],
    key: impl Fn(usize) -> Option<K>,
    agg: &Aggregation,
) -> BTreeMap<K, f64> {
    let mut values: BTreeMap<K, Vec<(f64, f64)>> = BTreeMap::new();
    for &i in idx {
        if let Some(k) = key(i) {
            values
                .entry(k)
                .or_default()
                .push((agg.rel[i], agg.weight[i]));
        }
    }
    values
        .into_iter()
        .map(|(k, v)| (k, weighted_median(v)))
        .collect()
}

/// Members breaking the rule: (member, its median, the communicator's median, MAD).
fn flagged<K: Ord + Clone>(medians: &BTreeMap<K, f64>) -> Vec<(K, f64, f64, f64)> {
    if medians.len() < MIN_MEMBERS {
        return Vec::new();
    }
    let Some(m) = median(medians.values().copied().collect()) else {
        return Vec::new();
    };
    let mad = median(medians.values().map(|x| (x - m).abs()).collect()).unwrap_or(0.0);
    medians
        .iter()
        .filter(|(_, x)| **x < FRACTION * m && **x < m - MADS * 1.4826 * mad)
        .map(|(k, &x)| (k.clone(), x, m, mad))
        .collect()
}

fn name(records: &[Record], idx: &[usize]) -> Option<String> {
    idx.iter()
        .find_map(|&i| records[i].source.comm_name.as_deref().map(str::to_string))
}

fn sum_lost(idx: &[usize], lost_of: &[Option<f64>]) -> Option<f64> {
    let v: Vec<f64> = idx.iter().filter_map(|&i| lost_of[i]).collect();
    (!v.is_empty()).then(|| v.iter().sum())
}

fn list(ranks: &BTreeSet<u32>) -> String {
    ranks
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The member's largest group by time, in absolute numbers: `all_reduce 64M: 3.10 GB/s
/// against the group's 9.80 GB/s`.
fn example(agg: &Aggregation, mine: &[usize]) -> String {
    let Some((g, idx)) = agg
        .groups
        .iter()
        .zip(&agg.members)
        .filter(|(_, idx)| idx.iter().any(|i| mine.contains(i)))
        .max_by(|a, b| a.0.total_time_us.total_cmp(&b.0.total_time_us))
    else {
        return String::new();
    };
    let mut own: Vec<f64> = idx
        .iter()
        .filter(|&&i| mine.contains(&i))
        .map(|&i| agg.busbw[i])
        .filter(|b| b.is_finite())
        .collect();
    own.sort_by(f64::total_cmp);
    format!(
        "{} {}: {} GB/s against the group's {} GB/s",
        g.collective,
        units::size(g.bytes),
        units::gbs(percentile(&own, 50.0)),
        units::gbs(g.busbw_gbs.p50)
    )
}
