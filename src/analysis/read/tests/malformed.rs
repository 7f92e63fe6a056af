//! Broken input: structural errors name file and line, row-level problems are skipped with a
//! reason, and file/directory arguments behave as documented.

use crate::analysis::read::{read_files, read_str, read_str_as, Format};
use crate::core::error::Error;
use std::fs;

/// The message of a usage error (any other error fails the test).
fn usage(result: Result<crate::analysis::input::ReadSet, Error>) -> String {
    match result {
        Err(Error::Usage(msg)) => msg,
        other => panic!("expected a usage error, got {other:?}"),
    }
}

const CSV_HEAD: &str =
    "cycle,collective,dtype,op,root,nranks,placement,bytes,count,time_us,algbw_gbs,busbw_gbs,wrong";

#[test]
fn structural_errors_name_file_and_line() {
    let json = "{\n  \"version\": 3,\n  \"results\": [ {\"size\": 8,, } ]\n}\n";
    assert_eq!(
        usage(read_str("r.json", json)),
        "r.json:3: invalid JSON: key must be a string"
    );
    assert_eq!(
        usage(read_str("r.json", "{\"version\": 1}")),
        "r.json:1: the JSON document has no `results` list"
    );
    let csv = "cycle,collective,dtype,op,root,nranks,placement,count,algbw_gbs,busbw_gbs\n";
    assert_eq!(
        usage(read_str("r.csv", csv)),
        "r.csv:1: CSV header lacks column(s) bytes, time_us"
    );
    let text = "# nThread 1\n#\n#  size  count  type  redop  root  time  algbw  busbw  #wrong\n";
    assert!(usage(read_str("log.txt", text)).starts_with("log.txt:3: column header not understood"));
}

#[test]
fn empty_unrecognised_and_rowless_files_are_errors() {
    assert_eq!(usage(read_str("a", " \n\r\n")), "a: empty file");
    assert!(usage(read_str("b", "hello\nworld\n")).starts_with("b: not a result file"));
    assert_eq!(
        usage(read_str("c.csv", &format!("{CSV_HEAD}\n"))),
        "c.csv: no result rows in it"
    );
    // Parsing by format directly accepts an empty table.
    let empty = read_str_as("c.csv", &format!("{CSV_HEAD}\n"), Format::Csv).expect("ok");
    assert!(empty.rows.is_empty() && empty.skipped.is_empty());
    assert!(usage(read_files(&["/nonexistent/ncclbench.csv".into()])).contains("cannot read"));
}

#[test]
fn bad_json_results_are_skipped_with_reasons() {
    let json = r#"{"results":[
        7,
        {"size":8,"count":2,"type":"fp9","redop":"sum","root":"    -1"},
        {"size":8,"count":2,"type":"float","redop":"sum","root":"    -1",
         "out_of_place":{"cpu_time":1.5,"alg_bw":0.1,"bus_bw":0.1,"nwrong":0},
         "in_place":{"time":"nan","alg_bw":0.1,"bus_bw":0.1,"nwrong":null}},
        {"size":-8,"type":"float"}
    ]}"#;
    let set = read_str("x.json", json).expect("recognised");
    let reasons: Vec<String> = set
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.source.line, s.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            "1: result is not an object",
            "2: unknown dtype `fp9`",
            "3: out_of_place: cpu_time result (-C): no latency",
            "3: in_place: time NaN is not a positive latency",
            "4: no byte count in `size`",
        ]
    );
    assert!(set.rows.is_empty());
}

#[test]
fn csv_records_that_do_not_parse_are_skipped() {
    let csv = format!(
        "{CSV_HEAD}\n0,all_reduce,float,sum,-1,2,sideways,8,2,1.0,0.1,0.1,0\n\
         x,all_reduce,float,sum,-1,2,in_place,8,2,1.0,0.1,0.1,0\n\
         0,all_reduce,float,sum,-1,2,in_place,8,2,1.0,0.1,0.1,0\n"
    );
    let set = read_str("r.csv", &csv).expect("recognised");
    let reasons: Vec<String> = set
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.source.line, s.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            "2: placement `sideways` is neither out_of_place nor in_place",
            "3: cycle `x` is not an integer",
        ]
    );
    assert_eq!(set.rows.len(), 1);
    // A quote left open runs to the end of the file (RFC 4180 allows line breaks in quoted
    // fields): the rest of the file is that one record, skipped for its field count.
    let open = format!(
        "{CSV_HEAD}\n0,all_reduce,float,sum,-1,2,in_place,8,2,1.0,0.1,0.1,0,\"open\n\
         0,all_reduce,float,sum,-1,2,in_place,8,2,1.0,0.1,0.1,0\n"
    );
    let set = read_str("r.csv", &open).expect("recognised");
    assert_eq!(set.skipped.len(), 1);
    assert_eq!(set.skipped[0].source.line, 2);
    assert_eq!(set.skipped[0].reason, "14 fields, the header has 13");
}

#[test]
fn directories_hold_only_their_result_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rows = format!("{CSV_HEAD}\n0,all_reduce,float,sum,-1,2,in_place,8,2,1.0,0.1,0.1,0\n");
    fs::write(dir.path().join("b.csv"), &rows).expect("write");
    fs::write(dir.path().join("a.dat"), &rows).expect("write");
    fs::write(dir.path().join("notes.txt"), "not a result\n").expect("write");
    fs::create_dir(dir.path().join("sub")).expect("mkdir");
    fs::write(dir.path().join("sub/c.csv"), &rows).expect("write");
    let set = read_files(&[dir.path().to_path_buf()]).expect("two result files");
    let files: Vec<String> = set.rows.iter().map(|r| r.source.file.clone()).collect();
    // Sorted, by content not extension, not recursive.
    assert_eq!(
        files,
        [
            dir.path().join("a.dat").display().to_string(),
            dir.path().join("b.csv").display().to_string()
        ]
    );
    let empty = tempfile::tempdir().expect("tempdir");
    fs::write(empty.path().join("notes.txt"), "not a result\n").expect("write");
    assert!(usage(read_files(&[empty.path().to_path_buf()])).contains("no result files"));
    // A named file that is not a result file is an error, unlike inside a directory.
    assert!(usage(read_files(&[dir.path().join("notes.txt")])).contains("not a result file"));
}
