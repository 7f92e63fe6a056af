//! Golden tests on the hand-written nccl-tests text samples of `tests/data/analysis/`: the
//! layouts and accidents the real fixtures lack.

use super::*;
use crate::result::Placement;

#[test]
fn per_iteration_columns_are_passed_over() {
    let set = sample("nccltests_2.19.6_per_iter_cols.txt");
    assert_eq!(skips(&set), Vec::<String>::new());
    assert_eq!(
        briefs(&set)[6..],
        [
            "L18 run0 cyc0 all_reduce float \"sum\" root-1 n4 out_of_place 512B/128 t=11.32 alg=0.05 bus=0.07 w=0",
            "L18 run0 cyc0 all_reduce float \"sum\" root-1 n4 in_place 512B/128 t=11.3 alg=0.05 bus=0.07 w=0",
        ]
    );
    assert_eq!(set.rows.len(), 8);
}

#[test]
fn timestamps_are_two_extra_tokens() {
    let set = sample("nccltests_2.19.6_timestamps.txt");
    assert_eq!((set.rows.len(), set.skipped.len()), (6, 0));
    assert_eq!(
        brief(&set.rows[5]),
        "L20 run0 cyc0 all_gather float \"none\" root-1 n8 in_place 1048576B/32768 t=24.75 alg=42.37 bus=37.07 w=0"
    );
}

#[test]
fn cputime_tables_have_no_latency_and_are_skipped() {
    let set = sample("nccltests_2.19.6_cputime.txt");
    assert!(set.rows.is_empty());
    assert_eq!(set.skipped.len(), 3);
    assert!(set.skipped.iter().all(|s| s.reason.contains("cputime")));
}

#[test]
fn three_cycles_in_one_table() {
    let set = sample("nccltests_2.19.6_cycles.txt");
    assert_eq!((set.rows.len(), set.skipped.len()), (18, 0));
    let cycles: Vec<(u32, u64)> = set
        .rows
        .iter()
        .filter(|r| r.placement == Placement::OutOfPlace)
        .map(|r| (r.cycle, r.bytes))
        .collect();
    let expected: Vec<(u32, u64)> = (0..3)
        .flat_map(|c| [1024, 4096, 16384].map(|b| (c, b)))
        .collect();
    assert_eq!(cycles, expected);
    assert_eq!(set.rows[17].time_us, 25.0);
}

#[test]
fn concatenated_runs_and_na_in_place() {
    let set = sample("nccltests_two_runs.txt");
    assert_eq!(skips(&set), Vec::<String>::new());
    assert_eq!(
        briefs(&set),
        [
            "L12 run0 cyc0 sendrecv float \"sum\" root-1 n2 out_of_place 4096B/1024 t=9.5 alg=0.43 bus=0.43 w=0",
            "L12 run0 cyc0 sendrecv float \"sum\" root-1 n2 in_place 4096B/1024 t=9.5 alg=0.43 bus=0.43 w=-",
            "L13 run0 cyc0 sendrecv float \"sum\" root-1 n2 out_of_place 65536B/16384 t=12.75 alg=5.14 bus=5.14 w=0",
            "L13 run0 cyc0 sendrecv float \"sum\" root-1 n2 in_place 65536B/16384 t=12.75 alg=5.14 bus=5.14 w=-",
            // The second run predates `Collective test starting`: no collective, and its
            // legacy `error` column holds a deviation.
            "L32 run1 cyc0 ? float \"none\" root1 n4 out_of_place 4096B/1024 t=15.2 alg=0.27 bus=0.27 w=0",
            "L32 run1 cyc0 ? float \"none\" root1 n4 in_place 4096B/1024 t=15.3 alg=0.27 bus=0.27 w=0.0000001",
            "L33 run1 cyc0 ? float \"none\" root1 n4 out_of_place 65536B/16384 t=22.4 alg=2.93 bus=2.93 w=0",
            "L33 run1 cyc0 ? float \"none\" root1 n4 in_place 65536B/16384 t=22.5 alg=2.93 bus=2.93 w=0.0000001",
        ]
    );
}

#[test]
fn hypercube_rows_lack_the_op_token() {
    let set = sample("nccltests_2.19.6_hypercube.txt");
    assert_eq!((set.rows.len(), set.skipped.len()), (6, 0));
    assert_eq!(
        brief(&set.rows[2]),
        "L15 run0 cyc0 hypercube float \"\" root-1 n4 out_of_place 8192B/512 t=19.75 alg=0.41 bus=0.31 w=0"
    );
}

#[test]
fn every_op_of_o_all_with_bfloat16() {
    let set = sample("nccltests_2.19.6_ops_all.txt");
    assert_eq!((set.rows.len(), set.skipped.len()), (24, 0));
    let mut ops: Vec<&str> = set.rows.iter().map(|r| r.op.as_str()).collect();
    ops.dedup();
    assert_eq!(ops, ["sum", "prod", "max", "min", "avg", "mulsum"]);
    // Sizes restart for each op, but that is a new (op) sequence, not a new cycle.
    assert!(set
        .rows
        .iter()
        .all(|r| r.cycle == 0 && r.dtype == "bfloat16"));
}

#[test]
fn crlf_line_endings_and_f8() {
    let bytes = std::fs::read(sample_path("nccltests_2.19.6_crlf.txt")).expect("sample");
    assert!(
        bytes.windows(2).any(|w| w == b"\r\n"),
        "the sample must keep CRLF"
    );
    let set = sample("nccltests_2.19.6_crlf.txt");
    assert_eq!((set.rows.len(), set.skipped.len()), (6, 0));
    assert_eq!(
        brief(&set.rows[5]),
        "L14 run0 cyc0 all_reduce f8e4m3 \"max\" root-1 n2 in_place 4096B/4096 t=8.5 alg=0.48 bus=0.48 w=0"
    );
}

#[test]
fn nccl_messages_inside_the_table() {
    let set = sample("nccltests_interleaved_info.txt");
    let sizes: Vec<u64> = set.rows.iter().map(|r| r.bytes).collect();
    // 4096 is put back together from three fragments; 65536 never gets its measurements.
    assert_eq!(
        sizes,
        [1024, 1024, 4096, 4096, 16384, 16384, 262144, 262144, 1048576, 1048576]
    );
    assert_eq!(
        briefs(&set)[2..4],
        [
            "L15 run0 cyc0 all_reduce float \"sum\" root-1 n2 out_of_place 4096B/1024 t=15 alg=0.27 bus=0.27 w=0",
            "L15 run0 cyc0 all_reduce float \"sum\" root-1 n2 in_place 4096B/1024 t=14.75 alg=0.28 bus=0.28 w=0",
        ]
    );
    // A host missing from the device list, glued to `#wrong`, still leaves `0` behind.
    assert_eq!(set.rows[9].wrong, Some(0.0));
    assert_eq!(
        skips(&set),
        ["22: incomplete row (5 fields): output cut off or interleaved"]
    );
}

#[test]
fn a_truncated_last_line_is_counted() {
    let set = sample("nccltests_truncated.txt");
    assert_eq!(set.rows.len(), 4);
    assert_eq!(
        skips(&set),
        ["14: incomplete row (10 fields): output cut off or interleaved"]
    );
}

#[test]
fn unreadable_rows_are_counted_with_reasons() {
    let set = sample("nccltests_bad_rows.txt");
    assert_eq!(
        skips(&set),
        [
            "13: unknown dtype `fp8`",
            "14: 14 fields, the column header has 13",
            "15: in_place: busbw `oops` is not a number",
            "16: row fragment without its size, count and type columns",
        ]
    );
    // The out-of-place half of line 15 is fine and kept.
    let lines: Vec<(usize, Placement)> = set
        .rows
        .iter()
        .map(|r| (r.source.line, r.placement))
        .collect();
    assert_eq!(
        lines,
        [
            (12, Placement::OutOfPlace),
            (12, Placement::InPlace),
            (15, Placement::OutOfPlace),
            (17, Placement::OutOfPlace),
            (17, Placement::InPlace),
        ]
    );
}
