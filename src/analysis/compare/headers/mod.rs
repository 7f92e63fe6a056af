//! What the result files record about the setup behind them: GPU names, hosts and
//! processes, NCCL version, backend.
//!
//! The row readers keep only rows, so the run headers are read here, from the same files:
//! nccl-tests/ncclbench text (`# Rank r Group g Pid p on HOST device d [pci] NAME`,
//! `nccl-library=CODE`, `# backend: NAME`, `NCCL version V` bare or prefixed), JSON
//! (`config.devices`, `nccl_version`, `ncclbench.backend`) and CSV (the `backend` column). A
//! file that records nothing contributes nothing; nothing here fails on any input.

use crate::core::files::{expand, Take};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Setup facts gathered from files (sets, so the order of files does not matter).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// Device names.
    pub gpus: BTreeSet<String>,
    /// `H host(s), P process(es)` per run.
    pub layouts: BTreeSet<String>,
    /// NCCL versions.
    pub nccl_versions: BTreeSet<String>,
    /// Backends.
    pub backends: BTreeSet<String>,
}

impl Facts {
    /// The setup as one line (`GPU NVIDIA H100 80GB HBM3; 2 hosts, 16 processes; NCCL
    /// 2.22.3`); empty when nothing is recorded.
    pub fn label(&self) -> String {
        let join = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
        let mut parts = Vec::new();
        if !self.gpus.is_empty() {
            parts.push(format!("GPU {}", join(&self.gpus)));
        }
        if !self.layouts.is_empty() {
            parts.push(join(&self.layouts));
        }
        if !self.nccl_versions.is_empty() {
            parts.push(format!("NCCL {}", join(&self.nccl_versions)));
        }
        if !self.backends.is_empty() {
            parts.push(format!("backend {}", join(&self.backends)));
        }
        parts.join("; ")
    }
}

/// The facts of each file under `paths`, keyed as the readers name files
/// (`path.display()`); files that cannot be read are left out.
pub fn per_file(paths: &[PathBuf]) -> Vec<(String, Facts)> {
    let mut out = Vec::new();
    for file in expand(paths, Take::Regular) {
        let mut facts = Facts::default();
        if scan_file(&file, &mut facts) {
            out.push((file.display().to_string(), facts));
        }
    }
    out
}

/// The facts of every file under `paths`.
pub fn gather(paths: &[PathBuf]) -> Facts {
    let mut facts = Facts::default();
    for file in expand(paths, Take::Regular) {
        scan_file(&file, &mut facts);
    }
    facts
}

/// Adds what the file at `path` records to `facts`, streaming it (memory stays bounded by a
/// line, whatever the file's size); false when it cannot be read or is no regular file (a FIFO
/// was consumed by the row reader: opening it again would wait for a writer).
fn scan_file(path: &Path, facts: &mut Facts) -> bool {
    if !path.is_file() {
        return false;
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let Ok(head) = reader.fill_buf() else {
        return false;
    };
    let head = String::from_utf8_lossy(head);
    let body = head.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('{') {
        scan_json(reader, facts);
    } else if is_csv_header(body.lines().next()) {
        scan_csv(lines(reader), facts);
    } else {
        scan_text(lines(reader), facts);
    }
    true
}

/// The lines of `reader`, invalid UTF-8 replaced, up to the end or the first read error.
fn lines(mut reader: impl BufRead) -> impl Iterator<Item = String> {
    let mut buf = Vec::new();
    std::iter::from_fn(move || {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(
                String::from_utf8_lossy(&buf)
                    .trim_end_matches('\n')
                    .to_string(),
            ),
        }
    })
}

fn is_csv_header(first: Option<&str>) -> bool {
    first.is_some_and(|l| l.contains("busbw_gbs,") || l.ends_with("busbw_gbs"))
}

/// Adds what `text` records to `facts`.
pub fn scan(text: &str, facts: &mut Facts) {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('{') {
        scan_json(body.as_bytes(), facts);
    } else if is_csv_header(body.lines().next()) {
        scan_csv(body.lines(), facts);
    } else {
        scan_text(body.lines(), facts);
    }
}

/// `2.28.7` from NCCL's version code (`X*10000 + Y*100 + Z`, or `X*1000 + Y*100 + Z` before
/// 2.9); `None` for 0 (no NCCL: the host backend).
pub fn nccl_version(code: u64) -> Option<String> {
    match code {
        0 => None,
        c if c < 10_000 => Some(format!("{}.{}.{}", c / 1000, c % 1000 / 100, c % 100)),
        c => Some(format!("{}.{}.{}", c / 10_000, c % 10_000 / 100, c % 100)),
    }
}

/// Layout text of one run's (host, pid) pairs.
fn layout(procs: &BTreeSet<(String, String)>) -> Option<String> {
    if procs.is_empty() {
        return None;
    }
    let hosts: BTreeSet<&String> = procs.iter().map(|(h, _)| h).collect();
    let plural =
        |n: usize, what: &str, many: &str| format!("{n} {}", if n == 1 { what } else { many });
    Some(format!(
        "{}, {}",
        plural(hosts.len(), "host", "hosts"),
        plural(procs.len(), "process", "processes")
    ))
}

fn scan_text<S: AsRef<str>>(lines: impl Iterator<Item = S>, facts: &mut Facts) {
    let mut procs: BTreeSet<(String, String)> = BTreeSet::new();
    for line in lines {
        let line = line.as_ref();
        if let Some(v) = crate::logs::version_in_line(line.as_bytes()) {
            facts.nccl_versions.insert(v.to_string());
        }
        let Some(at) = line.find('#') else { continue };
        let rest = line[at + 1..].trim();
        let tokens: Vec<&str> = rest.split_whitespace().collect();
        if tokens.first() == Some(&"nThread") {
            facts.layouts.extend(layout(&procs));
            procs.clear();
        } else if let Some(code) = rest.split("nccl-library=").nth(1) {
            let code = code.split_whitespace().next().unwrap_or("");
            facts
                .nccl_versions
                .extend(code.parse().ok().and_then(nccl_version));
        } else if let Some(b) = rest.strip_prefix("backend:") {
            facts
                .backends
                .extend(b.split_whitespace().next().map(str::to_string));
        } else if tokens.first() == Some(&"Rank") && tokens.len() > 2 {
            let after = |key: &str| {
                let i = tokens.iter().position(|t| *t == key)?;
                tokens.get(i + 1).map(|s| s.to_string())
            };
            if let (Some(pid), Some(host)) = (after("Pid"), after("on")) {
                procs.insert((host, pid));
            }
            if let Some((_, name)) = rest.split_once(']') {
                if !name.trim().is_empty() {
                    facts.gpus.insert(name.trim().to_string());
                }
            }
        }
    }
    facts.layouts.extend(layout(&procs));
}

/// The parts of a result JSON that name its setup; everything else (`results` above all) is
/// skipped as it is parsed, never held.
#[derive(Deserialize, Default)]
#[serde(default)]
struct SetupDoc {
    config: SetupConfig,
    nccl_version: Value,
    ncclbench: SetupNcclbench,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SetupConfig {
    devices: Value,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SetupNcclbench {
    backend: Value,
}

fn scan_json(reader: impl std::io::Read, facts: &mut Facts) {
    let Ok(doc) = serde_json::from_reader::<_, SetupDoc>(reader) else {
        return;
    };
    let mut procs = BTreeSet::new();
    let devices = doc.config.devices.as_array().map_or(&[][..], Vec::as_slice);
    for d in devices {
        let text = |k: &str| match d.get(k) {
            Some(Value::String(s)) => Some(s.trim().to_string()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        if let Some(name) = text("device_info").filter(|n| !n.is_empty()) {
            facts.gpus.insert(name);
        }
        if let (Some(h), Some(p)) = (text("hostname"), text("pid")) {
            procs.insert((h, p));
        }
    }
    facts.layouts.extend(layout(&procs));
    let code = doc.nccl_version.as_u64().unwrap_or(0);
    facts.nccl_versions.extend(nccl_version(code));
    if let Some(b) = doc.ncclbench.backend.as_str() {
        facts.backends.insert(b.to_string());
    }
}

fn scan_csv<S: AsRef<str>>(lines: impl Iterator<Item = S>, facts: &mut Facts) {
    let mut column = None;
    for line in lines {
        let line = line.as_ref();
        let fields: Vec<&str> = line.trim_end_matches('\r').split(',').collect();
        if fields.contains(&"busbw_gbs") {
            column = fields.iter().position(|f| *f == "backend");
            continue;
        }
        if line.contains('"') {
            continue; // quoted fields could shift the columns; the backend is never quoted
        }
        if let Some(b) = column.and_then(|i| fields.get(i)).filter(|b| !b.is_empty()) {
            facts.backends.insert(b.to_string());
        }
    }
}

#[cfg(test)]
mod tests;
