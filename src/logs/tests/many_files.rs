//! Per-process files (`NCCL_DEBUG_FILE=%h.%p`) parsed in parallel give the summary one pass
//! over the same files in the same order gives, whatever the thread count.

use super::super::findings::findings;
use super::super::redact::Redactor;
use super::super::report::{json, Report};
use super::super::{add_reader, parse_files, Collector, LogSummary, ParseOptions};
use std::path::PathBuf;

fn doc(s: &LogSummary) -> serde_json::Value {
    let f = findings(s);
    json::document(&Report {
        summary: s,
        findings: &f,
        redact: &Redactor::none(),
    })
}

/// One process's file: rank `r` of 16 on host `r / 8`, its init, connections, calls and (rank
/// 0 only) decisions, with a WARN on odd ranks.
fn process_log(r: u32) -> String {
    let (h, pid) = (format!("node{}", r / 8), 100 + r);
    let mut s = format!(
        "{h}:{pid}:{pid} [0] NCCL INFO NCCL version 2.23.4+cuda12.6\n\
         {h}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using eth0:10.0.0.{r}<0>\n\
         {h}:{pid}:{pid} [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0\n\
         {h}:{pid}:{pid} [0] NCCL INFO ncclCommInitRank comm 0x{r:x}0 rank {r} nranks 16 cudaDev {} nvmlDev {} busId {:x}000 commId 0xfeed - Init START\n\
         {h}:{pid}:{pid} [0] NCCL INFO Channel 00/0 : {r}[0] -> {}[0] via P2P/CUMEM\n\
         {h}:{pid}:{pid} [0] NCCL INFO Channel 01/0 : {r}[0] -> {}[0] [send] via NET/IB/0/GDRDMA\n\
         {h}:{pid}:{pid} [0] NCCL INFO Connected all rings\n\
         {h}:{pid}:{pid} [0] NCCL INFO ncclCommInitRank comm 0x{r:x}0 rank {r} nranks 16 cudaDev {} nvmlDev {} busId {:x}000 commId 0xfeed - Init COMPLETE\n",
        r % 8, r % 8, 0x10 + r % 8, (r + 1) % 16, (r + 8) % 16, r % 8, r % 8, 0x10 + r % 8
    );
    for op in 0..20u32 {
        s += &format!("{h}:{pid}:{pid} [0] NCCL INFO AllReduce: opCount {op:x} sendbuff 0x1 recvbuff 0x2 count {} datatype 7 op 0 root 0 comm 0x{r:x}0 [nranks=16] stream 0x3\n", 1u32 << op);
        if r == 0 {
            let algo = if op < 10 { "Tree" } else { "Ring" };
            s += &format!(
                "{h}:{pid}:{pid} [0] NCCL INFO AllReduce: {} Bytes -> Algo {} proto 2 time 1.5\n",
                4u64 << op,
                if algo == "Tree" { 0 } else { 1 }
            );
        }
    }
    if r % 2 == 1 {
        s += &format!("{h}:{pid}:{pid} [0] misc/socket.cc:484 NCCL WARN socket retry {r}\n");
    }
    s
}

#[test]
fn parallel_parsing_of_per_process_files_equals_one_pass_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = (0..16)
        .map(|r| {
            let p = dir.path().join(format!("node{}.{}", r / 8, 100 + r));
            std::fs::write(&p, process_log(r)).unwrap();
            p
        })
        .collect();
    let opts = ParseOptions::default();
    let mut one_pass = Collector::new(&opts);
    for p in &paths {
        let f = std::fs::File::open(p).unwrap();
        add_reader(
            &mut one_pass,
            std::io::BufReader::new(f),
            &p.display().to_string(),
        )
        .unwrap();
    }
    let want = doc(&one_pass.finish());
    assert_eq!(want["communicators"].as_array().map(Vec::len), Some(1));
    assert_eq!(want["communicators"][0]["init_complete"], 16);
    assert_eq!(want["hosts"].as_array().map(Vec::len), Some(2));
    for threads in [1, 2, 5] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let got = pool.install(|| parse_files(&paths, &opts).unwrap());
        assert_eq!(doc(&got), want, "{threads} thread(s)");
    }
    // The first unreadable file in order is the error, as in one pass.
    let mut bad = paths.clone();
    bad.insert(3, dir.path().join("missing-a"));
    bad.push(dir.path().join("missing-b"));
    let e = parse_files(&bad, &opts).unwrap_err().to_string();
    assert!(e.contains("missing-a"), "{e}");
}

#[test]
fn a_pointer_known_by_commid_in_another_file_joins_that_communicator() {
    // COLL lines in one file, the same process's Init line (with the commId) in another.
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("calls");
    let b = dir.path().join("init");
    std::fs::write(&a, "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 0 comm 0x50 [nranks=2] stream 0x3\n").unwrap();
    std::fs::write(&b, "h:1:1 [0] NCCL INFO comm 0x50 rank 0 nranks 2 cudaDev 0 busId 1b000 commId 0xab - Init COMPLETE\n").unwrap();
    let d = doc(&parse_files(&[&a, &b], &ParseOptions::default()).unwrap());
    let comms = d["communicators"].as_array().unwrap();
    assert_eq!(comms.len(), 1, "{comms:?}");
    assert_eq!(comms[0]["colls"]["AllReduce"], 1);
}
