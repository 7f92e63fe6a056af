//! The measured groups of a run, judged one by one: each group's time (the slowest member's
//! median iteration), how it ended, and its ratio to the job's reference for its kind.
//!
//! The reference of a kind is a *lower median*: for the rail kind, each GPU's score is the
//! lower median of its groups' times and the reference the lower median of those scores; for
//! the intra-node kind, the lower median of the nodes' times; intra-node pairs are held to
//! their own node's reference (the lower median of its GPUs' scores), since only slow nodes
//! get pair rounds and a node slow as a whole must not set the bar for another. The lower
//! median (the smaller middle value of an even count) keeps the reference on a healthy value
//! while up to half of the values are slow: with two nodes, the faster one is the reference,
//! and a node whose every pairing is slow moves no other GPU's score (each other GPU met it in
//! at most half of its pairings when it met three or more partners).

use super::sample::{Outcome, Sample};
use super::schedule::{Kind, Round};
use std::collections::{BTreeMap, BTreeSet};

/// A group is slow at this multiple of its kind's reference time (or more).
pub const SLOW_RATIO: f64 = 2.0;

/// How a group's measurement ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Every member finished; the time is the slowest member's.
    Ok,
    /// A member's wait passed `-T` while every member still answered.
    TimedOut,
    /// A member's backend failed.
    Failed(String),
    /// These members stopped answering (they are suspects of their own); not judged.
    Missing(Vec<usize>),
}

/// One judged group.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// Index of its round among the measured rounds.
    pub round: usize,
    /// Its colour in that round.
    pub group: usize,
    /// Its kind.
    pub kind: Kind,
    /// Global ranks.
    pub members: Vec<usize>,
    /// Node indices.
    pub nodes: Vec<usize>,
    /// Rail of a rail group.
    pub rail: Option<usize>,
    /// Microseconds per iteration (`None` unless [`Status::Ok`]).
    pub time_us: Option<f64>,
    /// How it ended.
    pub status: Status,
    /// Time over the kind's reference (`None` unless timed).
    pub ratio: Option<f64>,
    /// Bus bandwidth, GB/s (`None` unless timed).
    pub busbw_gbs: Option<f64>,
    /// Judged slow: at least [`SLOW_RATIO`] times the reference, below the profile floor of
    /// its kind, timed out, or failed.
    pub slow: bool,
}

impl Judged {
    /// The time as a number for ordering: timed-out and failed groups are infinitely slow.
    pub fn cost(&self) -> Option<f64> {
        match self.status {
            Status::Ok => self.time_us,
            Status::TimedOut | Status::Failed(_) => Some(f64::INFINITY),
            Status::Missing(_) => None,
        }
    }
}

/// The smaller middle value (index `(n-1)/2` of the sorted values); `None` when empty.
pub fn lower_median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len().saturating_sub(1) / 2).copied()
}

/// Each group's status and time from the samples of its members; `silent` are the ranks that
/// stopped answering. Groups no member measured (skipped after a rank went silent, or not run)
/// are left out.
pub fn collect(rounds: &[Round], samples: &[Sample], silent: &BTreeSet<usize>) -> Vec<Judged> {
    let mut by: BTreeMap<(usize, usize, usize), &Outcome> = BTreeMap::new();
    for s in samples {
        by.insert((s.round, s.group, s.rank), &s.outcome);
    }
    let mut out = Vec::new();
    for (ri, round) in rounds.iter().enumerate() {
        for (gi, g) in round.groups.iter().enumerate() {
            let got: Vec<Option<&Outcome>> = g
                .members
                .iter()
                .map(|&r| by.get(&(ri, gi, r)).copied())
                .collect();
            if got.iter().all(Option::is_none) {
                continue;
            }
            let missing: Vec<usize> = g
                .members
                .iter()
                .zip(&got)
                .filter(|(r, o)| o.is_none() && silent.contains(r))
                .map(|(&r, _)| r)
                .collect();
            let status = if !missing.is_empty() {
                Status::Missing(missing)
            } else if got.iter().any(Option::is_none) {
                // A member that answered but did not measure: it was told to skip the group.
                continue;
            } else if let Some(Outcome::Failed(m)) = got
                .iter()
                .flatten()
                .find(|o| matches!(o, Outcome::Failed(_)))
            {
                Status::Failed(m.clone())
            } else if got.iter().flatten().any(|o| **o == Outcome::TimedOut) {
                Status::TimedOut
            } else {
                Status::Ok
            };
            let time_us = (status == Status::Ok).then(|| {
                got.iter()
                    .flatten()
                    .filter_map(|o| match o {
                        Outcome::Timed(t) => Some(*t),
                        _ => None,
                    })
                    .fold(0.0, f64::max)
            });
            out.push(Judged {
                round: ri,
                group: gi,
                kind: round.kind,
                members: g.members.clone(),
                nodes: g.nodes.clone(),
                rail: g.rail,
                time_us,
                status,
                ratio: None,
                busbw_gbs: None,
                slow: false,
            });
        }
    }
    out
}

/// Where a reference applies: a kind, and for intra-node pairs the node.
pub type RefKey = (Kind, Option<usize>);

/// The key of the reference `g` is judged against.
pub fn ref_key(g: &Judged) -> RefKey {
    match g.kind {
        Kind::Pair => (Kind::Pair, g.nodes.first().copied()),
        k => (k, None),
    }
}

/// The reference time of `key` over `groups` (see the module doc); `None` without a finite
/// value.
pub fn reference(key: RefKey, groups: &[Judged]) -> Option<f64> {
    let of_key = groups.iter().filter(|g| ref_key(g) == key);
    let r = match key.0 {
        Kind::Intra => lower_median(of_key.filter_map(Judged::cost).collect()),
        Kind::Rail | Kind::Pair => {
            let mut per: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
            for g in of_key {
                if let Some(c) = g.cost() {
                    for &m in &g.members {
                        per.entry(m).or_default().push(c);
                    }
                }
            }
            lower_median(per.into_values().filter_map(lower_median).collect())
        }
    };
    r.filter(|x| x.is_finite() && *x > 0.0)
}

/// Sets each group's ratio, bandwidth and slowness. `busbw(time_us, nranks)` gives GB/s;
/// `floor(kind)` the profile's minimum bus bandwidth for the kind, if any.
pub fn judge(
    groups: &mut [Judged],
    busbw: &dyn Fn(f64, usize) -> f64,
    floor: &dyn Fn(Kind) -> Option<f64>,
) -> BTreeMap<RefKey, f64> {
    let keys: BTreeSet<RefKey> = groups.iter().map(ref_key).collect();
    let mut refs = BTreeMap::new();
    for key in keys {
        if let Some(r) = reference(key, groups) {
            refs.insert(key, r);
        }
    }
    for g in groups.iter_mut() {
        match g.status {
            Status::Ok => {
                let t = g.time_us.unwrap_or(0.0);
                let bw = busbw(t, g.members.len());
                g.busbw_gbs = Some(bw);
                g.ratio = refs.get(&ref_key(g)).map(|r| t / r);
                g.slow = g.ratio.is_some_and(|x| x >= SLOW_RATIO)
                    || floor(g.kind).is_some_and(|f| bw < f);
            }
            Status::TimedOut | Status::Failed(_) => g.slow = true,
            Status::Missing(_) => {}
        }
    }
    refs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lower_median_takes_the_smaller_middle() {
        assert_eq!(lower_median(vec![]), None);
        assert_eq!(lower_median(vec![4.0]), Some(4.0));
        assert_eq!(lower_median(vec![4.0, 1.0]), Some(1.0));
        assert_eq!(lower_median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(lower_median(vec![4.0, 4.0, 1.0, 1.0]), Some(1.0));
        assert_eq!(lower_median(vec![f64::INFINITY, 1.0, 2.0]), Some(2.0));
    }
}
