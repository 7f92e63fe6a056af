//! The JSON document of `ncclbench logs --json`, schema `ncclbench-logs/1`: a stable
//! interface (keys are added within a schema version, never renamed or removed).
//!
//! Top level: `schema`, `nccl_version` (the one version seen, or `null` when none or several),
//! `nccl_versions`, `files`, `hosts`, `communicators`, `env`, `decisions` (per communicator,
//! collective, bytes and choice: `collective`, `bytes`, `algo`, `proto`, `channels_lo`,
//! `channels_hi`, `count`, plus `comm`, `path`, `kernel`, `model_time_us`, `first`),
//! `model_table` (one entry per printed table: `comm`, `host`, `first`, `cells` of
//! `collective`, `algo`, `proto`, `latency_us`, `bandwidth_gbs`), `findings` (`rule`,
//! `severity`, `title`, `detail`, `evidence` of `file`, `line`, `text`), `warnings` (the
//! parser's counted problems: `file`, `kind`, `description`, `count`, `first_line`) and
//! `nccl_warns` (WARN lines by kind). Algorithms and protocols use NCCL's table spelling
//! (`Tree Ring CollNetDirect CollNetChain NVLS NVLSTree PAT`, `LL LL128 Simple`).

use super::Report;
use crate::logs::summary::Evidence;
use serde_json::{json, Value};

/// Schema name and version.
pub const SCHEMA: &str = "ncclbench-logs/1";

/// Renders the document (pretty-printed, newline-terminated).
pub fn render(rep: &Report<'_>) -> String {
    let mut s = serde_json::to_string_pretty(&document(rep)).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

fn evidence(rep: &Report<'_>, e: &Evidence) -> Value {
    json!({"file": rep.redact.text(&e.file), "line": e.line, "text": rep.redact.text(&e.text)})
}

/// The document as a JSON value.
pub fn document(rep: &Report<'_>) -> Value {
    let r = rep.redact;
    let versions: Vec<String> = rep
        .summary
        .versions()
        .into_iter()
        .map(|v| r.text(v))
        .collect();
    json!({
        "schema": SCHEMA,
        "nccl_version": if versions.len() == 1 { json!(versions[0]) } else { Value::Null },
        "nccl_versions": versions,
        "unattributed_versions": rep.summary.unattributed_versions.values().map(|e| evidence(rep, e)).collect::<Vec<_>>(),
        "files": files(rep),
        "hosts": hosts(rep),
        "communicators": communicators(rep),
        "env": env(rep),
        "decisions": decisions(rep),
        "model_table": model_tables(rep),
        "findings": findings(rep),
        "warnings": warnings(rep),
        "nccl_warns": nccl_warns(rep),
    })
}

/// `files`: per log file its line counts and what it held.
fn files(rep: &Report<'_>) -> Vec<Value> {
    let r = rep.redact;
    rep.summary
        .files
        .iter()
        .map(|f| {
            json!({"name": r.text(&f.name), "lines": f.lines, "nccl_lines": f.nccl_lines,
                   "colls": f.colls, "decisions": f.decisions})
        })
        .collect()
}

/// `hosts`: per host its processes, versions, networks, GPUDirect RDMA, transports and links.
fn hosts(rep: &Report<'_>) -> Vec<Value> {
    let r = rep.redact;
    rep.summary
        .hosts
        .iter()
        .map(|(name, h)| {
            let t = |t| h.transports.get(&t).map_or(0, |x: &(u64, Evidence)| x.0);
            json!({
                "host": rep.host(name),
                "pids": h.pids.iter().map(|p| r.pid_number(*p)).collect::<Vec<_>>(),
                "versions": h.versions.keys().map(|v| r.text(v)).collect::<Vec<_>>(),
                "bootstrap": h.bootstrap.keys().map(|v| r.text(v)).collect::<Vec<_>>(),
                "networks": h.networks.keys().map(|v| r.text(v)).collect::<Vec<_>>(),
                "nics": h.nics.iter().map(|n| json!({"name": n.name, "link": n.link})).collect::<Vec<_>>(),
                "gdr": {"enabled": h.gdr_enabled, "disabled": h.gdr_disabled,
                        "distances": h.gdr_distances.iter().map(|(d, l)| json!([d, l])).collect::<Vec<_>>()},
                "transports": {"P2P": t(crate::logs::Transport::P2P), "SHM": t(crate::logs::Transport::Shm),
                               "NET": t(crate::logs::Transport::Net)},
                "net_gdr": h.net_gdr,
                "nvls_available": h.nvls.as_ref().map(|x| x.0),
                "nvlink": h.nvlink,
            })
        })
        .collect()
}

/// `communicators`: per communicator its ranks, initialisation, channels, connections and
/// collective counts.
fn communicators(rep: &Report<'_>) -> Vec<Value> {
    let r = rep.redact;
    rep.summary
        .comms
        .iter()
        .map(|(k, c)| {
            json!({
                "comm": rep.comm(k),
                "nranks": c.nranks,
                "ranks": c.ranks.iter().map(|(rank, i)| json!({
                    "rank": rank, "host": rep.host(&i.host), "pid": r.pid_number(i.pid),
                    "cuda_dev": i.cuda_dev, "bus_id": i.bus_id.map(|b| r.bus(b))})).collect::<Vec<_>>(),
                "init_complete": c.complete.len(),
                "channels": c.channels,
                "connected": c.connected.keys().map(|t| r.text(t)).collect::<Vec<_>>(),
                "colls": c.colls.iter().map(|(f, n)| (f.as_str().to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
            })
        })
        .collect()
}

/// `env`: one entry per NCCL variable and value, with the hosts that set it so.
fn env(rep: &Report<'_>) -> Vec<Value> {
    let r = rep.redact;
    rep.summary
        .env
        .iter()
        .flat_map(|(name, e)| {
            e.values.iter().map(move |(v, (hosts, _))| {
                json!({"name": name, "value": r.env_value(name, v),
                       "hosts": hosts.iter().map(|h| rep.host(h)).collect::<Vec<_>>()})
            })
        })
        .collect()
}

/// `decisions`: one entry per communicator, collective, size and choice of algorithm,
/// protocol and channels.
fn decisions(rep: &Report<'_>) -> Vec<Value> {
    rep.summary
        .decisions
        .iter()
        .flat_map(|((k, func, bytes), choices)| {
            choices.iter().map(move |c| {
                let ch = &c.choice;
                json!({
                    "comm": rep.comm(k),
                    "collective": func.map(|f| f.as_str()),
                    "bytes": bytes,
                    "algo": ch.algo.map(|a| a.as_str()),
                    "proto": ch.proto.map(|p| p.as_str()),
                    "channels_lo": ch.channels_lo,
                    "channels_hi": ch.channels_hi,
                    "count": c.count,
                    "path": ch.path,
                    "kernel": ch.kernel,
                    "model_time_us": c.model_time_us,
                    "first": rep.place(&c.first.0, c.first.1),
                })
            })
        })
        .collect()
}

/// `model_table`: one entry per printed tuning-model table, its cells flattened.
fn model_tables(rep: &Report<'_>) -> Vec<Value> {
    rep.summary
        .model_tables
        .iter()
        .map(|t| {
            let cells: Vec<Value> = t
                .rows
                .iter()
                .flat_map(|(f, cells)| {
                    cells.iter().map(move |c| {
                        json!({"collective": f.as_str(), "algo": c.algo.as_str(), "proto": c.proto.as_str(),
                               "latency_us": finite(c.latency_us), "bandwidth_gbs": finite(c.bandwidth_gbs)})
                    })
                })
                .collect();
            json!({"comm": t.comm.as_ref().map(|k| rep.comm(k)), "host": rep.host(&t.host),
                   "first": t.first.as_ref().map(|(f, l)| rep.place(f, *l)), "cells": cells})
        })
        .collect()
}

/// `findings`: the rules' findings with their evidence lines.
fn findings(rep: &Report<'_>) -> Vec<Value> {
    let r = rep.redact;
    rep.findings
        .iter()
        .map(|f| {
            json!({"rule": f.rule, "severity": f.severity, "title": r.text(&f.title),
                   "detail": r.text(&f.detail),
                   "evidence": f.evidence.iter().map(|e| evidence(rep, e)).collect::<Vec<_>>()})
        })
        .collect()
}

/// `warnings`: the parser's counted problems, per file and kind.
fn warnings(rep: &Report<'_>) -> Vec<Value> {
    let r = rep.redact;
    rep.summary
        .files
        .iter()
        .flat_map(|f| {
            f.warnings.iter().map(move |(k, (n, first))| {
                json!({"file": r.text(&f.name), "kind": k, "description": k.describe(),
                       "count": n, "first_line": first})
            })
        })
        .collect()
}

/// `nccl_warns`: NCCL's own WARN lines, grouped by kind.
fn nccl_warns(rep: &Report<'_>) -> Vec<Value> {
    let r = rep.redact;
    rep.summary
        .warns
        .iter()
        .map(|(kind, g)| {
            json!({"kind": r.text(kind), "count": g.count,
                   "hosts": g.hosts.iter().map(|h| rep.host(h)).collect::<Vec<_>>(),
                   "examples": g.examples.iter().map(|e| evidence(rep, e)).collect::<Vec<_>>()})
        })
        .collect()
}

/// JSON has no NaN or infinity.
fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}
