//! The buffer-at-a-time scan ([`for_each_line_hits`] and [`LineParser::line_hits`]) against
//! the line-at-a-time parser: every line kind the parser reads, behind every launcher tag and
//! with either line ending, is kept (never passed over as holding no `NCCL `) and parses to
//! the same records, however the input falls across buffer ends; and the collector folds a
//! COLL call the parser hands it directly as it folds the call's record.

use super::{records, sample};
use crate::logs::event::Record;
use crate::logs::lines::for_each_line_hits;
use crate::logs::{for_each_line, parse_reader, Collector, LineParser, LogSummary, ParseOptions};
use std::io::BufReader;

/// One message of each kind the parser reads, after `host:pid:tid [dev] ` (or as it stands
/// when it starts with `!`: lines with a prefix of their own form, or none).
const KINDS: &[&str] = &[
    "NCCL INFO NCCL version 2.27.7+cuda12.9",
    "NCCL INFO NCCL git version master 3619159",
    "NCCL INFO NCCL_IB_HCA set by environment to mlx5_0",
    "NCCL INFO Bootstrap : Using eth0:10.20.0.5<0>",
    "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB eth0:10.0.0.1<0>",
    "NCCL INFO NET/IB : No device found.",
    "NCCL INFO Using network IB",
    "NCCL INFO GPU Direct RDMA Enabled for GPU 0 / HCA 0 (distance 3 <= 4), read 1 mode Default",
    "NCCL INFO ncclCommInitRankConfig comm 0x55aa00000010 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 17000 commId 0x54fe282d32a87d85 - Init START",
    "NCCL INFO [Rank 0] ncclCommInitRankConfig comm 0x7e0000000100 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 9000 commId 0x3030303030303030 - Init START",
    "NCCL INFO + NVL[240.0] - GPU/0-65000",
    "NCCL INFO NVLS multicast support is available on dev 0 (NVLS_NCHANNELS 16)",
    "NCCL INFO Channel 00/02 :    0   1",
    "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
    "NCCL INFO Channel 01/0 : 1[1] -> 0[0] [send] via NET/IB/0/GDRDMA",
    "NCCL INFO 2 coll channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer",
    "NCCL INFO Connected all rings",
    "NCCL INFO   Algorithm   |            Tree |            Ring |",
    "NCCL INFO     AllReduce |      8.4/  20.0 |     16.0/  60.0 |     22.0/  80.0 |      6.8/  40.0 |     14.1/  90.0 |     20.3/ 120.0",
    "NCCL INFO AllReduce: opCount 1f sendbuff 0x7f00 recvbuff 0x7f80 count 2097152 datatype 7 op 0 root 0 comm 0x55aa00000010 [nranks=2] stream 0x55b6a98daaf0",
    "NCCL INFO 1048576 Bytes -> Algo 1 proto 2 time 36.118999",
    "NCCL INFO AllGather: 4096 Bytes -> Algo 6 proto 0 time 12.000000",
    "NCCL INFO AllReduce: 8388608 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..23}",
    "NCCL INFO AllReduce [Symmetric]: 65536 Bytes -> Kernel AllReduce_AGxLL_R nchannels 4 nthreads 512",
    "NCCL INFO AllGather [Copy Engine]: 1048576 Bytes -> cudaMemcpy; CE synchronization with NVLS",
    "NCCL INFO AllGather [Hierarchical CE]: 16777216 Bytes -> RMA proxy + CE",
    "NCCL INFO comm 0x55aa00000010 rank 0 nranks 2 cudaDev 0 busId 17000 - Destroy COMPLETE",
    "transport/net_ib.cc:2453 NCCL WARN NET/IB : Got completion with error 12",
    "misc/x.cc:9 (fn) NCCL WARN w",
    "12.345 init.cc:100 NCCL TRACE trace text",
    "!dgx-a:77:78 NCCL CALL ncclCommInitRank(comm, 2, id, 0)",
    "![2026-03-03 12:11:38] dgx-a:77:78 [1] misc/y.cc:1 NCCL WARN stamped",
    "!NCCL version 2.18.3+cuda12.2",
];

/// What launchers put in front of a line.
const TAGS: &[&str] = &[
    "",
    "[1,0]<stdout>:",
    " 0: ",
    "12: ",
    "Thu Jul 18 15:41:05 2024<stdout>:",
];

fn line_of(kind: &str, tag: &str, end: &str) -> String {
    match kind.strip_prefix('!') {
        Some(whole) => format!("{tag}{whole}{end}"),
        None => format!("{tag}dgx-a:77:78 [1] {kind}{end}"),
    }
}

/// Records and NCCL-line count of `text` read `cap` bytes a buffer.
fn buffered(text: &[u8], cap: usize) -> (Vec<Record>, u64) {
    let mut p = LineParser::new();
    let (mut out, mut nccl) = (Vec::new(), 0);
    for_each_line_hits(BufReader::with_capacity(cap, text), |line, _, hits| {
        if p.line_hits(line, hits, &mut |r| out.push(r)) {
            nccl += 1;
        }
    })
    .unwrap();
    (out, nccl)
}

#[test]
fn no_line_kind_is_passed_over_behind_any_tag_or_line_end() {
    for kind in KINDS {
        for tag in TAGS {
            for end in ["\n", "\r\n", ""] {
                let text = line_of(kind, tag, end);
                let (got, nccl) = buffered(text.as_bytes(), 1 << 16);
                assert_eq!(nccl, 1, "{text:?} was passed over");
                let mut p = LineParser::new();
                let mut want = Vec::new();
                assert!(p.line(text.trim_end_matches('\n').as_bytes(), &mut |r| want
                    .push(r)));
                assert_eq!(got, want, "{text:?}");
            }
        }
    }
}

#[test]
fn lines_split_at_any_buffer_end_parse_the_same() {
    let mut text = String::new();
    for (i, kind) in KINDS.iter().enumerate() {
        text += &line_of(
            kind,
            TAGS[i % TAGS.len()],
            if i % 3 == 0 { "\r\n" } else { "\n" },
        );
        text += "#  size  count  type  redop  root  time  algbw  busbw  #wrong\n";
    }
    // Two messages glued on one line, and a last line without its newline.
    text +=
        "a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[b:2:2 [1] NCCL INFO Connected all rings\n";
    text +=
        "dgx-a:77:78 [1] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}";
    let want = records(text.as_bytes());
    let nccl_lines = (KINDS.len() + 2) as u64;
    for cap in [1, 2, 7, 64, 333, 4096, 1 << 20] {
        let (got, nccl) = buffered(text.as_bytes(), cap);
        assert_eq!(nccl, nccl_lines, "buffer {cap}");
        assert_eq!(got, want, "buffer {cap}");
    }
}

#[test]
fn the_offsets_given_are_every_nccl_in_the_line() {
    // Lines full of `L` (the byte the scan stops at), `NCCL ` at a line's start and end.
    let text =
        "NCCL x NCCL \nNCCL_DEBUG=INFO\n\nxx NCCL NCCL NCCL  \r\n NCCLNCCL \nL LNCCL LL NCCLL \
                NCCL L\nLLLL\nNCCL";
    for cap in [1, 3, 8, 1 << 10] {
        let mut lines = Vec::new();
        for_each_line_hits(
            BufReader::with_capacity(cap, text.as_bytes()),
            |line, _, hits| {
                let want: Vec<usize> = line
                    .windows(5)
                    .enumerate()
                    .filter(|(_, w)| *w == b"NCCL ")
                    .map(|(i, _)| i)
                    .collect();
                assert_eq!(
                    hits,
                    want,
                    "{:?} (buffer {cap})",
                    String::from_utf8_lossy(line)
                );
                lines.push(line.to_vec());
            },
        )
        .unwrap();
        assert_eq!(lines.len(), 8, "buffer {cap}");
    }
}

#[test]
fn lines_without_nccl_hold_nothing() {
    for line in [
        "#       size         count      type   redop    root     time   algbw   busbw #wrong",
        "NCCL_DEBUG=INFO",
        "xNCCL INFO m",
        "",
        "\r",
    ] {
        let (got, nccl) = buffered(format!("{line}\n").as_bytes(), 64);
        assert_eq!((got.len(), nccl), (0, 0), "{line:?}");
    }
}

/// The summary of `text` folded from records, as a sink that is a plain closure gets them.
fn summary_from_records(text: &[u8]) -> LogSummary {
    let mut c = Collector::new(&ParseOptions::default());
    let mut p = LineParser::new();
    c.begin_file("x");
    for_each_line(text, |line, _| {
        if p.line(line, &mut |r| c.record(r, line)) {
            c.nccl_line();
        }
    })
    .unwrap();
    c.end_file(&p);
    c.finish()
}

/// The summary as its JSON report.
fn json(s: &LogSummary) -> String {
    let f = crate::logs::findings::findings(s);
    let redact = crate::logs::redact::Redactor::none();
    crate::logs::report::json::render(&crate::logs::report::Report {
        summary: s,
        findings: &f,
        redact: &redact,
    })
}

#[test]
fn coll_calls_fold_the_same_as_their_records() {
    for name in [
        "multihost_interleaved.log",
        "v2.21_numeric.log",
        "v2.27_named_symmetric.log",
    ] {
        let text = sample(name);
        let direct = parse_reader(&text[..], "x", &ParseOptions::default()).unwrap();
        let folded = summary_from_records(&text);
        assert!(direct.files[0].colls > 0, "{name} has COLL lines");
        assert_eq!(direct.files, folded.files, "{name}");
        assert_eq!(json(&direct), json(&folded), "{name}");
    }
}
