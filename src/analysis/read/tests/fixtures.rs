//! Real published nccl-tests outputs from `../shared/fixtures/real/` (each test skips with a
//! message when that folder is absent, and fails under `CI=true`): exact row and skip counts and a few exact values.

use super::*;
use crate::analysis::read::read_files;
use crate::core::real_fixtures;
use crate::result::Placement;

/// The fixture folder, when present (see [`real_fixtures`]).
fn fixtures_dir() -> Option<PathBuf> {
    real_fixtures::path("")
}

/// Reads one fixture; `None` when fixtures are absent.
fn fixture(name: &str) -> Option<ReadSet> {
    let path = real_fixtures::path(name)?;
    Some(read_files(&[path]).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// The row of `bytes` and `placement` in cycle 0 of run `run`.
fn find(set: &ReadSet, run: u32, bytes: u64, placement: Placement) -> &InputRow {
    set.rows
        .iter()
        .find(|r| r.run == run && r.cycle == 0 && r.bytes == bytes && r.placement == placement)
        .unwrap_or_else(|| panic!("no row of {bytes} B {placement:?} in run {run}"))
}

#[test]
fn current_layout_two_nodes_001() {
    let Some(set) = fixture("001_nccltests_h100x16_2node_allreduce.txt") else {
        return;
    };
    assert_eq!((set.rows.len(), set.skipped.len()), (62, 0));
    assert_eq!(
        brief(&set.rows[0]),
        "L25 run0 cyc0 all_reduce float \"sum\" root-1 n16 out_of_place 8B/2 t=135.8 alg=0 bus=0 w=0"
    );
    // No `Collective test starting` line: the table's own evidence names it.
    assert_eq!(
        set.inferred[0].basis,
        "inferred from an op without a root; #wrong checked in place; busbw/algbw 1.875 = 2(n-1)/n at 16 ranks"
    );
    let last = find(&set, 0, 8589934592, Placement::InPlace);
    assert_eq!((last.time_us, last.busbw_gbs), (47743.0, 337.35));
    assert!(set
        .rows
        .iter()
        .all(|r| r.cycle == 0 && r.nranks == Some(16)));
}

#[test]
fn legacy_error_column_and_info_line_002() {
    let Some(set) = fixture("002_nccltests_a100x8_allreduce_legacyfmt.txt") else {
        return;
    };
    // 34 data lines; the NCCL INFO line above them is not a row.
    assert_eq!((set.rows.len(), set.skipped.len()), (68, 0));
    // `-b 1` printed size 0 twice: rounding repeats, not a second cycle.
    assert!(set.rows.iter().all(|r| r.cycle == 0 && r.wrong.is_none()));
    assert_eq!(set.rows.iter().filter(|r| r.bytes == 0).count(), 4);
    let r = find(&set, 0, 4194304, Placement::OutOfPlace);
    assert_eq!(
        (r.time_us, r.busbw_gbs, r.op.as_str()),
        (112.0, 65.52, "sum")
    );
    assert_eq!(
        (r.root, r.nranks, r.collective.as_deref()),
        (-1, Some(8), Some("all_reduce"))
    );
    assert_eq!(
        set.inferred[0].basis,
        "inferred from legacy columns redop, no root; busbw/algbw 1.750 = 2(n-1)/n at 8 ranks"
    );
}

#[test]
fn legacy_without_redop_or_root_003() {
    let Some(set) = fixture("003_nccltests_a100x8_allgather_legacyfmt.txt") else {
        return;
    };
    assert_eq!((set.rows.len(), set.skipped.len()), (68, 0));
    assert!(set
        .rows
        .iter()
        .all(|r| r.op.is_empty() && r.root == -1 && r.cycle == 0));
    assert!(set
        .rows
        .iter()
        .all(|r| r.collective.as_deref() == Some("all_gather")));
    assert_eq!(
        set.inferred[0].basis,
        "inferred from legacy columns without redop or root; busbw/algbw 0.875 = (n-1)/n at 8 ranks"
    );
    let r = find(&set, 0, 8589934592, Placement::InPlace);
    assert_eq!(
        (r.count, r.time_us, r.algbw_gbs),
        (268435456, 32669.0, 262.94)
    );
}

#[test]
fn rows_split_across_133_lines_of_nccl_info_006() {
    let Some(set) = fixture("006_tuning_2.27.7_a100pcie_x2_allreduce.txt") else {
        return;
    };
    assert_eq!((set.rows.len(), set.skipped.len()), (22, 0));
    let oop = find(&set, 0, 8388608, Placement::OutOfPlace);
    let ip = find(&set, 0, 8388608, Placement::InPlace);
    assert_eq!(
        (oop.source.line, oop.time_us, oop.busbw_gbs),
        (1667, 83.33, 100.66)
    );
    assert_eq!(
        (ip.source.line, ip.time_us, ip.busbw_gbs),
        (1667, 80.98, 103.59)
    );
    assert_eq!(
        (oop.collective.as_deref(), oop.nranks),
        (Some("all_reduce"), Some(2))
    );
    assert_eq!(
        find(&set, 0, 8589934592, Placement::InPlace).time_us,
        39657.0
    );
    // NCCL's decision lines inside the rows are the rows' decisions (the warm-ups before the
    // first row annotate nothing).
    for r in &set.rows {
        let t = r
            .tuning
            .as_ref()
            .unwrap_or_else(|| panic!("{} B undecided", r.bytes));
        assert_eq!(
            (t.algo.as_str(), t.proto.as_str(), t.channels.as_str()),
            ("Ring", "Simple", "0-23"),
            "{} B",
            r.bytes
        );
    }
}

#[test]
fn a_debug_log_without_table_is_not_a_result_file_008() {
    let Some(dir) = fixtures_dir() else { return };
    let path = dir.join("008_tuning_2.29.7_rtx5090_2rank_broadcast_rank0.txt");
    let err = read_files(&[path]).expect_err("no table in a TUNING log");
    assert!(
        err.to_string().contains("008_tuning") && err.to_string().contains("not a result file")
    );
}

#[test]
fn rooted_broadcast_mpi_binary_009() {
    let Some(set) = fixture("009_nccltests_2.29.7_rtx5090_2rank_broadcast.txt") else {
        return;
    };
    assert_eq!((set.rows.len(), set.skipped.len()), (18, 0));
    assert!(set
        .rows
        .iter()
        .all(|r| r.collective.as_deref() == Some("broadcast")
            && r.root == 0
            && r.op == "none"
            && r.nranks == Some(2)));
    assert_eq!(find(&set, 0, 67108864, Placement::InPlace).time_us, 37664.5);
}

#[test]
fn open_mpi_tagged_fragments_010() {
    let Some(set) = fixture("010_init_2.22.3_p5_h100x16_efa_allreduce_tagged.txt") else {
        return;
    };
    assert_eq!((set.rows.len(), set.skipped.len()), (64, 0));
    let first = find(&set, 0, 8, Placement::OutOfPlace);
    assert_eq!((first.source.line, first.time_us), (2906, 85.70));
    assert_eq!(find(&set, 0, 8, Placement::InPlace).time_us, 74.97);
    let last = find(&set, 0, 17179869184, Placement::InPlace);
    assert_eq!(
        (last.time_us, last.busbw_gbs, last.nranks),
        (65990.0, 488.14, Some(16))
    );
}

#[test]
fn byte_step_sweep_with_info_log_013() {
    let Some(set) = fixture("013_init_2.23.4_a100pcie_x2_p2pdisabled_allreduce.txt") else {
        return;
    };
    assert_eq!((set.rows.len(), set.skipped.len()), (206, 0));
    assert!(set.rows.iter().all(|r| r.cycle == 0 && r.nranks == Some(2)));
    assert_eq!(
        find(&set, 0, 389021696, Placement::OutOfPlace).time_us,
        100445.0
    );
}

#[test]
fn five_runs_in_one_file_015() {
    let Some(set) = fixture("015_nccltests_2.29.2_h100x8_single_node.txt") else {
        return;
    };
    assert_eq!((set.rows.len(), set.skipped.len()), (100, 0));
    let names: Vec<(u32, &str)> = (0..5)
        .map(|run| {
            let r = find(&set, run, 33554432, Placement::OutOfPlace);
            (r.run, r.collective.as_deref().unwrap_or("?"))
        })
        .collect();
    assert_eq!(
        names,
        [
            (0, "all_reduce"),
            (1, "all_gather"),
            (2, "reduce_scatter"),
            (3, "alltoall"),
            (4, "sendrecv")
        ]
    );
    // alltoall and sendrecv print N/A for the in-place check.
    assert!(set
        .rows
        .iter()
        .filter(|r| r.run >= 3 && r.placement == Placement::InPlace)
        .all(|r| r.wrong.is_none()));
    assert_eq!(
        find(&set, 1, 17179869184, Placement::InPlace).busbw_gbs,
        366.03
    );
    assert!(set
        .rows
        .iter()
        .all(|r| r.dtype == "double" && r.nranks == Some(8)));
}

#[test]
fn the_fixture_directory_reads_as_one_set() {
    let Some(dir) = fixtures_dir() else { return };
    let set = read_files(&[dir]).unwrap_or_else(|e| panic!("{e}"));
    // Every table of the folder (608 rows in the files above, more if fixtures are added);
    // README.md and the table-less 008 log are passed over, files are read in name order.
    assert!(set.rows.len() >= 62 + 68 + 68 + 22 + 18 + 64 + 206 + 100);
    assert!(set
        .rows
        .windows(2)
        .all(|w| w[0].source.file <= w[1].source.file));
    assert!(!set.rows.iter().any(|r| r.source.file.contains("008_")));
}
