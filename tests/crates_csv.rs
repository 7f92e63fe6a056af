//! CSV written and read through the `csv` crate, end to end: a host run's `--csv` file, then
//! the same records with CRLF line ends, a UTF-8 BOM, the columns shuffled and an unknown
//! quoted column holding a comma, a quote and a line break, give `analyze` the same report.

use crate::support::bin::ncclbench;
use std::path::Path;

/// `analyze --format json` of `file`, with the file's name taken out.
fn report(file: &Path) -> String {
    let out = ncclbench()
        .args(["analyze", "--format", "json"])
        .arg(file)
        .output()
        .expect("analyze");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    String::from_utf8_lossy(&out.stdout).replace(&file.display().to_string(), "FILE")
}

#[test]
fn a_mangled_but_valid_copy_of_a_run_reads_as_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = dir.path().join("r.csv");
    let out = ncclbench()
        .args([
            "all_reduce",
            "-b",
            "8",
            "-e",
            "4K",
            "-f",
            "4",
            "-g",
            "2",
            "-n",
            "2",
            "-w",
            "1",
        ])
        .arg("--csv")
        .arg(&plain)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut reader = csv::Reader::from_path(&plain).expect("read back");
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("record")).collect();
    assert!(records.len() >= 10, "{} records", records.len());
    // Reversed columns, an unknown first column needing every kind of quoting.
    let order: Vec<usize> = (0..header.len()).rev().collect();
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(vec![0xEF, 0xBB, 0xBF]);
    let mut head = vec!["note".to_string()];
    head.extend(order.iter().map(|&i| header[i].clone()));
    w.write_record(&head).expect("write");
    for r in &records {
        let mut fields = vec!["a, \"b\"\nc".to_string()];
        fields.extend(order.iter().map(|&i| r[i].to_string()));
        w.write_record(&fields).expect("write");
    }
    let mangled = dir.path().join("m.csv");
    std::fs::write(&mangled, w.into_inner().expect("bytes")).expect("write");
    let text = std::fs::read_to_string(&mangled).expect("text");
    assert!(
        text.starts_with('\u{feff}')
            && text.contains("\"a, \"\"b\"\"\nc\",")
            && text.contains("\r\n")
    );

    assert_eq!(report(&mangled), report(&plain));
}
