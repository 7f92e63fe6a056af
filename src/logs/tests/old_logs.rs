//! Logs of old NCCL (2.21 and older) and facts a log may not show: the bare version line
//! under every launcher prefix, communicators without `Init START`, and findings that must
//! separate "absent" from "not shown". Inputs written from the documented line formats.

use super::super::findings::{findings, Severity};
use super::super::redact::Redactor;
use super::super::report::{json, Report};
use super::super::{parse_files, parse_reader, ParseOptions};
use serde_json::Value;

fn doc(log: &str) -> Value {
    let s = parse_reader(log.as_bytes(), "t.log", &ParseOptions::default()).unwrap();
    let f = findings(&s);
    json::document(&Report {
        summary: &s,
        findings: &f,
        redact: &Redactor::none(),
    })
}

fn host_names(d: &Value) -> Vec<&str> {
    d["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect()
}

/// Rank 0 on `a`, rank 1 on `b`, 2.20-style Init lines, the bare version line (as 2.18-2.21
/// print it, rank 0 only) behind `tag`.
fn two_hosts_bare_version(tag: &str, version: &str) -> String {
    format!(
        "+ mpirun -np 2 ./all_reduce_perf -b 8 -e 1M\n\
         # nThread 1 nGpus 1 minBytes 8 maxBytes 1048576\n\
         {tag}NCCL version {version}\n\
         {tag}a:11:11 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n\
         {tag}a:11:11 [0] NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0xabc - Init START\n\
         {tag}b:22:22 [0] NCCL INFO comm 0x20 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0xabc - Init START\n\
         {tag}a:11:11 [0] NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0xabc - Init COMPLETE\n\
         {tag}b:22:22 [0] NCCL INFO comm 0x20 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0xabc - Init COMPLETE\n"
    )
}

#[test]
fn the_bare_version_line_goes_to_rank_0s_host_under_every_prefix() {
    for tag in [
        "",
        "[1,0]<stdout>:",
        "0: ",
        "Thu Jul 18 15:41:05 2024<stdout>:",
    ] {
        for v in [
            "2.18.3+cuda12.2",
            "2.19.4+cuda12.3",
            "2.20.3+cuda12.2",
            "2.21.5+cuda12.4",
        ] {
            let d = doc(&two_hosts_bare_version(tag, v));
            assert_eq!(d["nccl_version"], v, "{tag:?} {v}");
            assert_eq!(host_names(&d), ["a", "b"], "no phantom host ({tag:?})");
            assert_eq!(d["hosts"][0]["versions"][0], v, "{tag:?}");
            assert_eq!(d["hosts"][1]["versions"].as_array().unwrap().len(), 0);
            assert_eq!(d["unattributed_versions"].as_array().map(Vec::len), Some(0));
        }
    }
}

#[test]
fn a_bare_version_with_no_process_in_its_file_is_a_version_of_no_host() {
    // The stdout of a run whose INFO lines went to NCCL_DEBUG_FILE: only the bare line.
    let d = doc("NCCL version 2.21.5+cuda12.4\n#  Rank  0 Group  0 Pid  11 on a device 0\n");
    assert_eq!(d["nccl_version"], "2.21.5+cuda12.4");
    assert_eq!(d["hosts"].as_array().map(Vec::len), Some(0));
    assert_eq!(d["unattributed_versions"][0]["line"], 1);
    // Per-process files next to it: the hosts are theirs, the version still the log's.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stdout.txt");
    let dbg = dir.path().join("a.11");
    std::fs::write(&out, "NCCL version 2.21.5+cuda12.4\n").unwrap();
    std::fs::write(&dbg, "a:11:11 [0] NCCL INFO Using network IB\n").unwrap();
    let s = parse_files(&[&out, &dbg], &ParseOptions::default()).unwrap();
    assert_eq!(
        s.versions().into_iter().collect::<Vec<_>>(),
        ["2.21.5+cuda12.4"]
    );
    assert_eq!(s.hosts.keys().map(|h| &**h).collect::<Vec<_>>(), ["a"]);
    // A single host in the file owns it even without Init lines.
    let d = doc("NCCL version 2.20.3+cuda12.2\nh:5:5 [0] NCCL INFO Using network Socket\n");
    assert_eq!(host_names(&d), ["h"]);
    assert_eq!(d["hosts"][0]["versions"][0], "2.20.3+cuda12.2");
}

/// NCCL 2.18.1 and older: no `Init START`; nccl-tests inits each GPU's communicator on its
/// own thread inside a group, which logs the channel lines and finally `Init COMPLETE`.
const NO_INIT_START: &str = "\
NCCL version 2.18.1+cuda12.1
n:7:7 [0] NCCL INFO Bootstrap : Using ib0:192.168.7.1<0>
n:7:30 [0] NCCL INFO Channel 00/02 :    0   1
n:7:31 [1] NCCL INFO Channel 00/0 : 1[3d000] -> 0[1b000] via P2P/IPC
n:7:30 [0] NCCL INFO Channel 00/0 : 0[1b000] -> 1[3d000] via P2P/IPC
n:7:30 [0] NCCL INFO Channel 01/0 : 0[1b000] -> 1[3d000] via P2P/IPC
n:7:31 [1] NCCL INFO Channel 01/0 : 1[3d000] -> 0[1b000] via P2P/IPC
n:7:30 [0] NCCL INFO Connected all rings
n:7:31 [1] NCCL INFO Connected all rings
n:7:30 [0] NCCL INFO 2 coll channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer
n:7:30 [0] NCCL INFO comm 0xa0 rank 0 nranks 2 cudaDev 0 busId 1b000 commId 0x77 - Init COMPLETE
n:7:31 [1] NCCL INFO comm 0xb0 rank 1 nranks 2 cudaDev 1 busId 3d000 commId 0x77 - Init COMPLETE
n:7:40 [0] NCCL INFO comm 0xc0 rank 0 nranks 1 cudaDev 0 busId 1b000 commId 0x88 - Init COMPLETE
n:7:7 [1] NCCL INFO Channel 02/1 : 1[3d000] -> 0[1b000] via P2P/IPC/read
n:7:7 [1] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 8 datatype 7 op 0 root 0 comm 0xb0 [nranks=2] stream 0x3
";

#[test]
fn without_init_start_channel_lines_belong_to_the_communicator_their_thread_names() {
    let d = doc(NO_INIT_START);
    let comms = d["communicators"].as_array().unwrap();
    let names: Vec<&str> = comms.iter().map(|c| c["comm"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["0x0000000000000077", "0x0000000000000088"],
        "no invented communicator"
    );
    assert_eq!(
        comms[0]["channels"], 3,
        "ring order 2, and channel 02 of the later line"
    );
    assert_eq!(comms[0]["connected"][0], "Connected all rings");
    assert_eq!(
        (
            comms[1]["channels"].as_u64(),
            comms[1]["connected"].as_array().map(Vec::len)
        ),
        (Some(0), Some(0))
    );
    assert_eq!(d["hosts"][0]["transports"]["P2P"], 5);
    assert_eq!(d["warnings"].as_array().map(Vec::len), Some(0));
}

#[test]
fn channel_lines_no_line_claims_go_to_the_only_communicator_or_are_counted() {
    // Cut before Init COMPLETE, one communicator named earlier by another thread.
    let one = "h:1:1 [0] NCCL INFO comm 0x5 rank 0 nranks 2 cudaDev 0 busId 1b000 commId 0x9 - Init COMPLETE\n\
               h:1:8 [0] NCCL INFO Channel 03/0 : 0[0] -> 1[1] via P2P/IPC\n";
    let d = doc(one);
    assert_eq!(d["communicators"].as_array().map(Vec::len), Some(1));
    assert_eq!(d["communicators"][0]["channels"], 4);
    // Two communicators in the process: which one is unknown, so it is said, not guessed.
    let two = format!("{one}h:1:1 [1] NCCL INFO comm 0x6 rank 1 nranks 2 cudaDev 1 busId 3d000 commId 0x9 - Init COMPLETE\n");
    let two = two.replace("Channel 03/0", "Channel 05/0");
    let d = doc(&two);
    assert_eq!(d["communicators"].as_array().map(Vec::len), Some(1));
    assert_eq!(d["communicators"][0]["channels"], 0);
    assert_eq!(d["warnings"][0]["kind"], "unattributed_channel_lines");
    assert_eq!(
        (
            d["warnings"][0]["count"].as_u64(),
            d["warnings"][0]["first_line"].as_u64()
        ),
        (Some(1), Some(2))
    );
}

const GDR_OFF: &str = "GPU Direct RDMA Disabled for GPU 1b000 / HCA 0 (distance 7 > 4)";

#[test]
fn gdr_disabled_is_raised_only_where_network_traffic_may_exist() {
    let rule = |log: &str| {
        let s = parse_reader(log.as_bytes(), "t", &ParseOptions::default()).unwrap();
        findings(&s)
            .into_iter()
            .find(|f| f.rule == "gdr-disabled")
            .map(|f| f.severity)
    };
    // One host, both ranks' Init lines, P2P only: no inter-node traffic to stage.
    let single = format!(
        "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1b000 commId 0x2 - Init COMPLETE\n\
         h:1:1 [1] NCCL INFO comm 0x3 rank 1 nranks 2 cudaDev 1 busId 3d000 commId 0x2 - Init COMPLETE\n\
         h:1:1 [0] NCCL INFO {GDR_OFF}\n"
    );
    assert_eq!(rule(&single), None);
    let p2p_only = format!("h:1:1 [0] NCCL INFO {GDR_OFF}\nh:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n");
    assert_eq!(rule(&p2p_only), None);
    // NET connections on the host: it matters.
    let net =
        format!("{p2p_only}h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[0] [send] via NET/IB/0\n");
    assert_eq!(rule(&net), Some(Severity::Warning));
    // A communicator spanning two hosts.
    let multi = format!(
        "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1b000 commId 0x2 - Init COMPLETE\n\
         b:1:1 [0] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 0 busId 1b000 commId 0x2 - Init COMPLETE\n\
         a:1:1 [0] NCCL INFO {GDR_OFF}\n"
    );
    assert_eq!(rule(&multi), Some(Severity::Warning));
    // Rank 0's log of a 16-rank job without connection lines: not shown, so context only.
    let partial = format!(
        "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 16 cudaDev 0 busId 1b000 commId 0x2 - Init COMPLETE\n\
         a:1:1 [0] NCCL INFO {GDR_OFF}\n"
    );
    assert_eq!(rule(&partial), Some(Severity::Info));
}

#[test]
fn nvlink_is_null_unless_the_log_shows_the_topology() {
    let nvlink =
        |msg: &str| doc(&format!("h:1:1 [0] NCCL INFO {msg}\n"))["hosts"][0]["nvlink"].clone();
    assert_eq!(nvlink("Using network IB"), Value::Null);
    assert_eq!(
        nvlink("=== System : maxBw 24.0 totalBw 24.0 ==="),
        Value::Bool(false)
    );
    assert_eq!(nvlink("Pattern 4, crossNic 0, nChannels 2, bw 20.000000/20.000000, type PIX/PIX, sameChannels 1"), Value::Bool(false));
    assert_eq!(nvlink("Pattern 4, crossNic 0, nChannels 12, bw 40.000000/40.000000, type NVL/PIX, sameChannels 1"), Value::Bool(true));
    assert_eq!(
        nvlink("              + NVL[240.0] - GPU/0-65000"),
        Value::Bool(true)
    );
    // A dump without NVLink, then an NVLink line: NVLink is there.
    let d = doc("h:1:1 [0] NCCL INFO === System : maxBw 240.0 totalBw 240.0 ===\nh:1:1 [0] NCCL INFO GPU/0-17000 :GPU/0-65000 (1/240.0/NVL)\n");
    assert_eq!(d["hosts"][0]["nvlink"], Value::Bool(true));
}
