//! Tests of the topology summary on real published logs and on hand-written log lines.

use super::*;
use crate::core::redact::Redactor;
use std::path::PathBuf;

/// A real published log, or `None` (the test skips; fails under `CI=true`) when absent.
fn real(name: &str) -> Option<PathBuf> {
    crate::core::real_fixtures::path(name)
}

fn parse(text: &str) -> LogSummary {
    super::super::parse_reader(text.as_bytes(), "t", &ParseOptions::default()).unwrap()
}

fn paths(t: &TopologySummary) -> Vec<(String, String, u64, u64)> {
    t.transports
        .iter()
        .flat_map(|tr| {
            tr.paths
                .iter()
                .map(|(p, n)| (tr.kind.clone(), p.clone(), tr.connections, *n))
        })
        .collect()
}

/// 006 (2.27.7, one host `mew0`, 2 A100 with an NVLink bridge, one process): 48
/// `via P2P/direct pointer` lines, 24 coll channels, IB plugin with two RoCE NICs, ten
/// GDR Disabled lines and no NET connection, NVL in the topology dump.
#[test]
fn single_node_nvlink_bridge_log_shows_p2p_direct_pointer() {
    let Some(f) = real("006_tuning_2.27.7_a100pcie_x2_allreduce.txt") else {
        return;
    };
    let t = from_log_file(&f).unwrap();
    assert_eq!(t.nccl_versions, ["2.27.7+cuda13.0"]);
    assert_eq!(t.communicators, 1);
    let c = t.comm.as_ref().unwrap();
    assert_eq!((c.nranks, c.ranks_seen, c.ranks_complete), (2, 2, 2));
    assert_eq!(
        (c.nodes, c.ranks_per_node, c.channels),
        (Some(1), Some(2), Some(24))
    );
    assert_eq!(c.hosts.len(), 1);
    assert_eq!(
        (c.hosts[0].host.as_str(), &c.hosts[0].ranks[..]),
        ("mew0", &[0, 1][..])
    );
    assert_eq!(c.connected, ["Connected all rings, use ring PXN 0 GDR 1"]);
    assert_eq!(
        paths(&t),
        [("P2P".into(), "P2P/direct pointer".into(), 48, 48)]
    );
    assert_eq!(t.gdr_used, None);
    assert_eq!((t.gdr_enabled_lines, t.gdr_disabled_lines), (0, 10));
    assert_eq!(t.networks, ["IB"]);
    let nics: Vec<(&str, &str)> = t
        .nics
        .iter()
        .map(|n| (n.name.as_str(), n.link.as_str()))
        .collect();
    assert_eq!(nics, [("mlx5_0:1", "RoCE"), ("mlx5_1:1", "RoCE")]);
    assert_eq!(t.bootstrap, ["eno8303:192.168.0.3<0>"]);
    assert_eq!((t.nvlink, t.nvls_available), (Some(true), None));
}

/// 010 (2.22.3, 2 AWS p5 nodes x 8 H100, EFA): 16 ranks, 8 per node, 448 `P2P/CUMEM`
/// and 512 `NET/AWS Libfabric/N/GDRDMA` lines, NVLS available, trees and NVLS tree
/// connected, 16 coll channels.
#[test]
fn two_node_efa_log_shows_nodes_net_and_gdr() {
    let Some(f) = real("010_init_2.22.3_p5_h100x16_efa_allreduce_tagged.txt") else {
        return;
    };
    let t = from_log_file(&f).unwrap();
    assert_eq!(t.nccl_versions, ["2.22.3+cuda12.2"]);
    let c = t.comm.as_ref().unwrap();
    assert_eq!((c.nranks, c.ranks_seen), (16, 16));
    assert_eq!(
        (c.nodes, c.ranks_per_node, c.channels),
        (Some(2), Some(8), Some(16))
    );
    let hosts: Vec<(&str, usize)> = c
        .hosts
        .iter()
        .map(|h| (h.host.as_str(), h.ranks.len()))
        .collect();
    assert_eq!(
        hosts,
        [("test-nccl-worker-0", 8), ("test-nccl-worker-1", 8)]
    );
    assert_eq!(c.hosts[1].ranks, (8..16).collect::<Vec<u32>>());
    assert_eq!(c.connected, ["Connected NVLS tree", "Connected all trees"]);
    assert_eq!(
        paths(&t),
        [
            ("P2P".into(), "P2P/CUMEM".into(), 448, 448),
            ("NET".into(), "NET/AWS Libfabric".into(), 512, 512)
        ]
    );
    assert_eq!(t.gdr_used, Some(true));
    assert_eq!(t.nvls_available, Some(true));
    assert_eq!(t.networks, ["AWS Libfabric"]);
    assert!(t.nics.is_empty(), "EFA prints no NET/IB device list");
    assert_eq!(t.bootstrap, ["eth0:10.1.13.167<0>", "eth0:10.1.71.36<0>"]);
    // `summarize` alone has the same counts, without the paths.
    let s =
        summarize(&super::super::parse_files(&[&f], &ParseOptions::default()).unwrap()).unwrap();
    let kinds: Vec<(&str, u64, usize)> = s
        .transports
        .iter()
        .map(|t| (t.kind.as_str(), t.connections, t.paths.len()))
        .collect();
    assert_eq!(kinds, [("P2P", 448, 0), ("NET", 512, 0)]);
}

/// 013 (2.23.4, NCCL_P2P_DISABLE=1, 2 A100 on host n015): only `SHM/direct` lines, GDR
/// Enabled for both HCAs in both processes, a RoCE and an IB NIC, 4 channels.
#[test]
fn p2p_disabled_log_shows_shm_only() {
    let Some(f) = real("013_init_2.23.4_a100pcie_x2_p2pdisabled_allreduce.txt") else {
        return;
    };
    let t = from_log_file(&f).unwrap();
    assert_eq!(paths(&t), [("SHM".into(), "SHM/direct".into(), 8, 8)]);
    let c = t.comm.as_ref().unwrap();
    assert_eq!((c.nranks, c.nodes, c.channels), (2, Some(1), Some(4)));
    assert_eq!(c.connected, ["Connected all rings"]);
    assert_eq!((t.gdr_used, t.gdr_enabled_lines), (None, 4));
    let links: Vec<&str> = t.nics.iter().map(|n| n.link.as_str()).collect();
    assert_eq!(links, ["RoCE", "IB"]);
    assert!(
        t.bootstrap.is_empty(),
        "2.23 logs Bootstrap under BOOTSTRAP only"
    );
}

/// An nccl-tests table without INFO lines has no topology; an unreadable file neither.
#[test]
fn no_init_facts_or_no_file_give_none() {
    if let Some(f) = real("009_nccltests_2.29.7_rtx5090_2rank_broadcast.txt") {
        assert_eq!(from_log_file(&f), None);
    }
    assert_eq!(summarize(&parse("# nccl-tests\n#  size count\n")), None);
    assert_eq!(
        from_log_file(Path::new("/nonexistent/nccl-debug.log")),
        None
    );
}

/// A multi-process run's rank-0 log sees one of four ranks: nodes and ranks per node
/// stay unknown rather than "1"; NET lines without /GDRDMA mean GDR was not used; one
/// process saying NVLS is available wins over one saying it is not.
#[test]
fn partial_logs_leave_unknowns_unknown() {
    let t = summarize(&parse(
        "h1:10:10 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n\
         h1:10:11 [0] NCCL INFO comm 0x1 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0x77 - Init START\n\
         h1:10:11 [0] NCCL INFO NVLS multicast support is not available on dev 0\n\
         h2:20:21 [0] NCCL INFO NVLS multicast support is available on dev 0\n\
         h1:10:12 [0] NCCL INFO Channel 00/0 : 2[0] -> 0[0] [receive] via NET/Socket/0\n\
         h1:10:12 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[0] [send] via NET/Socket/0\n",
    ))
    .unwrap();
    let c = t.comm.as_ref().unwrap();
    assert_eq!((c.nranks, c.ranks_seen, c.ranks_complete), (4, 1, 0));
    assert_eq!((c.nodes, c.ranks_per_node), (None, None));
    assert_eq!(t.gdr_used, Some(false));
    assert_eq!(t.nvls_available, Some(true));
    assert_eq!(t.nvlink, None);
    let text = lines(&t).join("\n");
    assert!(text.contains("1 of 4 ranks seen, nodes unknown"), "{text}");
    assert!(text.contains("transport NET: 2 connection(s)"), "{text}");
    assert!(text.contains("not used by the NET connections"), "{text}");
}

/// Uneven hosts (3 ranks on one, 1 on the other) give a node count but no ranks per node.
#[test]
fn uneven_nodes_have_no_ranks_per_node() {
    let mut log = String::new();
    for (r, h) in [(0, "a"), (1, "a"), (2, "a"), (3, "b")] {
        log.push_str(&format!(
            "{h}:{p}:{p} [0] NCCL INFO comm 0x{r}0 rank {r} nranks 4 cudaDev {r} busId 1000 commId 0x5 - Init COMPLETE\n",
            p = 100 + r
        ));
    }
    let c = summarize(&parse(&log)).unwrap().comm.unwrap();
    assert_eq!(
        (c.nodes, c.ranks_per_node, c.ranks_complete),
        (Some(2), None, 4)
    );
    assert_eq!(c.channels, None);
}

/// `Connected` and channel lines from a thread that never logged an Init (2.18.1 prints
/// no Init START) belong to the process's only communicator; with two communicators in
/// that process they are nobody's.
#[test]
fn unattributed_lines_join_the_only_communicator_of_their_process() {
    let one = "h:5:5 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 18000 commId 0x2 - Init COMPLETE\n\
               h:5:6 [0] NCCL INFO Connected all rings\n\
               h:5:6 [0] NCCL INFO 4 coll channels, 4 p2p channels\n";
    let c = summarize(&parse(one)).unwrap().comm.unwrap();
    assert_eq!(c.connected, ["Connected all rings"]);
    assert_eq!(c.channels, Some(4));
    let two = format!(
        "{one}h:5:7 [1] NCCL INFO comm 0x3 rank 0 nranks 1 cudaDev 1 busId 19000 commId 0x4 - Init COMPLETE\n"
    );
    let t = summarize(&parse(&two)).unwrap();
    assert_eq!(t.communicators, 2);
    let c = t.comm.unwrap();
    assert!(c.connected.is_empty() && c.channels.is_none(), "{c:?}");
}

#[test]
fn via_paths_keep_transport_and_kind() {
    for (via, want) in [
        ("NET/IB/0/GDRDMA", "NET/IB"),
        ("NET/AWS Libfabric/3/GDRDMA", "NET/AWS Libfabric"),
        ("P2P/direct pointer/read", "P2P/direct pointer"),
        ("P2P/CUMEM", "P2P/CUMEM"),
        ("SHM/direct/direct", "SHM/direct"),
        ("COLLNET", "COLLNET"),
    ] {
        assert_eq!(via_path(via), want);
    }
}

/// Redaction hashes the host names and masks the bootstrap addresses, keeping the rest.
#[test]
fn redaction_masks_hosts_and_addresses() {
    let mut t = summarize(&parse(
        "gpu-node-17:10:10 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>\n\
         gpu-node-17:10:11 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 18000 commId 0x9 - Init COMPLETE\n\
         gpu-node-17:10:11 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.1.2.3<0>\n",
    ))
    .unwrap();
    let r = Redactor::for_names(["gpu-node-17".to_string()], [10]);
    t.redact(&r);
    let json = serde_json::to_string(&t).unwrap();
    assert!(
        !json.contains("gpu-node-17") && !json.contains("10.1.2.3"),
        "{json}"
    );
    assert_eq!(
        t.comm.as_ref().unwrap().hosts[0].host,
        r.host("gpu-node-17")
    );
    assert_eq!(t.bootstrap, ["eth0:<ip><0>"]);
    assert_eq!(t.nics[0].name, "mlx5_0:1");
}
