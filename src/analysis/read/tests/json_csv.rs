//! Golden tests on the JSON samples (nccl-tests versions 1-3) and on one host-backend run
//! saved as text, CSV and JSON, which must read as the same rows.

use super::*;
use crate::analysis::input::Tuning;

#[test]
fn nccl_tests_json_v1_one_process_eight_gpus() {
    let set = sample("nccltests_v1_all_reduce.json");
    assert_eq!((set.rows.len(), set.skipped.len()), (6, 0));
    assert_eq!(
        brief(&set.rows[5]),
        // `.\/build\/all_reduce_perf` names the collective; 1 device entry x 8 GPUs = 8 ranks.
        "L3 run0 cyc0 all_reduce bfloat16 \"avg\" root-1 n8 in_place 4194304B/2097152 t=60.5 alg=69.905067 bus=122.333867 w=0"
    );
}

#[test]
fn nccl_tests_json_v2_per_iteration_and_null_nwrong() {
    let set = sample("nccltests_v2_alltoall_per_iter.json");
    assert_eq!(
        briefs(&set),
        [
            "L1 run0 cyc0 alltoall float \"none\" root-1 n2 out_of_place 8192B/1024 t=30 alg=0.273067 bus=0.136533 w=0",
            "L1 run0 cyc0 alltoall float \"none\" root-1 n2 in_place 8192B/1024 t=31 alg=0.273067 bus=0.136533 w=-",
            "L2 run0 cyc0 alltoall float \"none\" root-1 n2 out_of_place 131072B/16384 t=41.5 alg=3.158361 bus=1.579181 w=0",
            "L2 run0 cyc0 alltoall float \"none\" root-1 n2 in_place 131072B/16384 t=42.5 alg=3.158361 bus=1.579181 w=-",
        ]
    );
}

#[test]
fn nccl_tests_json_v3_cycles_nan_and_threads() {
    let set = sample("nccltests_v3_broadcast_cycles.json");
    assert_eq!((set.rows.len(), set.skipped.len()), (12, 0));
    // 1 process entry x 2 GPUs x 2 threads.
    assert!(set.rows.iter().all(|r| r.nranks == Some(4) && r.root == 0));
    let cycles: Vec<(u32, u64)> = set
        .rows
        .iter()
        .step_by(2)
        .map(|r| (r.cycle, r.bytes))
        .collect();
    assert_eq!(
        cycles,
        [(0, 0), (0, 2048), (0, 32768), (1, 0), (1, 2048), (1, 32768)]
    );
    assert!(set.rows[0].busbw_gbs.is_nan() && set.rows[0].time_us == 6.0);
    assert_eq!(
        brief(&set.rows[11]),
        "L6 run0 cyc1 broadcast half \"none\" root0 n4 in_place 32768B/16384 t=12.375 alg=2.730667 bus=2.730667 w=0"
    );
}

/// The identity of a row, without the numbers.
fn identity(r: &InputRow) -> String {
    format!(
        "{:?}",
        (
            r.run,
            r.cycle,
            &r.collective,
            &r.dtype,
            &r.op,
            r.root,
            r.nranks,
            r.placement,
            r.bytes,
            r.count
        )
    )
}

#[test]
fn one_host_run_reads_the_same_from_text_csv_and_json() {
    let csv = sample("ncclbench_host_all_reduce.csv");
    let json = sample("ncclbench_host_all_reduce.json");
    let text = sample("ncclbench_host_all_reduce.txt");
    for set in [&csv, &json, &text] {
        assert_eq!((set.rows.len(), set.skipped.len()), (20, 0));
    }
    for ((c, j), t) in csv.rows.iter().zip(&json.rows).zip(&text.rows) {
        assert_eq!(identity(c), identity(j));
        assert_eq!(identity(c), identity(t));
        // JSON keeps six decimals at least, the text table two.
        assert!((c.time_us - j.time_us).abs() <= 5e-7, "{c:?} vs {j:?}");
        assert!(
            (c.time_us - t.time_us).abs() <= 5e-3 + 1e-9,
            "{c:?} vs {t:?}"
        );
        assert_eq!(c.wrong, j.wrong);
        assert_eq!(c.wrong, t.wrong);
    }
    assert_eq!(
        brief(&csv.rows[17]),
        "L19 run0 cyc1 all_reduce bfloat16 \"avg\" root-1 n2 in_place 512B/256 t=22.81655 alg=0.022439851774260354 bus=0.022439851774260354 w=0"
    );
}

#[test]
fn csv_tuning_columns_quotes_and_a_second_header() {
    let set = sample("ncclbench_tuning_annotated.csv");
    assert_eq!(
        skips(&set),
        [
            "5: time NaN is not a positive latency",
            "6: 19 fields, the header has 20"
        ]
    );
    let tunings: Vec<Option<Tuning>> = set.rows.iter().map(|r| r.tuning.clone()).collect();
    let t = |algo: &str, proto: &str, channels: &str| {
        Some(Tuning {
            algo: algo.into(),
            proto: proto.into(),
            channels: channels.into(),
            model_time_us: None,
        })
    };
    assert_eq!(
        tunings,
        [
            t("Ring", "LL", "0..1"),
            t("Ring", "LL", "0..1"),
            t("Ring", "LL128", "0..15"),
            None,
            None
        ]
    );
    // An empty `wrong` is "not checked"; the repeated header starts run 1.
    assert_eq!(set.rows[1].wrong, None);
    assert_eq!(
        brief(&set.rows[4]),
        "L9 run1 cyc0 all_gather bfloat16 \"none\" root-1 n4 in_place 4096B/512 t=14.5 alg=0.282483 bus=0.211862 w=0"
    );
}
