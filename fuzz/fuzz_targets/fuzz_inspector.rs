//! Fuzz target: arbitrary bytes as an NCCL Inspector file (JSON records, a Prometheus
//! textfile, or gzip of either, told by content) through the sniff and the reader; any panic
//! is a bug, and so is a reader that accepts a file the sniff rejects or the reverse. The
//! readers take paths, so each input is written to one file of this process.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ncclbench::analysis::inspector::{looks_like_inspector, read_paths};
use std::path::PathBuf;
use std::sync::OnceLock;

fn scratch() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("ncclbench-fuzz-inspector-{}", std::process::id()))
    })
}

fuzz_target!(|data: &[u8]| {
    let path = scratch();
    std::fs::write(path, data).unwrap();
    let sniffed = looks_like_inspector(path);
    let read = read_paths(std::slice::from_ref(path));
    assert_eq!(sniffed, read.is_ok(), "sniff and reader disagree: {:?}", read.err());
});
