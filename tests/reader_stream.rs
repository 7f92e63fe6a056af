//! Readers and FIFOs: `analyze`, `compare` and `logs` given a named FIFO that no process has
//! opened for writing say on stderr that they wait for a writer (instead of hanging silently),
//! then read what the writer sends; `compare` does not open the FIFO a second time.

use crate::support::bin::{self, ncclbench};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A FIFO at `path` (via `mkfifo`, which every Linux has).
fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(ok.success());
}

/// Runs ncclbench with `args`, waits (at most 30 s) for its stderr line about the FIFO, then
/// writes `content` into the FIFO and returns (exit code, stdout, all of stderr).
fn through_fifo(args: &[&str], fifo: &Path, content: &[u8]) -> (Option<i32>, String, String) {
    let mut child = ncclbench()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let first = rx.recv_timeout(Duration::from_secs(30));
    let Ok(first) = first else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("no stderr line within 30 s while waiting on the FIFO {args:?}");
    };
    assert_eq!(
        first,
        format!(
            "ncclbench: {} is a FIFO: waiting for a writer to open it",
            fifo.display()
        )
    );
    std::fs::OpenOptions::new()
        .write(true)
        .open(fifo)
        .and_then(|mut w| w.write_all(content))
        .expect("write the FIFO");
    let out = child.wait_with_output().expect("wait");
    let err = reader.join().expect("stderr reader");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        err,
    )
}

#[test]
fn analyze_says_it_waits_for_a_writer_then_reads_the_fifo() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("results.csv");
    mkfifo(&fifo);
    let csv = std::fs::read(bin::data("analysis/host_sweep_all_reduce.csv")).expect("sample");
    let (code, out, err) = through_fifo(&["analyze", fifo.to_str().unwrap()], &fifo, &csv);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("all_reduce"), "{out}");
}

#[test]
fn compare_reads_a_fifo_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("before.csv");
    mkfifo(&fifo);
    let before = bin::data("compare/before_all_reduce.csv");
    let csv = std::fs::read(&before).expect("sample");
    let args = ["compare", fifo.to_str().unwrap(), before.to_str().unwrap()];
    let (code, out, err) = through_fifo(&args, &fifo, &csv);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("no regression"), "{out}");
}

#[test]
fn logs_says_it_waits_for_a_writer_then_reads_the_fifo() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("nccl.log");
    mkfifo(&fifo);
    let log = b"host:1:1 [0] NCCL INFO NCCL version 2.23.4+cuda12.4\n";
    let (code, out, err) = through_fifo(&["logs", fifo.to_str().unwrap()], &fifo, log);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("2.23.4"), "{out}");
}
