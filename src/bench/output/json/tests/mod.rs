//! JSON sink tests: the file is valid JSON after every hook, keys come in nccl-tests' order,
//! nccl-tests' quirks are kept, and existing files are never overwritten.

mod key_tree;
mod per_process;

use super::JsonSink;
use crate::bench::output::testdata::{iter_stats, meta, rows, summary};
use crate::bench::output::Sink;
use crate::result::Placement;
use key_tree::Tree;
use serde_json::{json, Value};
use std::path::Path;

fn read(path: &Path) -> (String, Value) {
    let text = std::fs::read_to_string(path).unwrap();
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("invalid JSON ({e}): {text}"));
    (text, v)
}

#[test]
fn file_is_complete_json_after_begin_each_row_and_finish() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = JsonSink::new(dir.path().join("r.json"));
    sink.begin(&meta()).unwrap();
    let (_, v) = read(sink.path());
    assert_eq!(v["results"], json!([]));
    assert_eq!(v["ncclbench"]["complete"], json!(false));
    assert!(v.get("out_of_bounds").is_none());
    for (i, row) in rows().iter().enumerate() {
        sink.row_started(&row.key).unwrap();
        for p in Placement::BOTH {
            sink.placement_done(&row.key, p, row.get(p)).unwrap();
        }
        sink.row_done(row).unwrap();
        let (_, v) = read(sink.path());
        assert_eq!(v["results"].as_array().unwrap().len(), i + 1);
        assert_eq!(v["ncclbench"]["complete"], json!(false));
    }
    sink.finish(&summary()).unwrap();
    let (_, v) = read(sink.path());
    // Finished is not yet ended normally: the job has still to agree on its status.
    assert_eq!(v["ncclbench"]["complete"], json!(false));
    sink.seal().unwrap();
    let (_, v) = read(sink.path());
    assert_eq!(v["ncclbench"]["complete"], json!(true));
    assert_eq!(v["out_of_bounds"], json!({"count": 0, "okay": "true"}));
    assert_eq!(
        v["average_bus_bandwidth"],
        json!({"bandwidth": 95.300912, "okay": "unchecked"})
    );
    assert_eq!(v["errors"], json!([""]));
    assert_eq!(v["end_time"], json!("2026-07-09 16:03:25"));
    // One file, nothing beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// A row costs its own size, not the file's: rows are written after the ones before, which
/// are never written again (a mark put into the file by hand survives later rows), and the
/// document stays whole after each.
#[test]
fn rows_extend_the_file_in_place_without_rewriting_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = JsonSink::new(dir.path().join("r.json"));
    sink.begin(&meta()).unwrap();
    let rows = rows();
    assert!(rows.len() >= 2);
    sink.row_done(&rows[0]).unwrap();
    let text = std::fs::read_to_string(sink.path()).unwrap();
    let at = text.find("\"start_time\":\"").unwrap() + "\"start_time\":\"".len();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(sink.path())
        .unwrap();
    std::os::unix::fs::FileExt::write_all_at(&file, b"X", at as u64).unwrap();
    for row in &rows[1..] {
        sink.row_done(row).unwrap();
        let (_, v) = read(sink.path());
        assert!(
            v["start_time"].as_str().unwrap().starts_with('X'),
            "rewritten"
        );
    }
    sink.finish(&summary()).unwrap();
    sink.seal().unwrap();
    let (text, v) = read(sink.path());
    assert_eq!(v["results"].as_array().unwrap().len(), rows.len());
    assert_eq!(v["ncclbench"]["complete"], json!(true));
    assert!(text.ends_with("}\n") && text.matches("\"ncclbench\"").count() == 1);
}

#[test]
fn keys_come_in_nccl_tests_order_with_ours_after_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = JsonSink::new(dir.path().join("r.json"));
    crate::bench::output::testdata::drive(&mut sink, &meta(), &rows(), &summary());
    let text = std::fs::read_to_string(sink.path()).unwrap();
    let tree: Tree = serde_json::from_str(&text).unwrap();
    assert_eq!(
        tree.keys(),
        [
            "version",
            "start_time",
            "args",
            "env",
            "nccl_version",
            "config",
            "results",
            "out_of_bounds",
            "average_bus_bandwidth",
            "errors",
            "end_time",
            "ncclbench"
        ]
    );
    assert_eq!(
        tree.get("config").keys(),
        [
            "nthreads",
            "ngpus",
            "minimum_bytes",
            "maximum_bytes",
            "step_factor",
            "warmup_iters",
            "iterations",
            "aggregated_iterations",
            "validation",
            "graph",
            "blocking_collectives",
            "per_iter_timing",
            "per_iter_skip",
            "parallel_init",
            "devices"
        ]
    );
    assert_eq!(
        tree.get("config").get("devices").at(0).keys(),
        [
            "rank",
            "group",
            "pid",
            "hostname",
            "device",
            "device_hex",
            "device_info"
        ]
    );
    assert_eq!(
        tree.get("results").at(0).keys(),
        [
            "size",
            "count",
            "type",
            "redop",
            "root",
            "out_of_place",
            "in_place",
            "actual_iterations",
            "experiment_name",
            "collective",
            "cycle",
            "nranks",
            "timestamp"
        ]
    );
    assert_eq!(
        tree.get("results").at(0).get("out_of_place").keys(),
        ["time", "alg_bw", "bus_bw", "nwrong"]
    );
    assert_eq!(
        tree.get("ncclbench").keys(),
        ["version", "backend", "collective", "nranks", "complete"]
    );
}

#[test]
fn nccl_tests_quirks_are_kept_in_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = JsonSink::new(dir.path().join("r.json"));
    let mut rs = rows();
    rs[1].in_place.wrong = None;
    let mut s = summary();
    s.avg_busbw = f64::NAN;
    crate::bench::output::testdata::drive(&mut sink, &meta(), &rs, &s);
    let (text, v) = read(sink.path());
    assert!(text.starts_with(r#"{"version":3,"start_time":"2026-07-09 16:03:21","args":["./all_reduce_perf","-b","8"],"env":["NCCL_DEBUG=WARN"],"nccl_version":22807,"config":{"nthreads":1,"ngpus":8,"minimum_bytes":8,"maximum_bytes":134217728,"step_factor":2,"warmup_iters":1,"iterations":20,"aggregated_iterations":1,"validation":1,"graph":0,"blocking_collectives":"false","per_iter_timing":"false","per_iter_skip":0,"parallel_init":"false","devices":[{"rank":0,"group":0,"pid":12345,"hostname":"node01","device":0,"device_hex":"0000:18:00","device_info":"NVIDIA H100 80GB HBM3"}]},"#));
    assert!(text.contains(r#"{"size":8,"count":2,"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":12.345000,"alg_bw":0.000648,"bus_bw":0.001134,"nwrong":0.000000},"#));
    assert!(text.contains(r#""actual_iterations":20,"experiment_name":"","collective":"all_reduce","cycle":0,"nranks":8,"timestamp":"2026-07-09 16:03:22"}"#));
    assert_eq!(v["results"][1]["in_place"]["nwrong"], Value::Null);
    assert_eq!(v["average_bus_bandwidth"]["bandwidth"], json!("nan"));
    // One process of 8 ranks: one entry, as nccl-tests writes it.
    assert_eq!(v["config"]["devices"].as_array().unwrap().len(), 1);
    assert_eq!(
        v["ncclbench"],
        json!({"version": "0.1.0", "backend": "nccl", "collective": "all_reduce", "nranks": 8, "complete": true})
    );
}

#[test]
fn cputime_step_bytes_per_iteration_and_failures_change_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = JsonSink::new(dir.path().join("r.json"));
    let mut m = meta();
    m.report_cputime = true;
    m.per_iter = true;
    m.per_iter_skip = 1;
    m.blocking = 3;
    m.step = crate::result::Step::Bytes(1048576);
    let mut rs = rows();
    rs.truncate(1);
    rs[0].in_place.iter = Some(iter_stats(1));
    let mut s = summary();
    s.out_of_bounds = 1;
    s.min_bw = Some(200.0);
    s.error = Some("remote process exited".into());
    crate::bench::output::testdata::drive(&mut sink, &m, &rs, &s);
    let text = std::fs::read_to_string(sink.path()).unwrap();
    let tree: Tree = serde_json::from_str(&text).unwrap();
    let result = tree.get("results").at(0);
    assert_eq!(
        result.keys()[5..8],
        ["out_of_place", "in_place", "in_place_per_iter"]
    );
    assert_eq!(
        result.get("in_place_per_iter").keys(),
        [
            "skipped_iterations",
            "min_us",
            "max_us",
            "avg_us",
            "p50_us",
            "p95_us",
            "p99_us",
            "stdev_us",
            "cv_pct",
            "times_us"
        ]
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["results"][0]["out_of_place"]["cpu_time"], json!(1.2345));
    assert!(v["results"][0]["out_of_place"].get("time").is_none());
    assert_eq!(
        v["results"][0]["in_place_per_iter"]["times_us"],
        json!([20.0, 11.5, 12.25, 14.25])
    );
    assert_eq!(v["config"]["step_bytes"], json!(1048576));
    assert_eq!(v["config"]["blocking_collectives"], json!("true"));
    assert_eq!(v["config"]["per_iter_timing"], json!("true"));
    assert_eq!(v["config"]["per_iter_skip"], json!(1));
    assert_eq!(v["out_of_bounds"]["okay"], json!("false"));
    assert_eq!(v["average_bus_bandwidth"]["okay"], json!("false"));
    assert_eq!(v["errors"], json!(["remote process exited"]));
}

#[test]
fn existing_files_are_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let wanted = dir.path().join("r.json");
    std::fs::write(&wanted, "first").unwrap();
    std::fs::write(dir.path().join("r.json.0"), "second").unwrap();
    let mut sink = JsonSink::new(&wanted);
    assert_eq!(sink.path(), wanted);
    sink.begin(&meta()).unwrap();
    assert_eq!(sink.path(), dir.path().join("r.json.1"));
    read(sink.path());
    assert_eq!(std::fs::read_to_string(&wanted).unwrap(), "first");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("r.json.0")).unwrap(),
        "second"
    );
}

#[test]
fn an_unwritable_directory_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = JsonSink::new(dir.path().join("missing").join("r.json"));
    assert!(sink.begin(&meta()).is_err());
}

#[test]
fn a_run_cut_short_leaves_valid_json_with_its_completed_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path;
    {
        let mut sink = JsonSink::new(dir.path().join("r.json"));
        let rs = rows();
        sink.begin(&meta()).unwrap();
        sink.row_done(&rs[0]).unwrap();
        sink.row_started(&rs[1].key).unwrap();
        path = sink.path().to_path_buf();
    }
    let (_, v) = read(&path);
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
    assert_eq!(v["ncclbench"]["complete"], json!(false));
}
