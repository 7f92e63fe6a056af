//! Tests of the Inspector readers through [`read_paths`](super::read_paths): JSON records of
//! each documented shape ([`json`]), files cut mid-object or broken inside ([`truncation`]),
//! every layout read in blocks and pieces as one scan reads it ([`layouts`]), dump
//! directories, gzip and bad input ([`files`]), Prometheus snapshots ([`prometheus`]).

mod files;
mod json;
mod layouts;
mod prometheus;
mod truncation;

use super::{read_paths, InspectorSet};
use crate::analysis::inspector::record::Record;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A v4.0 AllReduce record as the plugin writes it (with `comm_name` and the timing source,
/// which newer versions write), on one line.
const ALL_REDUCE: &str = r#"{"header":{"id":"0x7f8c496ae9f661","comm_name":"DP Group 0","rank":2,"n_ranks":8,"nnodes":1},"metadata":{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":"nccl_profiler_interface","dump_timestamp_us":1748030377748202,"hostname":"example-hostname","pid":1639453},"coll_perf":{"coll":"AllReduce","coll_sn":1407,"coll_msg_size_bytes":17179869184,"coll_exec_time_us":61974,"coll_timing_source":"kernel_gpu","coll_algobw_gbs":277.210914,"coll_busbw_gbs":485.119099}}"#;

/// An older record: no `comm_name`, no timing source.
const OLD_ALL_GATHER: &str = r#"{"header":{"id":"0xabc","rank":0,"n_ranks":4,"nnodes":1},"metadata":{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":"profiler_plugin","dump_timestamp_us":1000,"hostname":"h1","pid":7},"coll_perf":{"coll":"AllGather","coll_sn":3,"coll_msg_size_bytes":1048576,"coll_exec_time_us":100,"coll_algobw_gbs":41.943040,"coll_busbw_gbs":31.457280}}"#;

/// A P2P send to rank 5.
const SEND: &str = r#"{"header":{"id":"0xdef","comm_name":"PP","rank":4,"n_ranks":8,"nnodes":2},"metadata":{"inspector_output_format_version":"v4.0","git_rev":"x","rec_mechanism":"nccl_profiler_interface","dump_timestamp_us":2000,"hostname":"h2","pid":9},"p2p_perf":{"p2p":"Send","p2p_sn":11,"p2p_peer":5,"p2p_msg_size_bytes":65536,"p2p_exec_time_us":8,"p2p_timing_source":"kernel_cpu","p2p_algobw_gbs":8.192000,"p2p_busbw_gbs":8.192000}}"#;

/// Writes `content` to `dir/name`.
fn write(dir: &Path, name: &str, content: &[u8]) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, content).unwrap();
    path
}

/// `content` gzip-compressed.
fn gz(content: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(content).unwrap();
    enc.finish().unwrap()
}

/// Each record's fields.
fn parts(records: &[Record]) -> Vec<Record> {
    records.to_vec()
}

/// Reads one file that must read.
fn read_one(path: &Path) -> InspectorSet {
    match read_paths(&[path.to_path_buf()]) {
        Ok(set) => set,
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

/// The message of a read that must fail.
fn read_err(paths: &[PathBuf]) -> String {
    match read_paths(paths) {
        Ok(set) => panic!("read {} records, wanted an error", set.records.len()),
        Err(e) => e.to_string(),
    }
}
