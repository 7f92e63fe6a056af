//! What locate measures, round by round. In a round the groups are disjoint, so they all run at
//! once; every rank is in at most one group per round.
//!
//! * **Intra-node** (one round): each node's ranks together (its NVLink/PCIe fabric).
//! * **Rails** (`--rounds` rounds): nodes paired by the circle method of round-robin
//!   tournaments (node 0 fixed, the others rotating; an odd count gives one node a bye per
//!   round), so after k rounds every node has met k different partners. In a pairing of nodes
//!   a and b, GPU i of a and GPU i of b form one group per rail i (the NIC each GPU uses).
//! * **Intra-node pairs** (only on nodes whose intra-node group was slow, at most 3 rounds):
//!   the same circle method over a node's GPUs, so a slow GPU shows in every pair it is in.

/// What a group measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A node's ranks together.
    Intra,
    /// GPU i of one node with GPU i of another.
    Rail,
    /// Two GPUs of one node.
    Pair,
}

impl Kind {
    /// The name reports and JSON use.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Intra => "intra-node",
            Kind::Rail => "inter-node rail",
            Kind::Pair => "intra-node pair",
        }
    }
}

/// One group of a round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Global ranks, ascending (a group's rank order in its communicator).
    pub members: Vec<usize>,
    /// The node(s) the members are on: one for intra-node kinds, two for a rail.
    pub nodes: Vec<usize>,
    /// The rail (GPU index) of a rail group.
    pub rail: Option<usize>,
}

/// One round: disjoint groups of one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// What its groups measure.
    pub kind: Kind,
    /// Its groups; a group's index is its colour in the split.
    pub groups: Vec<Group>,
}

impl Round {
    /// The group (colour) of `rank` in this round, if it is in one.
    pub fn color_of(&self, rank: usize) -> Option<usize> {
        self.groups.iter().position(|g| g.members.contains(&rank))
    }
}

/// The rounds of pairings of `n` players by the circle method: `rounds` rounds at most (fewer
/// when there are fewer distinct ones), each a list of pairs `(a, b)` with `a < b`.
pub fn circle(n: usize, rounds: usize) -> Vec<Vec<(usize, usize)>> {
    if n < 2 {
        return Vec::new();
    }
    // An odd count gets a bye: the player paired with `n` sits the round out.
    let m = n + n % 2;
    let mut out = Vec::new();
    for r in 0..(m - 1).min(rounds) {
        let at = |k: usize| if k == 0 { 0 } else { 1 + (k - 1 + r) % (m - 1) };
        let mut pairs: Vec<(usize, usize)> = (0..m / 2)
            .map(|k| (at(k), at(m - 1 - k)))
            .filter(|&(a, b)| a < n && b < n)
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        pairs.sort_unstable();
        out.push(pairs);
    }
    out
}

/// The intra-node round: every node with at least two ranks is one group.
pub fn intra(layout: &super::layout::Layout) -> Round {
    let groups = layout
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.ranks.len() >= 2)
        .map(|(i, n)| Group {
            members: n.ranks.clone(),
            nodes: vec![i],
            rail: None,
        })
        .collect();
    Round {
        kind: Kind::Intra,
        groups,
    }
}

/// The rail rounds: `rounds` round-robin pairings of the nodes, GPU i with GPU i.
pub fn rails(layout: &super::layout::Layout, rounds: usize) -> Vec<Round> {
    circle(layout.nodes.len(), rounds)
        .into_iter()
        .map(|pairs| {
            let mut groups = Vec::new();
            for (a, b) in pairs {
                let (ra, rb) = (&layout.nodes[a].ranks, &layout.nodes[b].ranks);
                for (rail, (&x, &y)) in ra.iter().zip(rb).enumerate() {
                    groups.push(Group {
                        members: vec![x.min(y), x.max(y)],
                        nodes: vec![a, b],
                        rail: Some(rail),
                    });
                }
            }
            Round {
                kind: Kind::Rail,
                groups,
            }
        })
        .filter(|r| !r.groups.is_empty())
        .collect()
}

/// Rounds of intra-node GPU pairs on `nodes` (nodes with three or more GPUs: with two, the
/// intra-node group is the only pair), at most `rounds`.
pub fn pairs(layout: &super::layout::Layout, nodes: &[usize], rounds: usize) -> Vec<Round> {
    let mut out: Vec<Round> = Vec::new();
    for &n in nodes {
        let ranks = &layout.nodes[n].ranks;
        if ranks.len() < 3 {
            continue;
        }
        for (r, pairs) in circle(ranks.len(), rounds).into_iter().enumerate() {
            if out.len() <= r {
                out.push(Round {
                    kind: Kind::Pair,
                    groups: Vec::new(),
                });
            }
            out[r].groups.extend(pairs.into_iter().map(|(a, b)| Group {
                members: vec![ranks[a], ranks[b]],
                nodes: vec![n],
                rail: None,
            }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::layout::Layout;
    use super::*;
    use std::collections::BTreeSet;

    fn layout(nodes: usize, gpus: usize) -> Layout {
        let hosts: Vec<String> = (0..nodes * gpus)
            .map(|r| format!("n{}", r / gpus))
            .collect();
        Layout::new(&hosts)
    }

    #[test]
    fn the_circle_method_never_repeats_a_pairing_and_gives_byes_to_odd_counts() {
        for n in 2..12 {
            let rounds = circle(n, usize::MAX);
            assert_eq!(rounds.len(), n + n % 2 - 1, "n {n}");
            let mut seen = BTreeSet::new();
            for pairs in &rounds {
                let mut used = BTreeSet::new();
                for &(a, b) in pairs {
                    assert!(a < b && b < n);
                    assert!(used.insert(a) && used.insert(b), "disjoint");
                    assert!(seen.insert((a, b)), "repeated {a}-{b}");
                }
                assert_eq!(pairs.len(), n / 2);
            }
            assert_eq!(seen.len(), n * (n - 1) / 2, "every pairing once");
        }
        assert_eq!(circle(4, 2).len(), 2);
        assert!(circle(1, 3).is_empty());
    }

    #[test]
    fn rails_pair_gpu_i_with_gpu_i_and_every_node_meets_its_partners() {
        let l = layout(4, 2);
        let rounds = rails(&l, 3);
        assert_eq!(rounds.len(), 3);
        for r in &rounds {
            assert_eq!(r.groups.len(), 4);
            let mut ranks = BTreeSet::new();
            for g in &r.groups {
                let (a, b) = (&l.ranks[g.members[0]], &l.ranks[g.members[1]]);
                assert_eq!((a.gpu, b.gpu), (g.rail.unwrap(), g.rail.unwrap()));
                assert_ne!(a.node, b.node);
                assert!(ranks.insert(g.members[0]) && ranks.insert(g.members[1]));
            }
        }
        let partners: BTreeSet<Vec<usize>> = rounds
            .iter()
            .flat_map(|r| r.groups.iter().map(|g| g.nodes.clone()))
            .collect();
        assert_eq!(partners.len(), 6, "all 6 node pairs in 3 rounds");
        assert_eq!(rounds[0].color_of(rounds[0].groups[2].members[1]), Some(2));
    }

    #[test]
    fn intra_and_pairs_skip_nodes_too_small_for_them() {
        let l = Layout::new(&["a", "a", "a", "a", "b", "c", "c"].map(String::from));
        let i = intra(&l);
        assert_eq!(i.groups.len(), 2, "node b has one GPU");
        assert_eq!(i.groups[0].members, vec![0, 1, 2, 3]);
        let p = pairs(&l, &[0, 2], 3);
        assert_eq!(p.len(), 3);
        assert!(p
            .iter()
            .all(|r| r.groups.len() == 2 && r.groups[0].nodes == vec![0]));
        assert!(
            pairs(&l, &[2], 3).is_empty(),
            "two GPUs: the intra group is the pair"
        );
    }
}
