//! Golden tests of the text table: the example run of `testdata` byte for byte (`REFERENCE`),
//! then one test per variant (-C, -S, -I/-K, N/A, hypercube, -z, -p, reduced maxBytes,
//! footers).

mod testdata;

use super::TextSink;
use crate::bench::output::testdata::{drive, iter_stats, meta, rows, summary};
use crate::bench::output::Sink;
use crate::core::collective::Collective;
use crate::result::{BackendKind, RunMeta, Summary};

fn render(meta: &RunMeta, rows: &[crate::result::Row], summary: &Summary) -> String {
    let mut sink = TextSink::new(Vec::new());
    drive(&mut sink, meta, rows, summary);
    String::from_utf8(sink.into_inner()).unwrap()
}

/// The lines of `text` starting with the column header's first line (the one after the `#`
/// that precedes it), up to but excluding the footer.
fn table(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("out-of-place"))
        .unwrap();
    let end = lines
        .iter()
        .position(|l| l.starts_with("# Out of bounds"))
        .unwrap();
    lines[start..end].to_vec()
}

const REFERENCE: &str = concat!(
    "# ncclbench version 0.1.0 nccl-headers=22807 nccl-library=22807\n",
    "# Collective test starting: all_reduce_perf\n",
    "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n",
    "#\n",
    "# Using devices\n",
    "#  Rank  0 Group  0 Pid  12345 on     node01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n",
    "#  Rank  1 Group  0 Pid  12345 on     node01 device  1 [0000:28:00] NVIDIA H100 80GB HBM3\n",
    "#  Rank  2 Group  0 Pid  12345 on     node01 device  2 [0000:38:00] NVIDIA H100 80GB HBM3\n",
    "#  Rank  3 Group  0 Pid  12345 on     node01 device  3 [0000:48:00] NVIDIA H100 80GB HBM3\n",
    "#  Rank  4 Group  0 Pid  12345 on     node01 device  4 [0000:58:00] NVIDIA H100 80GB HBM3\n",
    "#  Rank  5 Group  0 Pid  12345 on     node01 device  5 [0000:68:00] NVIDIA H100 80GB HBM3\n",
    "#  Rank  6 Group  0 Pid  12345 on     node01 device  6 [0000:78:00] NVIDIA H100 80GB HBM3\n",
    "#  Rank  7 Group  0 Pid  12345 on     node01 device  7 [0000:88:00] NVIDIA H100 80GB HBM3\n",
    "#\n",
    "#                                                              out-of-place                       in-place          \n",
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n",
    "           8             2     float     sum      -1    12.35    0.00    0.00       0    11.90    0.00    0.00       0\n",
    "   134217728      33554432     float     sum      -1  1234.56  108.72  190.25       0  1230.00  109.12  190.96       0\n",
    "# Out of bounds values : 0 OK\n",
    "# Avg bus bandwidth    : 95.3009 \n",
    "#\n",
    "# Collective test concluded: all_reduce_perf\n",
    "#\n",
    "\n",
);

#[test]
fn reference_example_is_reproduced_byte_for_byte() {
    assert_eq!(render(&meta(), &rows(), &summary()), REFERENCE);
}

#[test]
fn version_line_omits_nccl_versions_the_backend_does_not_know() {
    let mut m = meta();
    m.nccl_headers = None;
    m.nccl_library = None;
    let out = render(&m, &rows(), &summary());
    assert_eq!(out.lines().next(), Some("# ncclbench version 0.1.0"));
}

#[test]
fn a_row_is_visible_in_pieces_while_it_is_measured() {
    let mut sink = TextSink::new(Vec::new());
    sink.begin(&meta()).unwrap();
    let r = &rows()[1];
    let before = sink.out.len();
    sink.row_started(&r.key).unwrap();
    let started = String::from_utf8(sink.out[before..].to_vec()).unwrap();
    assert_eq!(
        started,
        "   134217728      33554432     float     sum      -1"
    );
    sink.placement_done(
        &r.key,
        crate::result::Placement::OutOfPlace,
        &r.out_of_place,
    )
    .unwrap();
    let tail = String::from_utf8(sink.out[before..].to_vec()).unwrap();
    assert!(
        tail.ends_with("  1234.56  108.72  190.25       0"),
        "{tail:?}"
    );
    assert!(!tail.contains('\n'));
}

#[test]
fn cputime_flag_renames_the_time_columns_and_prints_cputime() {
    let mut m = meta();
    m.report_cputime = true;
    let out = render(&m, &rows(), &summary());
    assert_eq!(
        table(&out)[1..],
        [
            "#       size         count      type   redop    root  cputime   algbw   busbw  #wrong  cputime   algbw   busbw  #wrong ",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ",
            "           8             2     float     sum      -1     1.23    0.00    0.00       0     1.19    0.00    0.00       0",
            "   134217728      33554432     float     sum      -1   123.46  108.72  190.25       0   123.00  109.12  190.96       0",
        ]
    );
}

#[test]
fn timestamp_flag_adds_a_right_aligned_column_after_the_in_place_part() {
    let mut m = meta();
    m.report_timestamps = true;
    let out = render(&m, &rows()[..1], &summary());
    assert_eq!(
        table(&out),
        [
            "#                                                              out-of-place                       in-place          ",
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong           timestamp",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)           %Y-%m-%d %H:%M:%S",
            "           8             2     float     sum      -1    12.35    0.00    0.00       0    11.90    0.00    0.00       0  2026-07-09 16:03:22",
        ]
    );
}

#[test]
fn per_iteration_flag_adds_four_columns_per_placement_and_the_skip_note() {
    let mut m = meta();
    m.per_iter = true;
    m.per_iter_skip = 1;
    let mut rs = rows();
    rs.truncate(1);
    rs[0].out_of_place.iter = Some(iter_stats(1));
    rs[0].in_place.iter = Some(iter_stats(1));
    let out = render(&m, &rs, &summary());
    assert!(out.contains(
        "\n# Per-Iteration Report: CUDA event timing; i_* uses max over process rows; summary skips first 1 iterations \n#\n# Using devices\n"
    ));
    assert_eq!(
        table(&out),
        [
            "#                                                                 out-of-place (+ per-iteration)                                in-place (+ per-iteration)",
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv% ",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)     (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%) ",
            "           8             2     float     sum      -1    12.35    0.00    0.00       0    11.50    14.25    14.25     6.00    11.90    0.00    0.00       0    11.50    14.25    14.25     6.00",
        ]
    );
}

#[test]
fn per_iteration_note_has_no_skip_part_without_skipping() {
    let mut m = meta();
    m.per_iter = true;
    let out = render(&m, &[], &summary());
    assert!(out.contains(
        "\n# Per-Iteration Report: CUDA event timing; i_* uses max over process rows \n"
    ));
}

#[test]
fn per_iteration_note_names_host_clock_timing_off_the_nccl_backend() {
    for backend in [BackendKind::Host, BackendKind::Mpi] {
        let mut m = meta();
        m.per_iter = true;
        m.backend = backend;
        let out = render(&m, &[], &summary());
        assert!(
            out.contains("\n# Per-Iteration Report: host clock timing (no CUDA events on this backend); i_* uses max over process rows \n"),
            "{backend}: {out}"
        );
        assert!(!out.contains("CUDA event timing"), "{backend}");
    }
}

#[test]
fn unchecked_placements_print_na_and_hypercube_has_a_blank_op_column() {
    let mut rs = rows();
    rs.truncate(1);
    rs[0].key.collective = Collective::SendRecv;
    rs[0].in_place.wrong = None;
    let mut hc = rs[0].clone();
    hc.key.collective = Collective::Hypercube;
    hc.in_place.wrong = Some(12);
    let out = render(&meta(), &[rs[0].clone(), hc], &summary());
    assert_eq!(
        table(&out)[3..],
        [
            "           8             2     float     sum      -1    12.35    0.00    0.00       0    11.90    0.00    0.00    N/A",
            "           8             2     float              -1    12.35    0.00    0.00       0    11.90    0.00    0.00      12",
        ]
    );
}

#[test]
fn rooted_and_data_movement_rows_show_root_and_none() {
    let mut rs = rows();
    rs.truncate(1);
    rs[0].key.collective = Collective::Broadcast;
    rs[0].key.root = Some(3);
    let out = render(&meta(), &rs, &summary());
    assert!(table(&out)[3].starts_with("           8             2     float    none       3  "));
}

#[test]
fn option_notes_follow_the_parameter_line_each_with_a_trailing_space() {
    let notes = [
        (1, "# Blocking Enabled: wait and barrier after each inner iteration (-m) "),
        (2, "# Blocking Enabled: wait after each inner iteration (-m), no barrier "),
        (3, "# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier "),
    ];
    for (z, note) in notes {
        let mut m = meta();
        m.blocking = z;
        m.parallel_init = true;
        m.backend_lines = vec!["# host backend: not NCCL".into()];
        let out = render(&m, &[], &summary());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[3..7],
            [
                note,
                "# Parallel Init Enabled: threads call into NcclInitRank concurrently ",
                "# host backend: not NCCL",
                "#"
            ],
            "-z {z}"
        );
    }
}

#[test]
fn reduced_max_bytes_line_sits_between_devices_and_table() {
    let mut m = meta();
    m.devices.truncate(1);
    m.reduced_max_bytes = Some(26549638485);
    let out = render(&m, &[], &summary());
    assert!(out.contains(concat!(
        "NVIDIA H100 80GB HBM3\n",
        "#\n",
        "# Reducing maxBytes to 26549638485 due to memory limitation\n",
        "#\n",
        "#                    "
    )));
}

#[test]
fn failing_footer_with_memory_and_error_lines() {
    let mut s = summary();
    s.out_of_bounds = 2;
    s.min_bw = Some(200.0);
    s.memory = Some("Initialization 1.23 GB | Total  1.61 GB".into());
    s.error = Some("unhandled cuda error".into());
    let out = render(&meta(), &rows(), &s);
    assert!(out.ends_with(concat!(
        "       0\n",
        "# Out of bounds values : 2 FAILED\n",
        "# Avg bus bandwidth    : 95.3009 FAILED\n",
        "#\n",
        "# Collective test failed: all_reduce_perf\n",
        "# GPU memory usage     : Initialization 1.23 GB | Total  1.61 GB\n",
        "#\n",
        "# error: unhandled cuda error\n",
    )));
}

#[test]
fn bandwidth_above_ninety_percent_of_threshold_is_ok() {
    let mut s = summary();
    s.min_bw = Some(100.0);
    let out = render(&meta(), &rows(), &s);
    assert!(out.contains("\n# Avg bus bandwidth    : 95.3009 OK\n"));
}

#[test]
fn run_without_rows_prints_notice_and_nan_average() {
    let mut sink = TextSink::new(Vec::new());
    let mut s = summary();
    s.avg_busbw = f64::NAN;
    sink.begin(&meta()).unwrap();
    sink.notice("nRanks 6 is not a power of 2, skipping")
        .unwrap();
    sink.finish(&s).unwrap();
    let out = String::from_utf8(sink.into_inner()).unwrap();
    assert!(out.ends_with(concat!(
        "(GB/s)         \n",
        "nRanks 6 is not a power of 2, skipping\n",
        "# Out of bounds values : 0 OK\n",
        "# Avg bus bandwidth    : nan \n",
        "#\n",
        "# Collective test concluded: all_reduce_perf\n",
        "#\n",
        "\n",
    )));
}

#[test]
fn a_run_that_fails_inside_a_row_ends_its_line_and_says_failed() {
    let mut sink = TextSink::new(Vec::new());
    sink.begin(&meta()).unwrap();
    let r = &rows()[1];
    sink.row_started(&r.key).unwrap();
    let p = crate::result::Placement::OutOfPlace;
    sink.placement_done(&r.key, p, &r.out_of_place).unwrap();
    let mut s = summary();
    s.error = Some("writing output: x.csv: File too large".into());
    sink.finish(&s).unwrap();
    let out = String::from_utf8(sink.into_inner()).unwrap();
    assert!(
        out.contains("  1234.56  108.72  190.25       0\n# Out of bounds values : 0 INCOMPLETE\n"),
        "{out}"
    );
    assert!(
        out.contains("# Collective test failed: all_reduce_perf\n"),
        "{out}"
    );
    assert!(!out.contains("concluded"), "{out}");
}
