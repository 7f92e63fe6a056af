//! Streaming: a file is recognised from its head and read as it streams, so what matters past
//! the head (a table deep in a long log, file-wide facts after `results`, a line longer than
//! any row) is still read right, and a directory is judged by heads alone.

use super::{sample, sample_path};
use crate::analysis::read::read_files;
use std::fs;

/// A sample text log with `pad` bytes of NCCL messages before it.
fn padded_log(pad: usize) -> String {
    let line = "host:1:1 [0] NCCL INFO Channel 00/02 : 0 1 2 3 4 5 6 7\n";
    let text = fs::read_to_string(sample_path("ncclbench_host_all_reduce.txt")).expect("sample");
    line.repeat(pad / line.len() + 1) + &text
}

#[test]
fn a_named_log_whose_table_starts_past_the_head_is_still_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("job.log");
    fs::write(&path, padded_log(200 << 10)).expect("write");
    let set = read_files(&[path]).unwrap_or_else(|e| panic!("{e}"));
    let plain = sample("ncclbench_host_all_reduce.txt");
    assert_eq!(set.rows.len(), plain.rows.len());
    assert!(set.rows.len() >= 20);
    // Line numbers count the padding: the rows are where they are in this file.
    assert!(
        set.rows[0].source.line > 3000,
        "{}",
        set.rows[0].source.line
    );
    assert_eq!(set.rows[0].time_us, plain.rows[0].time_us);
}

#[test]
fn a_long_log_without_any_table_is_not_a_result_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nccl.log");
    let line = "host:1:1 [0] NCCL INFO Channel 00/02 : 0 1 2 3\n";
    fs::write(&path, line.repeat(5000)).expect("write");
    let err = read_files(&[path]).expect_err("no table").to_string();
    assert!(err.contains("not a result file"), "{err}");
}

#[test]
fn in_a_directory_a_file_is_judged_by_its_head() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("deep.log"), padded_log(200 << 10)).expect("write");
    fs::copy(
        sample_path("ncclbench_host_all_reduce.csv"),
        dir.path().join("run.csv"),
    )
    .expect("copy");
    let set = read_files(&[dir.path().to_path_buf()]).unwrap_or_else(|e| panic!("{e}"));
    let files: std::collections::BTreeSet<&str> =
        set.rows.iter().map(|r| r.source.file.as_str()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files.iter().all(|f| f.ends_with("run.csv")));
}

#[test]
fn a_line_longer_than_any_row_is_passed_over() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("job.log");
    let text = fs::read_to_string(sample_path("ncclbench_host_all_reduce.txt")).expect("sample");
    let (head, tail) = text.split_at(text.find("# Out of bounds").expect("footer"));
    let huge = "x".repeat(3 << 20);
    fs::write(&path, format!("{head}{huge}\n{tail}")).expect("write");
    let set = read_files(&[path]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        set.rows.len(),
        sample("ncclbench_host_all_reduce.txt").rows.len()
    );
}

#[test]
fn json_facts_written_after_results_reach_every_row() {
    // ncclbench writes its `ncclbench` object (collective, nranks) after `results`; a result
    // that does not name them takes them from there.
    let result = r#"{"size":8,"count":2,"type":"float","redop":"sum","root":-1,
        "out_of_place":{"time":2.5,"alg_bw":0.1,"bus_bw":0.1,"nwrong":0},
        "in_place":{"time":2.0,"alg_bw":0.1,"bus_bw":0.1,"nwrong":0}}"#;
    let doc = format!(
        r#"{{"version":3,"results":[{result},{result}],"ncclbench":{{"collective":"broadcast","nranks":4}}}}"#
    );
    let set = crate::analysis::read::read_str("late.json", &doc).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(set.rows.len(), 4);
    assert!(set
        .rows
        .iter()
        .all(|r| r.collective.as_deref() == Some("broadcast") && r.nranks == Some(4)));
}
