//! Prometheus textfile sink tests: the exact file after a run, one series per size and
//! placement across cycles, the completion gauges at each stage, the file policy (our own
//! textfile replaced, anyone else's never), and no temporary left behind.

use super::{PromSink, MARKER};
use crate::bench::output::testdata::{drive, meta, rows, summary};
use crate::bench::output::Sink;
use crate::result::Placement;
use std::path::Path;

fn sink(path: &Path) -> PromSink {
    let mut t = 1_700_000_000.0;
    PromSink::new(path).with_clock(move || {
        t += 1.0;
        t
    })
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// The value of the one sample line starting with `prefix`.
fn value(text: &str, prefix: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(lines.len(), 1, "{prefix} in:\n{text}");
    lines[0].rsplit(' ').next().unwrap().to_string()
}

const LABELS: &str = r#"backend="nccl",host="node01",file="r.prom""#;

#[test]
fn a_finished_run_writes_every_series_and_says_it_completed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.prom");
    let mut s = sink(&path);
    drive(&mut s, &meta(), &rows(), &summary());
    let text = read(&path);
    assert!(text.starts_with(MARKER), "{text}");
    let big = format!(
        r#"{{collective="all_reduce",dtype="float",op="sum",root="-1",bytes="134217728",nranks="8",placement="out_of_place",{LABELS}}}"#
    );
    assert!(
        text.contains(&format!("ncclbench_bus_bandwidth_gbs{big} 190.25\n")),
        "{text}"
    );
    assert!(text.contains(&format!("ncclbench_algorithm_bandwidth_gbs{big} 108.72\n")));
    assert!(text.contains(&format!(
        "ncclbench_collective_exec_time_microseconds{big} 1234.56\n"
    )));
    assert!(text.contains(&format!("ncclbench_wrong_elements{big} 0\n")));
    // Two rows x two placements, once per metric.
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("ncclbench_bus_bandwidth_gbs{"))
            .count(),
        4
    );
    let run = format!("{{nranks=\"8\",{LABELS}}}");
    assert!(text.contains(&format!(
        "ncclbench_run_info{{version=\"0.1.0\",collective=\"all_reduce\",nccl_version=\"22807\",nranks=\"8\",{LABELS}}} 1\n"
    )));
    assert!(text.contains(&format!("ncclbench_run_complete{run} 1\n")));
    assert!(text.contains(&format!("ncclbench_run_ended{run} 1\n")));
    assert!(text.contains(&format!("ncclbench_rows_measured{run} 2\n")));
    assert!(text.contains(&format!(
        "ncclbench_average_bus_bandwidth_gbs{run} 95.300912\n"
    )));
    // begin's start is the clock's first reading; seal's write is its sixth.
    assert!(text.contains(&format!(
        "ncclbench_start_timestamp_seconds{run} 1700000001\n"
    )));
    assert!(text.contains(&format!(
        "ncclbench_last_update_timestamp_seconds{run} 1700000006\n"
    )));
    // Every sample has its HELP and TYPE, and no temporary is left.
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let name = &l[..l.find('{').unwrap()];
        assert!(text.contains(&format!("# TYPE {name} gauge\n")), "{name}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1);
}

#[test]
fn each_stage_rewrites_the_file_with_the_completion_gauges_of_that_stage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.prom");
    let mut s = sink(&path);
    let rs = rows();
    s.begin(&meta()).unwrap();
    let text = read(&path);
    assert_eq!(value(&text, "ncclbench_run_complete{"), "0");
    assert_eq!(value(&text, "ncclbench_run_ended{"), "0");
    assert_eq!(value(&text, "ncclbench_rows_measured{"), "0");
    assert!(!text.contains("ncclbench_bus_bandwidth_gbs{"));
    for p in Placement::BOTH {
        s.placement_done(&rs[0].key, p, rs[0].get(p)).unwrap();
    }
    s.row_done(&rs[0]).unwrap();
    let text = read(&path);
    assert_eq!(value(&text, "ncclbench_rows_measured{"), "1");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("ncclbench_bus_bandwidth_gbs{"))
            .count(),
        2
    );
    // A failed run: ended, never complete, and no average.
    let mut failed = summary();
    failed.error = Some("NCCL failure".into());
    failed.avg_busbw = f64::NAN;
    s.finish(&failed).unwrap();
    let text = read(&path);
    assert_eq!(value(&text, "ncclbench_run_ended{"), "1");
    assert_eq!(value(&text, "ncclbench_run_complete{"), "0");
    assert!(!text.contains("ncclbench_average_bus_bandwidth_gbs{"));
}

#[test]
fn a_later_cycle_replaces_the_series_instead_of_adding_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.prom");
    let mut rs = rows();
    let mut again = rs[1].clone();
    again.key.cycle = 1;
    again.out_of_place.busbw_gbs = 150.5;
    again.in_place.wrong = None;
    rs.push(again);
    let mut s = sink(&path);
    drive(&mut s, &meta(), &rs, &summary());
    let text = read(&path);
    assert_eq!(
        value(
            &text,
            "ncclbench_bus_bandwidth_gbs{collective=\"all_reduce\",dtype=\"float\",op=\"sum\",root=\"-1\",bytes=\"134217728\",nranks=\"8\",placement=\"out_of_place\""
        ),
        "150.5"
    );
    assert_eq!(value(&text, "ncclbench_cycle{"), "1");
    assert_eq!(value(&text, "ncclbench_rows_measured{"), "3");
    // The unchecked in-place measurement of cycle 1 has no wrong-elements sample.
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("ncclbench_wrong_elements{"))
            .count(),
        3
    );
}

#[test]
fn our_own_textfile_is_replaced_and_any_other_file_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.prom");
    std::fs::write(&path, format!("{MARKER}: an earlier run\nold 1\n")).unwrap();
    let mut s = sink(&path);
    drive(&mut s, &meta(), &rows(), &summary());
    assert_eq!(s.path(), path);
    assert!(!read(&path).contains("old 1"));

    let theirs = dir.path().join("node.prom");
    std::fs::write(&theirs, "node_load1 0.5\n").unwrap();
    let mut s = sink(&theirs);
    drive(&mut s, &meta(), &rows(), &summary());
    assert_eq!(read(&theirs), "node_load1 0.5\n");
    assert_eq!(s.path(), dir.path().join("node.prom.0"));
    let text = read(&dir.path().join("node.prom.0"));
    // The file label names the file actually written.
    assert!(text.contains("file=\"node.prom.0\""), "{text}");

    let err = match sink(dir.path()).begin(&meta()) {
        Err(e) => e.to_string(),
        Ok(()) => panic!("a directory was taken"),
    };
    assert!(err.contains("is a directory"), "{err}");
}

#[test]
fn a_stream_gets_each_snapshot_in_turn_and_labels_are_escaped() {
    let mut m = meta();
    m.devices[0].hostname = "we\"ird\\host\nname".into();
    let mut s = sink(Path::new("/dev/null"));
    drive(&mut s, &m, &rows(), &summary());
    assert_eq!(s.path(), Path::new("/dev/null"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.prom");
    let mut s = sink(&path);
    drive(&mut s, &m, &rows(), &summary());
    let text = read(&path);
    assert!(text.contains(r#"host="we\"ird\\host\nname""#), "{text}");
    assert_eq!(super::render::number(f64::INFINITY), "+Inf");
    assert_eq!(super::render::number(f64::NAN), "NaN");
}
