//! What the result files record about the setup behind them: GPU names, hosts and
//! processes, NCCL version, backend.
//!
//! The row readers keep only rows, so the run headers are read here, from the same files:
//! nccl-tests/ncclbench text (`# Rank r Group g Pid p on HOST device d [pci] NAME`,
//! `nccl-library=CODE`, `# backend: NAME`, `NCCL version V` bare or prefixed), JSON
//! (`config.devices`, `nccl_version`, `ncclbench.backend`) and CSV (the `backend` column). A
//! file that records nothing contributes nothing; nothing here fails on any input.

use crate::core::files::{expand, Take};
use serde_json::Value;
use std::collections::BTreeSet;
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
        if let Some(text) = load(&file) {
            let mut facts = Facts::default();
            scan(&text, &mut facts);
            out.push((file.display().to_string(), facts));
        }
    }
    out
}

/// The facts of every file under `paths`.
pub fn gather(paths: &[PathBuf]) -> Facts {
    let mut facts = Facts::default();
    for file in expand(paths, Take::Regular) {
        if let Some(text) = load(&file) {
            scan(&text, &mut facts);
        }
    }
    facts
}

/// A file's text, invalid UTF-8 replaced; `None` when it cannot be read or is no regular
/// file (a FIFO was consumed by the row reader: opening it again would wait for a writer).
fn load(path: &Path) -> Option<String> {
    if !path.is_file() {
        return None;
    }
    std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Adds what `text` records to `facts`.
pub fn scan(text: &str, facts: &mut Facts) {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('{') {
        scan_json(body, facts);
    } else if body
        .lines()
        .next()
        .is_some_and(|l| l.contains("busbw_gbs,") || l.ends_with("busbw_gbs"))
    {
        scan_csv(body, facts);
    } else {
        scan_text(body, facts);
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

fn scan_text(text: &str, facts: &mut Facts) {
    let mut procs: BTreeSet<(String, String)> = BTreeSet::new();
    for line in text.lines() {
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

fn scan_json(text: &str, facts: &mut Facts) {
    let Ok(doc) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let mut procs = BTreeSet::new();
    let devices = doc
        .pointer("/config/devices")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
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
    let code = doc.get("nccl_version").and_then(Value::as_u64).unwrap_or(0);
    facts.nccl_versions.extend(nccl_version(code));
    if let Some(b) = doc.pointer("/ncclbench/backend").and_then(Value::as_str) {
        facts.backends.insert(b.to_string());
    }
}

fn scan_csv(text: &str, facts: &mut Facts) {
    let mut column = None;
    for line in text.lines() {
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
mod tests {
    use super::*;

    #[test]
    fn text_headers_give_gpus_layout_and_version() {
        let text = "# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807\n\
                    # nThread 1 nGpus 1 minBytes 8\n\
                    #  Rank  0 Group  0 Pid   4242 on  node7 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n\
                    #  Rank  1 Group  0 Pid   4243 on  node8 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n\
                    node7:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n";
        let mut f = Facts::default();
        scan(text, &mut f);
        assert_eq!(
            f.gpus.into_iter().collect::<Vec<_>>(),
            ["NVIDIA H100 80GB HBM3"]
        );
        assert_eq!(
            f.layouts.into_iter().collect::<Vec<_>>(),
            ["2 hosts, 2 processes"]
        );
        assert_eq!(
            f.nccl_versions.into_iter().collect::<Vec<_>>(),
            ["2.21.5", "2.28.7"]
        );
    }

    #[test]
    fn bare_and_tagged_version_lines_of_old_nccl_count() {
        // NCCL up to 2.21 prints the version without a prefix, on rank 0's stdout only.
        for line in [
            "NCCL version 2.20.3+cuda12.2",
            "[1,0]<stdout>:NCCL version 2.20.3+cuda12.2",
            "0: NCCL version 2.20.3+cuda12.2",
        ] {
            let mut f = Facts::default();
            scan(&format!("# nThread 1 nGpus 1 minBytes 8\n{line}\n"), &mut f);
            assert_eq!(
                f.nccl_versions.into_iter().collect::<Vec<_>>(),
                ["2.20.3"],
                "{line}"
            );
        }
    }

    #[test]
    fn json_and_csv_give_what_they_record() {
        let json = r#"{"nccl_version":2708,"config":{"devices":[{"pid":1,"hostname":"a","device_info":"GPU X"}]},
                      "ncclbench":{"backend":"nccl"},"results":[]}"#;
        let mut f = Facts::default();
        scan(json, &mut f);
        assert_eq!(
            f.nccl_versions.iter().next().map(String::as_str),
            Some("2.7.8")
        );
        assert!(f.backends.contains("nccl") && f.gpus.contains("GPU X"));
        assert!(f.layouts.contains("1 host, 1 process"));
        let csv = "cycle,dtype,placement,bytes,time_us,algbw_gbs,busbw_gbs,backend\n0,float,in_place,8,1,0,0,host\n";
        let mut f = Facts::default();
        scan(csv, &mut f);
        assert_eq!(f.backends.into_iter().collect::<Vec<_>>(), ["host"]);
        // Garbage records nothing and does not panic.
        scan("{not json", &mut Facts::default());
        scan(
            "# Rank\n# Rank x Pid\n#nccl-library=zz\n",
            &mut Facts::default(),
        );
    }
}
