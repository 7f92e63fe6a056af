//! CSV sink tests: exact file contents, per-iteration columns, quoting, and that a run cut
//! short keeps every line written so far.

use super::{names, CsvSink, CSV_COLUMNS, CSV_ITER_COLUMNS};
use crate::bench::output::testdata::{drive, iter_stats, meta, rows, summary};
use crate::bench::output::Sink;
use crate::core::collective::Collective;
use crate::result::Placement;

fn sink(path: &std::path::Path) -> CsvSink {
    CsvSink::new(path).with_clock(|| "2026-07-09 16:03:22".to_string())
}

#[test]
fn small_run_writes_header_and_one_line_per_placement() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    let mut rs = rows();
    rs[1].key.collective = Collective::Broadcast;
    rs[1].key.root = Some(2);
    rs[1].in_place.wrong = None;
    let mut s = sink(&path);
    drive(&mut s, &meta(), &rs, &summary());
    let text = std::fs::read_to_string(&path).unwrap();
    // cputime is time / 10 in the test data: full precision shows the quotient's binary value.
    assert_eq!(
        text,
        concat!(
            "cycle,collective,dtype,op,root,nranks,placement,bytes,count,time_us,algbw_gbs,busbw_gbs,wrong,backend,cputime_us,timestamp,algo,proto,channels,nccl_model_time_us,decision\n",
            "0,all_reduce,float,sum,-1,8,out_of_place,8,2,12.345,0.000648,0.001134,0,nccl,1.2345000000000002,2026-07-09 16:03:22,,,,,\n",
            "0,all_reduce,float,sum,-1,8,in_place,8,2,11.9,0.000672,0.001176,0,nccl,1.19,2026-07-09 16:03:22,,,,,\n",
            "0,broadcast,float,none,2,8,out_of_place,134217728,33554432,1234.56,108.72,190.25,0,nccl,123.45599999999999,2026-07-09 16:03:22,,,,,\n",
            "0,broadcast,float,none,2,8,in_place,134217728,33554432,1230,109.12,190.96,,nccl,123,2026-07-09 16:03:22,,,,,\n",
        )
    );
    assert_eq!(text.lines().next().unwrap(), names(CSV_COLUMNS));
}

#[test]
fn per_iteration_runs_add_the_iter_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    let mut m = meta();
    m.per_iter = true;
    let mut rs = rows();
    rs.truncate(1);
    rs[0].out_of_place.iter = Some(iter_stats(1));
    let mut s = sink(&path);
    drive(&mut s, &m, &rs, &summary());
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let header = names(CSV_COLUMNS) + "," + &names(CSV_ITER_COLUMNS);
    assert_eq!(lines[0], header);
    assert!(
        lines[1].ends_with("2026-07-09 16:03:22,,,,,,1,11.5,14.25,12.5,12.25,14,14.25,0.75,6"),
        "{}",
        lines[1]
    );
    // No per-iteration data for the in-place half: the nine columns are present but empty.
    assert!(
        lines[2].ends_with("2026-07-09 16:03:22,,,,,,,,,,,,,,"),
        "{}",
        lines[2]
    );
    assert_eq!(
        lines[2].split(',').count(),
        CSV_COLUMNS.len() + CSV_ITER_COLUMNS.len()
    );
}

#[test]
fn hypercube_op_is_empty_and_nan_is_spelled_nan() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    let mut s = sink(&path);
    let mut r = rows().remove(0);
    r.key.collective = Collective::Hypercube;
    r.out_of_place.busbw_gbs = f64::NAN;
    s.begin(&meta()).unwrap();
    s.placement_done(&r.key, Placement::OutOfPlace, &r.out_of_place)
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\n0,hypercube,float,,-1,8,out_of_place,8,2,12.345,0.000648,NaN,0,"));
}

#[test]
fn a_sink_dropped_mid_run_leaves_every_written_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    let rs = rows();
    {
        let mut s = sink(&path);
        s.begin(&meta()).unwrap();
        s.row_started(&rs[0].key).unwrap();
        s.placement_done(&rs[0].key, Placement::OutOfPlace, &rs[0].out_of_place)
            .unwrap();
        s.placement_done(&rs[0].key, Placement::InPlace, &rs[0].in_place)
            .unwrap();
        s.row_done(&rs[0]).unwrap();
        s.row_started(&rs[1].key).unwrap();
        s.placement_done(&rs[1].key, Placement::OutOfPlace, &rs[1].out_of_place)
            .unwrap();
        // Dropped here: no in-place half of row 2, no finish.
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[3].starts_with("0,all_reduce,float,sum,-1,8,out_of_place,134217728,"));
    assert!(text.ends_with('\n'));
}

/// An earlier run's results are never overwritten: the next free numbered name is written,
/// and `path` says which.
#[test]
fn begin_never_overwrites_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    let old = "old contents that are longer than a header line, surely\n".repeat(9);
    std::fs::write(&path, &old).unwrap();
    let mut s = sink(&path);
    s.begin(&meta()).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), old);
    assert_eq!(s.path(), dir.path().join("r.csv.0"));
    assert_eq!(
        std::fs::read_to_string(s.path()).unwrap(),
        names(CSV_COLUMNS) + "\n"
    );
}

#[test]
fn writing_before_begin_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sink(&dir.path().join("r.csv"));
    let r = &rows()[0];
    assert!(s
        .placement_done(&r.key, Placement::OutOfPlace, &r.out_of_place)
        .is_err());
}

#[test]
fn fields_are_quoted_only_when_needed_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    // Every character RFC 4180 quotes: a comma, a quote, a line feed and a carriage return,
    // in the one free-text column (the timestamp, from the sink's clock).
    const FREE: &str = "09/07, \"fast\"\ntwo\r";
    let mut rs = rows();
    rs.truncate(1);
    let mut s = CsvSink::new(&path).with_clock(|| FREE.to_string());
    drive(&mut s, &meta(), &rs, &summary());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(",1.2345000000000002,\"09/07, \"\"fast\"\"\ntwo\r\","),
        "{text}"
    );
    let mut r = csv::Reader::from_path(&path).unwrap();
    let timestamp = r.headers().unwrap().iter().position(|h| h == "timestamp");
    let records: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 2);
    assert_eq!(&records[0][timestamp.unwrap()], FREE);
    assert_eq!(&records[0][1], "all_reduce");
}

#[test]
fn tuning_fields_follow_the_timestamp_and_list_mixed_decisions_aligned() {
    use crate::result::tuning::{Tuning, TuningDecision};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    let mut rs = rows();
    rs.truncate(1);
    let d = |proto: &str, t: f64| TuningDecision {
        algo: "Ring".into(),
        proto: proto.into(),
        channels: None,
        model_time_us: Some(t),
        calls: 1,
    };
    let mut mixed = Tuning::default();
    mixed.add(d("LL", 10.5));
    mixed.add(d("LL128", 12.0));
    rs[0].out_of_place.tuning = Some(mixed);
    rs[0].in_place.tuning = Some(Tuning::default());
    let mut s = sink(&path);
    drive(&mut s, &meta(), &rs, &summary());
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].ends_with("2026-07-09 16:03:22,Ring|Ring,LL|LL128,|,10.5|12,mixed"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].ends_with("2026-07-09 16:03:22,,,,,"),
        "{}",
        lines[2]
    );
}
