//! A Prometheus textfile snapshot (`NCCL_INSPECTOR_PROM_DUMP=1`) into records: one record per
//! label set, joining its bandwidth and time samples.
//!
//! The plugin writes, per communicator bucket, `nccl_bus_bandwidth_gbs{L} V` and
//! `nccl_collective_exec_time_microseconds{L} V` (P2P: `nccl_p2p_bus_bandwidth_gbs`,
//! `nccl_p2p_exec_time_microseconds`), where L is `version, slurm_job_id, node, gpu,
//! comm_name, n_nodes, nranks, collective, message_size, algo_proto` (P2P: `p2p_operation`
//! instead of `collective`, no `algo_proto`). The bandwidth is the geometric mean of the
//! bucket's calls (0 when none had a positive one), the time their arithmetic mean. The
//! bucket is of the written message size: with V = the size in the largest 1024-based unit
//! (`B`, `KB`, `MB`, `GB`, `TB`) that keeps it at least 1, `floor(V)-floor(V)+1UNIT`, so
//! `512-513MB` is `[512 MiB, 513 MiB)`; a zero size is `0B`. No communicator hash, rank, pid
//! or timing source is written: those fields are empty (`comm_id` is `""`).
//!
//! Label values are read with Prometheus' escapes (`\\`, `\"`, `\n`); `#` lines are comments;
//! an optional sample timestamp (milliseconds) becomes the record's time. A label set without
//! its time sample, a missing required label (`nranks`, `message_size`, the operation) or a bad
//! bucket is a skipped entry at the line of its first sample.

use super::convention::{apply, bucket_rule, collective, p2p};
use super::tally::Tally;
use crate::analysis::inspector::record::{Op, Origin, Record, Size, Source};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::sync::Arc;

/// One sample line: metric, labels in order, value, timestamp in ms.
type Sample = (String, Vec<(String, String)>, f64, Option<i64>);

/// Parses `name{a="b",...} value [timestamp]`.
pub(super) fn sample(line: &str) -> Result<Sample, String> {
    let end = line
        .find(|c: char| c == '{' || c.is_ascii_whitespace())
        .ok_or("no value after the metric name")?;
    let (name, mut rest) = line.split_at(end);
    if name.is_empty() {
        return Err("no metric name".into());
    }
    let mut labels = Vec::new();
    if let Some(body) = rest.strip_prefix('{') {
        let mut chars = body.char_indices().peekable();
        loop {
            while chars.next_if(|(_, c)| *c == ' ' || *c == ',').is_some() {}
            match chars.peek() {
                Some((i, '}')) => {
                    rest = &body[i + 1..];
                    break;
                }
                None => return Err("labels not closed".into()),
                _ => {}
            }
            let mut key = String::new();
            while let Some((_, c)) = chars.next_if(|(_, c)| c.is_ascii_alphanumeric() || *c == '_')
            {
                key.push(c);
            }
            if key.is_empty() || chars.next().map(|x| x.1) != Some('=') {
                return Err(format!("bad label near `{key}`"));
            }
            if chars.next().map(|x| x.1) != Some('"') {
                return Err(format!("label {key}: value not quoted"));
            }
            let mut value = String::new();
            loop {
                match chars.next().map(|x| x.1) {
                    Some('"') => break,
                    Some('\\') => match chars.next().map(|x| x.1) {
                        Some('n') => value.push('\n'),
                        Some(c @ ('\\' | '"')) => value.push(c),
                        _ => return Err(format!("label {key}: bad escape")),
                    },
                    Some(c) => value.push(c),
                    None => return Err(format!("label {key}: value not closed")),
                }
            }
            labels.push((key, value));
        }
    }
    let mut fields = rest.split_ascii_whitespace();
    let value = fields.next().ok_or("no value")?;
    let value: f64 = value
        .parse()
        .map_err(|_| format!("value `{value}` is not a number"))?;
    let ts = match fields.next() {
        Some(t) => Some(
            t.parse()
                .map_err(|_| format!("timestamp `{t}` is not an integer"))?,
        ),
        None => None,
    };
    if fields.next().is_some() {
        return Err("text after the timestamp".into());
    }
    Ok((name.to_string(), labels, value, ts))
}

/// A `message_size` bucket string.
pub(super) fn bucket(s: &str) -> Result<Size, String> {
    let bad = || format!("message_size `{s}` is not a bucket like 512-513MB");
    if s == "0B" {
        return Ok(Size::Exact(0));
    }
    let digits = s
        .find(|c: char| !c.is_ascii_digit() && c != '-')
        .ok_or_else(bad)?;
    let (range, unit) = s.split_at(digits);
    let shift = match unit {
        "B" => 0,
        "KB" => 10,
        "MB" => 20,
        "GB" => 30,
        "TB" => 40,
        _ => return Err(bad()),
    };
    let (lo, hi) = range.split_once('-').ok_or_else(bad)?;
    let num = |t: &str| {
        t.parse::<u64>()
            .ok()
            .and_then(|v| v.checked_mul(1u64 << shift))
    };
    match (num(lo), num(hi)) {
        (Some(lo), Some(hi)) if lo < hi => Ok(Size::Bucket { lo, hi }),
        _ => Err(bad()),
    }
}

/// The two samples of one label set.
#[derive(Default)]
struct Entry {
    line: u64,
    p2p: bool,
    labels: Vec<(String, String)>,
    busbw: Option<f64>,
    time: Option<f64>,
    ts: Option<i64>,
}

/// The record of one label set.
fn record(e: Entry, file: &Arc<PathBuf>) -> Result<Record, String> {
    let get = |k: &str| {
        e.labels
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    let need = |k: &str| get(k).ok_or(format!("no `{k}` label"));
    let count = |k: &str| -> Result<Option<u32>, String> {
        get(k)
            .map(|v| {
                v.parse()
                    .map_err(|_| format!("label {k}=\"{v}\" is not a count"))
            })
            .transpose()
    };
    let nranks = count("nranks")?.ok_or("no `nranks` label")?;
    if nranks == 0 {
        return Err("label nranks=\"0\": a communicator has at least one rank".into());
    }
    let op = if e.p2p {
        let name = need("p2p_operation")?;
        p2p(&name, None).unwrap_or_else(|| Op::Other(name.into()))
    } else {
        let name = need("collective")?;
        collective(&name).map_or_else(|| Op::Other(name.into()), Op::Collective)
    };
    let raw_size = bucket(&need("message_size")?)?;
    let time_us = e
        .time
        .ok_or("a bandwidth sample without its exec time sample")?;
    let rule = bucket_rule(&op);
    let size = apply(rule, raw_size, nranks).ok_or("message_size times nranks overflows")?;
    let source = Source {
        file: Arc::clone(file),
        origin: Origin::Prometheus,
        comm_id: String::new(),
        comm_name: get("comm_name"),
        rank: None,
        nranks,
        nnodes: count("n_nodes")?,
        host: get("node"),
        pid: None,
        gpu: get("gpu"),
        algo_proto: get("algo_proto"),
        format_version: get("version"),
    };
    Ok(Record {
        source: Arc::new(source),
        op,
        seq: None,
        size,
        size_rule: rule,
        time_us,
        timing: None,
        // A NaN sample is no bandwidth.
        busbw_gbs: e.busbw.filter(|b| !b.is_nan()),
        timestamp_us: e
            .ts
            .and_then(|ms| u64::try_from(ms).ok()?.checked_mul(1000)),
    })
}

/// Parses the textfile `file` from `reader`.
pub(super) fn read(file: Arc<PathBuf>, reader: Box<dyn Read + Send>) -> Tally {
    let mut tally = Tally::default();
    let mut entries: Vec<Entry> = Vec::new();
    let mut index: HashMap<(bool, Vec<(String, String)>), usize> = HashMap::new();
    let name = file.display().to_string();
    for (n, line) in BufReader::new(reader).lines().enumerate() {
        let at = n as u64 + 1;
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                tally.note(format!("{name}: read stopped at line {at}: {e}"));
                break;
            }
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (metric, labels, value, ts) = match sample(line) {
            Ok(s) => s,
            Err(why) => {
                tally.skip(at, why);
                continue;
            }
        };
        let (p2p, bw) = match metric.as_str() {
            "nccl_bus_bandwidth_gbs" => (false, true),
            "nccl_collective_exec_time_microseconds" => (false, false),
            "nccl_p2p_bus_bandwidth_gbs" => (true, true),
            "nccl_p2p_exec_time_microseconds" => (true, false),
            other => {
                tally.ignored_metric(other);
                continue;
            }
        };
        let i = *index.entry((p2p, labels.clone())).or_insert_with(|| {
            entries.push(Entry {
                line: at,
                p2p,
                labels,
                ..Entry::default()
            });
            entries.len() - 1
        });
        let e = &mut entries[i];
        let slot = if bw { &mut e.busbw } else { &mut e.time };
        if slot.is_some() {
            tally.skip(
                at,
                format!("a second `{metric}` sample for the same labels"),
            );
            continue;
        }
        *slot = Some(value);
        e.ts = e.ts.or(ts);
    }
    for e in entries {
        let line = e.line;
        match record(e, &file) {
            Ok(r) => tally.record(r, false),
            Err(why) => tally.skip(line, why),
        }
    }
    tally
}
