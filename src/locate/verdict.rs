//! The judgement of a whole run: every group judged against its kind's reference, then the
//! suspects ([`super::suspects`]) and the hosts a scheduler should leave out.

use super::groups::{self, Judged, RefKey};
use super::layout::Layout;
use super::sample::Sample;
use super::schedule::{Kind, Round};
use super::suspects::{self, Suspect};
use std::collections::{BTreeMap, BTreeSet};

/// Profile floors: the least bus bandwidth (GB/s) a group of a kind may show.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Floors {
    /// Intra-node groups and intra-node pairs.
    pub intra_gbs: Option<f64>,
    /// Inter-node rail groups.
    pub inter_gbs: Option<f64>,
}

impl Floors {
    /// The floor of `kind`.
    pub fn of(&self, kind: Kind) -> Option<f64> {
        match kind {
            Kind::Intra | Kind::Pair => self.intra_gbs,
            Kind::Rail => self.inter_gbs,
        }
    }
}

/// The judged run.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Every measured group.
    pub groups: Vec<Judged>,
    /// The reference time (microseconds) of each kind (and node, for pairs) that has one.
    pub references: BTreeMap<RefKey, f64>,
    /// The suspects, most likely first.
    pub suspects: Vec<Suspect>,
}

impl Verdict {
    /// Judges the samples of `rounds`; `silent` maps ranks that stopped answering to the round
    /// they went silent in; `busbw(time_us, nranks)` gives GB/s.
    pub fn new(
        layout: &Layout,
        rounds: &[Round],
        samples: &[Sample],
        silent: &BTreeMap<usize, usize>,
        busbw: &dyn Fn(f64, usize) -> f64,
        floors: Floors,
    ) -> Verdict {
        let quiet: BTreeSet<usize> = silent.keys().copied().collect();
        let mut groups = groups::collect(rounds, samples, &quiet);
        let references = groups::judge(&mut groups, busbw, &|k| floors.of(k));
        let suspects = suspects::find(layout, &groups, silent);
        Verdict {
            groups,
            references,
            suspects,
        }
    }

    /// The hosts of the suspects that a scheduler should leave out, in node order.
    pub fn excluded_hosts(&self, layout: &Layout) -> Vec<String> {
        let bad: BTreeSet<&str> = self
            .suspects
            .iter()
            .filter(|s| s.exclude)
            .flat_map(|s| s.hosts.iter().map(String::as_str))
            .collect();
        layout
            .nodes
            .iter()
            .filter(|n| bad.contains(n.host.as_str()))
            .map(|n| n.host.clone())
            .collect()
    }

    /// The nodes whose intra-node group was slow (the pair rounds bisect them).
    pub fn slow_intra_nodes(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .groups
            .iter()
            .filter(|g| g.kind == Kind::Intra && g.slow)
            .flat_map(|g| g.nodes.clone())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}
