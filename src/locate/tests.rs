//! The judgement on simulated runs: every planted fault (a slow GPU, node or link, every rail
//! between two nodes, a hung rank) is named, alone, through noise of up to 1.6x on every group,
//! on layouts of 2 to 8 nodes; a run without a fault names nobody.

use super::layout::Layout;
use super::sample::{Outcome, Sample};
use super::schedule::{self, Kind, Round};
use super::suspects::What;
use super::verdict::{Floors, Verdict};
use std::collections::BTreeMap;

#[derive(Default, Clone)]
struct Fault {
    gpus: Vec<usize>,
    nodes: Vec<usize>,
    pairs: Vec<(usize, usize)>,
    /// (rank, round it goes silent in)
    hang: Option<(usize, usize)>,
    factor: f64,
}

/// A small deterministic generator (xorshift) for the noise.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn layout(nodes: usize, gpus: usize) -> Layout {
    let hosts: Vec<String> = (0..nodes * gpus)
        .map(|r| format!("node{}", r / gpus + 1))
        .collect();
    Layout::new(&hosts)
}

fn slowed(l: &Layout, f: &Fault, members: &[usize]) -> bool {
    members
        .iter()
        .any(|m| f.gpus.contains(m) || f.nodes.contains(&l.ranks[*m].node))
        || f.pairs
            .iter()
            .any(|(a, b)| members.contains(a) && members.contains(b))
}

fn measure(
    l: &Layout,
    f: &Fault,
    rounds: &[Round],
    first: usize,
    noise: &mut Noise,
    out: &mut Vec<Sample>,
    silent: &mut BTreeMap<usize, usize>,
) {
    for (k, round) in rounds.iter().enumerate() {
        let ri = first + k;
        if let Some((r, at)) = f.hang {
            if at == ri {
                silent.insert(r, ri);
            }
        }
        let base = match round.kind {
            Kind::Intra => 100.0,
            Kind::Rail => 300.0,
            Kind::Pair => 80.0,
        };
        for (gi, g) in round.groups.iter().enumerate() {
            if g.members
                .iter()
                .any(|m| silent.get(m).is_some_and(|&at| at < ri))
            {
                continue; // skipped: a member stopped answering earlier
            }
            let t = base
                * (1.0 + 0.6 * noise.next())
                * if slowed(l, f, &g.members) {
                    f.factor
                } else {
                    1.0
                };
            let hung = g.members.iter().any(|m| silent.get(m) == Some(&ri));
            for &m in &g.members {
                if silent.get(&m) == Some(&ri) {
                    continue;
                }
                let outcome = if hung {
                    Outcome::TimedOut
                } else {
                    Outcome::Timed(t * (1.0 + 0.05 * noise.next()))
                };
                out.push(Sample {
                    round: ri,
                    group: gi,
                    rank: m,
                    outcome,
                });
            }
        }
    }
}

/// Runs the whole protocol on a simulated job: intra-node, three rail rounds, then pairs on
/// the nodes whose intra-node group was slow.
fn run(nodes: usize, gpus: usize, f: &Fault, seed: u64) -> (Layout, Verdict) {
    let l = layout(nodes, gpus);
    let mut rounds = vec![schedule::intra(&l)];
    rounds.extend(schedule::rails(&l, 3));
    let mut noise = Noise(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let (mut samples, mut silent) = (Vec::new(), BTreeMap::new());
    measure(&l, f, &rounds, 0, &mut noise, &mut samples, &mut silent);
    let bw = |t: f64, _n: usize| 1e3 / t;
    let first = Verdict::new(&l, &rounds, &samples, &silent, &bw, Floors::default());
    let pairs = schedule::pairs(&l, &first.slow_intra_nodes(), 3);
    let at = rounds.len();
    measure(&l, f, &pairs, at, &mut noise, &mut samples, &mut silent);
    rounds.extend(pairs);
    let v = Verdict::new(&l, &rounds, &samples, &silent, &bw, Floors::default());
    (l, v)
}

fn named(v: &Verdict) -> Vec<(What, String)> {
    v.suspects
        .iter()
        .map(|s| (s.what, s.place.clone()))
        .collect()
}

const LAYOUTS: [(usize, usize); 6] = [(2, 2), (3, 2), (4, 2), (4, 4), (5, 8), (8, 8)];

#[test]
fn no_fault_names_nobody() {
    for (n, g) in LAYOUTS {
        for seed in 0..50 {
            let (_, v) = run(
                n,
                g,
                &Fault {
                    factor: 1.0,
                    ..Fault::default()
                },
                seed,
            );
            assert!(
                v.suspects.is_empty(),
                "{n}x{g} seed {seed}: {:?}",
                named(&v)
            );
        }
    }
}

#[test]
fn a_slow_gpu_is_named_alone() {
    for (n, g) in LAYOUTS {
        for factor in [3.0, 5.0] {
            for seed in 0..10 {
                let f = Fault {
                    gpus: vec![g + 1],
                    factor,
                    ..Fault::default()
                };
                let (l, v) = run(n, g, &f, seed);
                assert_eq!(
                    named(&v),
                    vec![(What::Gpu, l.name(g + 1))],
                    "{n}x{g} x{factor} seed {seed}"
                );
                assert_eq!(v.excluded_hosts(&l), vec!["node2".to_string()]);
            }
        }
    }
}

#[test]
fn a_slow_node_is_named_alone() {
    for (n, g) in LAYOUTS {
        for seed in 0..10 {
            let f = Fault {
                nodes: vec![n - 1],
                factor: 3.0,
                ..Fault::default()
            };
            let (l, v) = run(n, g, &f, seed);
            let host = format!("node{n}");
            assert_eq!(
                named(&v),
                vec![(What::Node, host.clone())],
                "{n}x{g} seed {seed}"
            );
            assert_eq!(v.excluded_hosts(&l), vec![host]);
        }
    }
}

#[test]
fn a_slow_link_between_healthy_nodes_is_a_link_and_excludes_nobody() {
    for (n, g) in LAYOUTS {
        // GPU 1 of node 1 with GPU 1 of node 2 (they meet in the first rail round).
        let (a, b) = (1, g + 1);
        for seed in 0..10 {
            let f = Fault {
                pairs: vec![(a, b)],
                factor: 4.0,
                ..Fault::default()
            };
            let (l, v) = run(n, g, &f, seed);
            assert_eq!(
                named(&v),
                vec![(What::Link, "node1 - node2 rail 1".to_string())],
                "{n}x{g} seed {seed}"
            );
            assert!(v.excluded_hosts(&l).is_empty());
        }
    }
}

#[test]
fn every_rail_between_two_nodes_is_a_path() {
    for (n, g) in [(3, 2), (4, 4), (8, 8)] {
        let pairs: Vec<(usize, usize)> = (0..g).map(|i| (i, g + i)).collect();
        let f = Fault {
            pairs,
            factor: 4.0,
            ..Fault::default()
        };
        let (_, v) = run(n, g, &f, 1);
        assert_eq!(
            named(&v),
            vec![(What::Path, "node1 - node2 (every rail)".to_string())],
            "{n}x{g}"
        );
    }
}

#[test]
fn a_gpu_slow_only_inside_its_node_is_found_by_the_pair_rounds() {
    // GPU 2 of node 3: slow with its node's GPUs (intra-node group and pairs), fine on rails.
    let l = layout(4, 4);
    let bad = 2 * 4 + 2;
    let pairs: Vec<(usize, usize)> = l.nodes[2]
        .ranks
        .iter()
        .filter(|&&r| r != bad)
        .map(|&r| (r, bad))
        .collect();
    let f = Fault {
        pairs,
        factor: 4.0,
        ..Fault::default()
    };
    let (l, v) = run(4, 4, &f, 3);
    assert_eq!(named(&v), vec![(What::Gpu, l.name(bad))]);
    assert!(v.groups.iter().any(|g| g.kind == Kind::Pair));
}

#[test]
fn a_hung_rank_is_named_first_and_its_partners_are_not_blamed() {
    for (n, g) in [(2, 2), (4, 2), (4, 4)] {
        for round in [0, n.min(3) - 1] {
            let f = Fault {
                hang: Some((g + 1, round)),
                factor: 1.0,
                ..Fault::default()
            };
            let (l, v) = run(n, g, &f, 5);
            assert_eq!(
                named(&v),
                vec![(What::Hung, l.name(g + 1))],
                "{n}x{g} round {round}"
            );
            assert_eq!(v.excluded_hosts(&l), vec!["node2".to_string()]);
        }
    }
}

#[test]
fn a_hang_and_a_slow_node_are_both_named_hang_first() {
    let f = Fault {
        hang: Some((1, 1)),
        nodes: vec![3],
        factor: 4.0,
        ..Fault::default()
    };
    let (l, v) = run(4, 2, &f, 2);
    assert_eq!(
        named(&v),
        vec![(What::Hung, l.name(1)), (What::Node, "node4".into())]
    );
    assert_eq!(
        v.excluded_hosts(&l),
        vec!["node1".to_string(), "node4".to_string()]
    );
}

#[test]
fn a_profile_floor_catches_what_the_job_median_cannot() {
    // Two nodes, node 2 slow on every path: the job's own reference cannot tell the rails
    // apart, its intra-node group still names it; a floor on the rails names it as well.
    let f = Fault {
        nodes: vec![1],
        factor: 4.0,
        ..Fault::default()
    };
    let (_, v) = run(2, 2, &f, 4);
    assert_eq!(named(&v), vec![(What::Node, "node2".into())]);
    let l = layout(2, 2);
    let rounds = {
        let mut r = vec![schedule::intra(&l)];
        r.extend(schedule::rails(&l, 3));
        r
    };
    let samples: Vec<Sample> = rounds[1]
        .groups
        .iter()
        .enumerate()
        .flat_map(|(gi, g)| {
            g.members.iter().map(move |&m| Sample {
                round: 1,
                group: gi,
                rank: m,
                outcome: Outcome::Timed(1000.0),
            })
        })
        .collect();
    let bw = |t: f64, _n: usize| 1e3 / t;
    let none = Verdict::new(
        &l,
        &rounds,
        &samples,
        &BTreeMap::new(),
        &bw,
        Floors::default(),
    );
    assert!(none.suspects.is_empty());
    let floor = Floors {
        intra_gbs: None,
        inter_gbs: Some(2.0),
    };
    let v = Verdict::new(&l, &rounds, &samples, &BTreeMap::new(), &bw, floor);
    assert!(
        v.groups.iter().all(|g| g.slow),
        "1 GB/s is under the 2 GB/s floor"
    );
    assert_eq!(v.suspects.len(), 1, "{:?}", named(&v));
    assert_eq!(v.suspects[0].what, What::Path);
}
