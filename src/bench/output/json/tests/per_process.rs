//! The JSON of a job of several processes as nccl-tests' analysis script reads it:
//! `per_process_max_times_us` (one row per process) only when there are rows, and `devices`
//! with one entry per process (its first rank), in process order.

use crate::bench::output::json::JsonSink;
use crate::bench::output::testdata::{iter_stats, meta, rows, summary};
use serde_json::Value;

fn written(meta: &crate::result::RunMeta, rows: &[crate::result::Row]) -> (String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = JsonSink::new(dir.path().join("r.json"));
    crate::bench::output::testdata::drive(&mut sink, meta, rows, &summary());
    let text = std::fs::read_to_string(sink.path()).unwrap();
    let v = serde_json::from_str(&text).unwrap();
    (text, v)
}

#[test]
fn per_process_rows_are_written_only_for_several_processes() {
    let mut rs = rows();
    let mut it = iter_stats(0);
    rs[0].out_of_place.iter = Some(it.clone());
    it.per_process_max_times_us =
        vec![vec![20.0, 11.5, 12.0, 14.0], vec![19.0, 11.0, 12.25, 14.25]];
    rs[1].out_of_place.iter = Some(it);
    let (text, v) = written(&meta(), &rs);
    let r = &v["results"];
    assert!(r[0]["out_of_place_per_iter"]
        .get("per_process_max_times_us")
        .is_none());
    let rows = &r[1]["out_of_place_per_iter"]["per_process_max_times_us"];
    assert_eq!(rows.as_array().unwrap().len(), 2);
    assert_eq!(rows[1][3].as_f64(), Some(14.25));
    // The key follows times_us, as nccl-tests orders them.
    assert!(text.contains(
        r#"14.250000],"per_process_max_times_us":[[20.000000,11.500000,12.000000,14.000000],[19.000000"#
    ));
}

#[test]
fn devices_list_each_process_once_in_process_order() {
    let mut m = meta();
    // Four processes of two ranks on two hosts.
    for (i, d) in m.devices.iter_mut().enumerate() {
        d.pid = 100 + (i / 2) as u32;
        d.hostname = if i < 4 { "a" } else { "b" }.into();
    }
    let (_, v) = written(&m, &rows());
    let devs = v["config"]["devices"].as_array().unwrap();
    let seen: Vec<(u64, &str, u64)> = devs
        .iter()
        .map(|d| {
            (
                d["rank"].as_u64().unwrap(),
                d["hostname"].as_str().unwrap(),
                d["pid"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![(0, "a", 100), (2, "a", 101), (4, "b", 102), (6, "b", 103)]
    );
}
