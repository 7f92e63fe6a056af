//! From judged groups to suspects, ranked. The rules (docs/locate.md states them):
//!
//! * **Hung**: a rank that stopped answering (its partners' waits passed `-T`, or it never
//!   reported); its groups are not judged.
//! * **GPU**: a rank slow in both the intra-node and the rail kind, as far as it took part
//!   in them (at least two groups in all), where a kind with several groups counts as slow
//!   when the lower median of them is slow; or a rank whose intra-node pairs are mostly slow
//!   (the pair rounds bisect a slow node).
//! * **Node**: every GPU of the node is a GPU suspect; or the lower median of all the node's
//!   rail groups is slow and it met at least two other nodes (its pairings are slow whatever
//!   the partner and rail; against a single partner a slow node and a slow path look the
//!   same); or its intra-node group is slow and no GPU of it is a suspect. A node suspect
//!   takes in the GPU suspects on it.
//! * **Link** / **path**: a slow rail group between two nodes that are fine elsewhere (no
//!   member, nor its node, is a suspect): a path when every rail between the two nodes was
//!   slow in that round, else the link of that rail; likewise a slow intra-node pair whose
//!   GPUs are fine elsewhere.
//!
//! Hung ranks come first, then by their worst ratio to the job's reference.

use super::groups::{lower_median, Judged, Status};
use super::layout::Layout;
use super::schedule::Kind;
use std::collections::{BTreeMap, BTreeSet};

/// What a suspect is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum What {
    /// A rank that stopped answering.
    Hung,
    /// A whole node.
    Node,
    /// One GPU (rank).
    Gpu,
    /// Every rail between two nodes.
    Path,
    /// One rail between two nodes, or one GPU pair inside a node.
    Link,
}

impl What {
    /// The word reports use.
    pub fn name(self) -> &'static str {
        match self {
            What::Hung => "hung",
            What::Node => "node",
            What::Gpu => "gpu",
            What::Path => "path",
            What::Link => "link",
        }
    }
}

/// One suspect with the groups that point at it.
#[derive(Debug, Clone, PartialEq)]
pub struct Suspect {
    /// What it is.
    pub what: What,
    /// Its hosts: one, or the two ends of a link or path.
    pub hosts: Vec<String>,
    /// Its ranks (the GPUs of a node, the two ends of a link).
    pub ranks: Vec<usize>,
    /// The rail of a link between nodes.
    pub rail: Option<usize>,
    /// Where it is, in words (`node3 GPU 1 (rank 5)`, `node1 - node3 rail 0`).
    pub place: String,
    /// The worst ratio of its evidence (infinite for a hang or a timeout).
    pub score: f64,
    /// Indices into the judged groups that point at it.
    pub evidence: Vec<usize>,
    /// Whether its hosts go into the scheduler's exclude list (nodes, GPUs and hung ranks;
    /// not links between healthy nodes).
    pub exclude: bool,
}

fn worst(groups: &[Judged], idx: &[usize]) -> f64 {
    idx.iter()
        .map(|&i| match groups[i].status {
            Status::Ok => groups[i].ratio.unwrap_or(0.0),
            _ => f64::INFINITY,
        })
        .fold(0.0, f64::max)
}

/// Whether the lower median of the groups `idx` is slow.
fn mostly_slow(groups: &[Judged], idx: &[usize]) -> bool {
    let v: Vec<f64> = idx
        .iter()
        .map(|&i| if groups[i].slow { 1.0 } else { 0.0 })
        .collect();
    lower_median(v) == Some(1.0)
}

/// The suspects of a run; `silent` maps each rank that stopped answering to the round it went
/// silent in.
pub fn find(layout: &Layout, groups: &[Judged], silent: &BTreeMap<usize, usize>) -> Vec<Suspect> {
    let mut out = Vec::new();
    for (&rank, &round) in silent {
        let evidence: Vec<usize> = (0..groups.len())
            .filter(|&i| groups[i].round == round && groups[i].members.contains(&rank))
            .collect();
        out.push(Suspect {
            what: What::Hung,
            hosts: vec![layout.host(rank).to_string()],
            ranks: vec![rank],
            rail: None,
            place: layout.name(rank),
            score: f64::INFINITY,
            evidence,
            exclude: true,
        });
    }
    let judged = |i: &usize| !matches!(groups[*i].status, Status::Missing(_));
    // Per rank and kind, the groups it took part in.
    let mut of: BTreeMap<(usize, Kind), Vec<usize>> = BTreeMap::new();
    for (i, g) in groups.iter().enumerate().filter(|(i, _)| judged(i)) {
        for &m in &g.members {
            of.entry((m, g.kind)).or_default().push(i);
        }
    }
    let mut gpu: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for rank in 0..layout.ranks.len() {
        if silent.contains_key(&rank) {
            continue;
        }
        // Pairs stay out of "every kind": a node slow as a whole is its own pairs' reference.
        let kinds: Vec<&Vec<usize>> = [Kind::Intra, Kind::Rail]
            .iter()
            .filter_map(|k| of.get(&(rank, *k)))
            .collect();
        let total: usize = kinds.iter().map(|v| v.len()).sum();
        let everywhere = total >= 2 && kinds.iter().all(|v| mostly_slow(groups, v));
        let pairs = of
            .get(&(rank, Kind::Pair))
            .is_some_and(|v| mostly_slow(groups, v));
        if everywhere || pairs {
            let mut ev: Vec<usize> = kinds.into_iter().flatten().copied().collect();
            ev.extend(of.get(&(rank, Kind::Pair)).into_iter().flatten().copied());
            ev.retain(|&i| groups[i].slow);
            gpu.insert(rank, ev);
        }
    }
    let mut node_suspect: BTreeSet<usize> = BTreeSet::new();
    for (n, node) in layout.nodes.iter().enumerate() {
        let live: Vec<usize> = node
            .ranks
            .iter()
            .copied()
            .filter(|r| !silent.contains_key(r))
            .collect();
        let all_gpus = !live.is_empty() && live.iter().all(|r| gpu.contains_key(r));
        let rails: Vec<usize> = (0..groups.len())
            .filter(|&i| judged(&i) && groups[i].kind == Kind::Rail && groups[i].nodes.contains(&n))
            .collect();
        // Two partners at least: against one, a slow node and a slow path look the same.
        let partners: BTreeSet<usize> = rails
            .iter()
            .flat_map(|&i| groups[i].nodes.iter().copied())
            .filter(|&m| m != n)
            .collect();
        let rails_slow = partners.len() >= 2 && mostly_slow(groups, &rails);
        let intra: Vec<usize> = (0..groups.len())
            .filter(|&i| judged(&i) && groups[i].kind == Kind::Intra && groups[i].nodes == [n])
            .collect();
        let intra_slow = intra.iter().any(|&i| groups[i].slow)
            && !node.ranks.iter().any(|r| gpu.contains_key(r));
        if !(all_gpus || rails_slow || intra_slow) {
            continue;
        }
        node_suspect.insert(n);
        let mut ev: BTreeSet<usize> = intra.into_iter().filter(|&i| groups[i].slow).collect();
        if rails_slow {
            ev.extend(rails.into_iter().filter(|&i| groups[i].slow));
        }
        for r in &node.ranks {
            if let Some(g) = gpu.remove(r) {
                ev.extend(g);
            }
        }
        let ev: Vec<usize> = ev.into_iter().collect();
        out.push(Suspect {
            what: What::Node,
            hosts: vec![node.host.clone()],
            ranks: node.ranks.clone(),
            rail: None,
            place: node.host.clone(),
            score: worst(groups, &ev),
            evidence: ev,
            exclude: true,
        });
    }
    for (rank, ev) in &gpu {
        out.push(Suspect {
            what: What::Gpu,
            hosts: vec![layout.host(*rank).to_string()],
            ranks: vec![*rank],
            rail: None,
            place: layout.name(*rank),
            score: worst(groups, ev),
            evidence: ev.clone(),
            exclude: true,
        });
    }
    out.extend(links(layout, groups, &gpu, &node_suspect));
    out.sort_by(|a, b| {
        (a.what != What::Hung)
            .cmp(&(b.what != What::Hung))
            .then(b.score.total_cmp(&a.score))
            .then(a.what.cmp(&b.what))
            .then(a.ranks.cmp(&b.ranks))
    });
    out
}

/// Slow groups that no GPU or node suspect explains: links, or paths where every rail between
/// two nodes was slow in one round.
fn links(
    layout: &Layout,
    groups: &[Judged],
    gpu: &BTreeMap<usize, Vec<usize>>,
    nodes: &BTreeSet<usize>,
) -> Vec<Suspect> {
    let explained = |g: &Judged| {
        g.members.iter().any(|m| gpu.contains_key(m)) || g.nodes.iter().any(|n| nodes.contains(n))
    };
    // (round, nodes) -> (slow unexplained groups, groups of that pairing in the round)
    let mut by_pair: BTreeMap<(usize, Vec<usize>), (Vec<usize>, usize)> = BTreeMap::new();
    for (i, g) in groups.iter().enumerate() {
        if matches!(g.status, Status::Missing(_)) || g.kind == Kind::Intra {
            continue;
        }
        let e = by_pair
            .entry((g.round, g.nodes.clone()))
            .or_insert((Vec::new(), 0));
        e.1 += 1;
        if g.slow && !explained(g) {
            e.0.push(i);
        }
    }
    let mut out = Vec::new();
    for ((_, nodes), (slow, total)) in by_pair {
        if slow.is_empty() {
            continue;
        }
        let hosts: Vec<String> = nodes
            .iter()
            .map(|&n| layout.nodes[n].host.clone())
            .collect();
        let kind = groups[slow[0]].kind;
        if kind == Kind::Rail && slow.len() == total && total >= 2 {
            let ranks = slow
                .iter()
                .flat_map(|&i| groups[i].members.clone())
                .collect();
            out.push(Suspect {
                what: What::Path,
                place: format!("{} - {} (every rail)", hosts[0], hosts[1]),
                hosts,
                ranks,
                rail: None,
                score: worst(groups, &slow),
                evidence: slow,
                exclude: false,
            });
            continue;
        }
        for i in slow {
            let g = &groups[i];
            let place = match g.rail {
                Some(rail) => format!("{} - {} rail {rail}", hosts[0], hosts[1]),
                None => format!(
                    "{} GPU {} - GPU {}",
                    hosts[0], layout.ranks[g.members[0]].gpu, layout.ranks[g.members[1]].gpu
                ),
            };
            out.push(Suspect {
                what: What::Link,
                hosts: hosts.clone(),
                ranks: g.members.clone(),
                rail: g.rail,
                place,
                score: worst(groups, &[i]),
                evidence: vec![i],
                exclude: false,
            });
        }
    }
    out
}
