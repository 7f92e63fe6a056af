//! Every shipped profile's all_reduce busbw floor held against the bound of the hardware it
//! assumes, so a floor taken from the wrong figure (a per-NIC number used as a full-job
//! plateau, which passed a node that had lost seven of its eight NICs) cannot come back; and
//! every multi-node profile's per-NIC floor (its `[locate]` rail pairs) held against one NIC.
//!
//! The bound, for a ring all_reduce over n = nodes x gpus_per_node ranks. Each rank sends
//! 2(n-1)/n x S bytes on its outgoing ring edge, and nccl-tests defines busbw as exactly that
//! 2(n-1)/n x S over the time T, so busbw is the bandwidth the slowest edge achieved:
//!
//! * inside a node every GPU's egress carries its 2(n-1)/n x S over its own NVLink (or PCIe)
//!   link: busbw <= B_intra, the per-GPU bandwidth in one direction;
//! * across nodes each ring (channel) leaves every node once, so a node sends
//!   2(n-1)/n x S off-node in total, whatever the channel count, spread over its k NICs of line
//!   rate B_nic: T >= 2(n-1)/n x S / (k x B_nic), so busbw <= k x B_nic, the node's aggregate.
//!
//! bound = B_intra on one node, min(B_intra, k x B_nic) on several. NVLS and Tree/NVLSTree move
//! fewer bytes than the ring and can exceed it (a typical range's top may), but a floor must
//! hold for the ring too, so every floor is <= the bound, and >= 70% of it (line-rate
//! efficiencies are 80-96%; a floor far below the bound passes a node that lost links).

use ncclbench::accept::profile::{builtins, load, Profile};
use ncclbench::core::collective::Collective;

/// What carries a GPU's traffic inside its node.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Intra {
    /// NVLink through NVSwitch: GB/s per GPU in one direction.
    NvLink(f64),
    /// PCIe only: GB/s of the GPU's link in one direction.
    Pcie(f64),
}

impl Intra {
    fn gbs(self) -> f64 {
        match self {
            Intra::NvLink(g) | Intra::Pcie(g) => g,
        }
    }
}

/// The hardware a shipped profile assumes.
#[derive(Debug)]
struct Hardware {
    profile: &'static str,
    nodes: usize,
    gpus_per_node: usize,
    /// NICs per node the job's traffic may use (0 on one node).
    nics_per_node: usize,
    /// Line rate of one NIC, Gb/s.
    nic_gbit: f64,
    intra: Intra,
    /// The floor must be at least this fraction of the bound.
    min_fraction: f64,
}

/// NVLink 4 (H100, H200): 18 links, 900 GB/s both directions, 450 GB/s each way.
const NVLINK4: Intra = Intra::NvLink(450.0);
/// NVLink 3 (A100): 12 links, 600 GB/s both directions, 300 GB/s each way.
const NVLINK3: Intra = Intra::NvLink(300.0);
/// PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 encoding / 8 bit = 31.5 GB/s each way.
const PCIE4_X16: Intra = Intra::Pcie(16.0 * 16.0 * 128.0 / 130.0 / 8.0);

/// The rule for dedicated fabrics (NVLink, NICs).
const FRACTION: f64 = 0.70;
/// PCIe-only servers differ in topology (GPUs on CPU root ports or behind switches, one socket
/// or two, peer-to-peer on or off with host-memory staging between sockets) far more than
/// NVLink or NIC systems, and healthy ones span 10-25 GB/s (32-80% of the link). Its floor is the
/// low end of that range; this is the only exception, and only a PCIe entry may take it.
const PCIE_FRACTION: f64 = 0.30;

const HARDWARE: &[Hardware] = &[
    hw("h100-nvswitch", 1, 8, 0, 0.0, NVLINK4, FRACTION),
    hw("h200-nvswitch", 1, 8, 0, 0.0, NVLINK4, FRACTION),
    hw("a100-nvswitch", 1, 8, 0, 0.0, NVLINK3, FRACTION),
    hw("pcie4-8gpu", 1, 8, 0, 0.0, PCIE4_X16, PCIE_FRACTION),
    hw("h100-2node-400g-per-gpu", 2, 8, 8, 400.0, NVLINK4, FRACTION),
    hw("h100-2node-200g-per-gpu", 2, 8, 8, 200.0, NVLINK4, FRACTION),
    hw(
        "h100-2node-400g-per-node",
        2,
        8,
        1,
        400.0,
        NVLINK4,
        FRACTION,
    ),
];

const fn hw(
    profile: &'static str,
    nodes: usize,
    gpus_per_node: usize,
    nics_per_node: usize,
    nic_gbit: f64,
    intra: Intra,
    min_fraction: f64,
) -> Hardware {
    Hardware {
        profile,
        nodes,
        gpus_per_node,
        nics_per_node,
        nic_gbit,
        intra,
        min_fraction,
    }
}

impl Hardware {
    /// The ring all_reduce busbw bound in GB/s (see the module doc).
    fn bound_gbs(&self) -> f64 {
        let intra = self.intra.gbs();
        if self.nodes == 1 {
            return intra;
        }
        let nic_aggregate = self.nics_per_node as f64 * self.nic_gbit / 8.0;
        intra.min(nic_aggregate)
    }

    /// Why `floor` does not fit this hardware, if it does not.
    fn misfit(&self, floor: f64) -> Option<String> {
        let bound = self.bound_gbs();
        if floor > bound {
            return Some(format!(
                "{}: floor {floor} GB/s is above the ring bound {bound} GB/s",
                self.profile
            ));
        }
        if floor < self.min_fraction * bound {
            return Some(format!(
                "{}: floor {floor} GB/s is {:.0}% of the bound {bound} GB/s, below {:.0}%",
                self.profile,
                100.0 * floor / bound,
                100.0 * self.min_fraction
            ));
        }
        None
    }
}

fn hardware(name: &str) -> Option<&'static Hardware> {
    HARDWARE.iter().find(|h| h.profile == name)
}

/// The all_reduce floors of a shipped profile (every shipped busbw check is all_reduce: the
/// bound above is all_reduce's).
fn floors(p: &Profile) -> Vec<f64> {
    for check in &p.busbw {
        assert_eq!(
            check.collective,
            Collective::AllReduce,
            "{}: a busbw floor on {:?} has no bound in this test; add its formula",
            p.name,
            check.collective
        );
    }
    p.busbw.iter().map(|c| c.min_gbs).collect()
}

/// Every shipped profile with a floor has its hardware stated here, once, with the rank count
/// the profile assumes; a profile without one has no floor.
#[test]
fn every_shipped_floor_has_its_hardware_stated() {
    for (name, _) in builtins() {
        let p = load(Some(name)).unwrap();
        match hardware(name) {
            None => assert!(
                floors(&p).is_empty(),
                "{name} has a busbw floor but no hardware row in tests/profile_floors.rs"
            ),
            Some(h) => {
                assert_eq!(p.ranks, Some(h.nodes * h.gpus_per_node), "{name}");
                assert!(!floors(&p).is_empty(), "{name}: hardware row, no floor");
                assert_eq!(h.nodes == 1, h.nics_per_node == 0, "{name}: NICs per node");
            }
        }
    }
    for (i, h) in HARDWARE.iter().enumerate() {
        assert!(
            builtins().iter().any(|(n, _)| *n == h.profile),
            "{} is not a shipped profile",
            h.profile
        );
        assert!(
            HARDWARE[..i].iter().all(|o| o.profile != h.profile),
            "{} twice",
            h.profile
        );
    }
}

/// Every floor lies between the fraction of its bound and the bound.
#[test]
fn every_shipped_floor_is_near_its_hardware_bound() {
    let misfits: Vec<String> = HARDWARE
        .iter()
        .flat_map(|h| {
            let p = load(Some(h.profile)).unwrap();
            floors(&p).into_iter().filter_map(|f| h.misfit(f))
        })
        .collect();
    assert!(misfits.is_empty(), "{}", misfits.join("\n"));
}

/// Only PCIe takes the lower fraction; every NVLink or NIC bound is held to 70%.
#[test]
fn only_pcie_takes_the_lower_fraction() {
    for h in HARDWARE {
        match h.intra {
            Intra::Pcie(_) if h.nodes == 1 => assert_eq!(h.min_fraction, PCIE_FRACTION),
            _ => assert_eq!(h.min_fraction, FRACTION, "{}", h.profile),
        }
    }
}

/// The bounds of the multi-node rows are the node's NIC aggregate (400, 200 and 50 GB/s), and
/// the per-NIC floors this test exists to keep out are refused: 40 GB/s for eight 400 Gb/s
/// NICs, 20 for eight 200 Gb/s ones, 5 for one 400 Gb/s NIC.
#[test]
fn per_nic_floors_are_refused() {
    for (name, bound, per_nic_floor) in [
        ("h100-2node-400g-per-gpu", 400.0, 40.0),
        ("h100-2node-200g-per-gpu", 200.0, 20.0),
        ("h100-2node-400g-per-node", 50.0, 5.0),
    ] {
        let h = hardware(name).unwrap();
        assert_eq!(h.bound_gbs(), bound, "{name}");
        let why = h.misfit(per_nic_floor).expect(name);
        assert!(why.contains("below 70%"), "{why}");
        assert!(h.misfit(bound * 1.01).unwrap().contains("above"), "{name}");
    }
    // One node: the NVLink bound alone.
    assert_eq!(hardware("h100-nvswitch").unwrap().bound_gbs(), 450.0);
    assert!((hardware("pcie4-8gpu").unwrap().bound_gbs() - 31.5).abs() < 0.01);
}

impl Hardware {
    /// The busbw bound of one rail pair in locate's per-NIC stage: a 2-rank all_reduce between
    /// GPU i of two nodes sends S bytes per rank off-node, and busbw = S / T, so the bound is
    /// the line rate of the NIC the rail uses, shared by every rail of the node that uses it
    /// (all rails run at once): NIC line rate x min(1, NICs per node / GPUs per node).
    fn rail_bound_gbs(&self) -> f64 {
        let share = (self.nics_per_node as f64 / self.gpus_per_node as f64).min(1.0);
        self.nic_gbit / 8.0 * share
    }
}

/// Every multi-node profile has the per-NIC stage: a `[locate]` rail floor between 70% of the
/// rail bound and the bound (40 GB/s for a 400 Gb/s NIC per GPU, 20 for 200 Gb/s, 5 when eight
/// rails share one 400 Gb/s NIC); single-node profiles have no rails to judge.
#[test]
fn every_multi_node_profile_judges_each_rail_against_its_nic() {
    for h in HARDWARE {
        let p = load(Some(h.profile)).unwrap();
        let rail_floor = p.locate.as_ref().and_then(|l| l.inter_node_min_gbs);
        if h.nodes == 1 {
            assert_eq!(rail_floor, None, "{}: one node has no rails", h.profile);
            continue;
        }
        let floor = rail_floor.unwrap_or_else(|| panic!("{}: no [locate] rail floor", h.profile));
        let bound = h.rail_bound_gbs();
        assert!(
            floor <= bound && floor >= FRACTION * bound,
            "{}: rail floor {floor} GB/s against the rail bound {bound} GB/s",
            h.profile
        );
        let l = p.locate.as_ref().unwrap();
        assert_eq!(l.collective, Collective::AllReduce, "{}", h.profile);
        // Bandwidth-bound: at least 64 MiB per rank, far past a NIC's half-performance size.
        assert!(l.bytes.unwrap_or(0) >= 64 << 20, "{}", h.profile);
    }
    assert_eq!(
        hardware("h100-2node-400g-per-gpu")
            .unwrap()
            .rail_bound_gbs(),
        50.0
    );
    assert_eq!(
        hardware("h100-2node-400g-per-node")
            .unwrap()
            .rail_bound_gbs(),
        6.25
    );
}
