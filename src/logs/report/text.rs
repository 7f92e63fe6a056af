//! The terminal report: the facts an engineer looks for first, per host and communicator
//! (version, environment, bootstrap interface, NICs and network, GPUDirect RDMA, transports,
//! channels; listed in docs/nccl-log-formats.md), then findings with their evidence, decisions
//! per (communicator, collective, bytes), tuning-model tables, environment and parse warnings.

use super::Report;
use crate::logs::event::Transport;
use crate::logs::summary::{ChoiceCount, CommFacts, CommKey, HostFacts};
use std::fmt::Write;

/// Renders the report.
pub fn render(rep: &Report<'_>) -> String {
    let s = rep.summary;
    let r = rep.redact;
    let mut o = String::new();
    let lines: u64 = s.files.iter().map(|f| f.lines).sum();
    let nccl: u64 = s.files.iter().map(|f| f.nccl_lines).sum();
    let _ = writeln!(
        o,
        "NCCL log: {} file(s), {lines} lines ({nccl} with NCCL messages), {} host(s), {} communicator(s), {} decision line(s)",
        s.files.len(),
        s.hosts.len(),
        s.comms.len(),
        s.decision_count()
    );
    for (v, e) in &s.unattributed_versions {
        let _ = writeln!(
            o,
            "NCCL version {} from an unprefixed line whose process this log does not show ({})",
            r.text(v),
            rep.place(&e.file, e.line)
        );
    }
    for (name, h) in &s.hosts {
        host(&mut o, rep, name, h);
    }
    for (k, c) in &s.comms {
        comm(&mut o, rep, k, c);
    }
    let _ = writeln!(o, "\nFindings ({})", rep.findings.len());
    if rep.findings.is_empty() {
        let _ = writeln!(o, "  none");
    }
    for f in rep.findings {
        let sev = format!("{:?}", f.severity).to_lowercase();
        let _ = writeln!(o, "  [{sev}] {}: {}", f.rule, r.text(&f.title));
        let _ = writeln!(o, "      {}", r.text(&f.detail));
        for e in &f.evidence {
            let _ = writeln!(o, "      > {}", rep.quote(e));
        }
    }
    decisions(&mut o, rep);
    tables(&mut o, rep);
    let _ = writeln!(o, "\nEnvironment ({} variable(s))", s.env.len());
    for (name, e) in &s.env {
        for (value, (hosts, _)) in &e.values {
            let value = r.env_value(name, value);
            let _ = writeln!(o, "  {name}={value} ({} host(s))", hosts.len());
        }
    }
    let _ = writeln!(o, "\nParse warnings");
    let mut any = false;
    for f in &s.files {
        for (kind, (n, first)) in &f.warnings {
            any = true;
            let _ = writeln!(
                o,
                "  {}: {n} {} (first at line {first})",
                r.text(&f.name),
                kind.describe()
            );
        }
    }
    if !any {
        let _ = writeln!(o, "  none");
    }
    o
}

fn host(o: &mut String, rep: &Report<'_>, name: &str, h: &HostFacts) {
    let r = rep.redact;
    let pids: Vec<String> = h.pids.iter().map(|p| r.pid(*p)).collect();
    let _ = writeln!(
        o,
        "\nHost {} (pids {})",
        rep.host(name),
        if pids.is_empty() {
            "-".into()
        } else {
            pids.join(" ")
        }
    );
    let join = |v: Vec<String>| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(", ")
        }
    };
    let version = if h.versions.is_empty() && !rep.summary.versions().is_empty() {
        "- (not logged for this host's processes: up to 2.21 only rank 0's process prints it)"
            .to_string()
    } else {
        join(h.versions.keys().map(|v| r.text(v)).collect())
    };
    let _ = writeln!(o, "  1 NCCL version      {version}");
    let env: Vec<String> = rep
        .summary
        .env
        .iter()
        .flat_map(|(n, e)| {
            e.values
                .iter()
                .filter(|(_, (hosts, _))| hosts.iter().any(|x| **x == *name))
                .map(move |(v, _)| format!("{n}={}", r.env_value(n, v)))
        })
        .collect();
    let _ = writeln!(o, "  2 environment       {}", join(env));
    let _ = writeln!(
        o,
        "  3 bootstrap         {}",
        join(h.bootstrap.keys().map(|b| r.text(b)).collect())
    );
    let nics: Vec<String> = h
        .nics
        .iter()
        .map(|n| format!("{}/{}", n.name, n.link))
        .collect();
    let nets: Vec<String> = h.networks.keys().map(|n| r.text(n)).collect();
    let none = if h.ib_none.is_some() {
        " (NET/IB: no device found)"
    } else {
        ""
    };
    let _ = writeln!(
        o,
        "  4 data NICs         {}{none}; network {}",
        join(nics),
        join(nets)
    );
    let dist: Vec<String> = h
        .gdr_distances
        .iter()
        .map(|(d, l)| format!("distance {d} > {l}"))
        .collect();
    let _ = writeln!(
        o,
        "  5 GPUDirect RDMA    {} enabled, {} disabled{}; NET connections with GDRDMA: {}",
        h.gdr_enabled,
        h.gdr_disabled,
        if dist.is_empty() {
            String::new()
        } else {
            format!(" ({})", dist.join(", "))
        },
        h.net_gdr
    );
    let count = |t: Transport| h.transports.get(&t).map_or(0, |x| x.0);
    let nvls = match &h.nvls {
        Some((true, _)) => "available",
        Some((false, _)) => "not available",
        None => "not logged",
    };
    let _ = writeln!(
        o,
        "  6 paths             P2P {}, SHM {}, NET {}; NVLink in topology: {}; NVLS {nvls}",
        count(Transport::P2P),
        count(Transport::Shm),
        count(Transport::Net),
        match h.nvlink {
            Some(true) => "yes",
            Some(false) => "none (topology logged)",
            None => "not shown by this log",
        }
    );
}

fn comm(o: &mut String, rep: &Report<'_>, k: &CommKey, c: &CommFacts) {
    let hosts: std::collections::BTreeSet<&str> = c.ranks.values().map(|r| &*r.host).collect();
    let _ = writeln!(
        o,
        "\nCommunicator {} ({} ranks, {} seen on {} host(s), {} Init COMPLETE)",
        rep.comm(k),
        c.nranks.map_or("?".into(), |n| n.to_string()),
        c.ranks.len(),
        hosts.len(),
        c.complete.len()
    );
    let connected: Vec<String> = c.connected.keys().map(|t| rep.redact.text(t)).collect();
    let _ = writeln!(
        o,
        "  7 channels          {}; {}",
        c.channels,
        if connected.is_empty() {
            "no Connected line".into()
        } else {
            connected.join("; ")
        }
    );
    let mine: Vec<_> = rep
        .summary
        .decisions
        .iter()
        .filter(|((ck, _, _), _)| ck == k)
        .collect();
    let funcs: std::collections::BTreeSet<&str> = mine
        .iter()
        .map(|((_, f, _), _)| f.map_or("?", |f| f.as_str()))
        .collect();
    let lines: u64 = mine
        .iter()
        .flat_map(|(_, v)| v.iter().map(|c| c.count))
        .sum();
    let calls: u64 = c.colls.values().sum();
    let _ = writeln!(
        o,
        "  8 decisions         {lines} line(s) for {} (collective, bytes) pair(s) of {}; {calls} COLL line(s)",
        mine.len(),
        if funcs.is_empty() { "-".into() } else { funcs.into_iter().collect::<Vec<_>>().join(", ") }
    );
}

fn choice(c: &ChoiceCount) -> String {
    let ch = &c.choice;
    let mut s = match (ch.algo, ch.proto) {
        (Some(a), Some(p)) => format!("{a}/{p}"),
        (Some(a), None) => a.to_string(),
        _ => format!("{:?}", ch.path),
    };
    if let (Some(lo), Some(hi)) = (ch.channels_lo, ch.channels_hi) {
        let _ = write!(s, " ch {lo}..{hi}");
    }
    if let Some(k) = &ch.kernel {
        let _ = write!(s, " {k}");
    }
    if let Some(t) = c.model_time_us {
        let _ = write!(s, " model {t:.1} us");
    }
    s
}

fn decisions(o: &mut String, rep: &Report<'_>) {
    let _ = writeln!(
        o,
        "\nDecisions (communicator, collective, bytes: choice x lines)"
    );
    if rep.summary.decisions.is_empty() {
        let _ = writeln!(
            o,
            "  none (no TUNING lines: NCCL 2.18/2.19, or NCCL_DEBUG_SUBSYS without TUNING)"
        );
    }
    let mut last: Option<(&CommKey, Option<crate::logs::Func>)> = None;
    for ((k, func, bytes), choices) in &rep.summary.decisions {
        if last != Some((k, *func)) {
            let _ = writeln!(o, "  {} {}", rep.comm(k), func.map_or("?", |f| f.as_str()));
            last = Some((k, *func));
        }
        let list: Vec<String> = choices
            .iter()
            .map(|c| format!("{} x{}", choice(c), c.count))
            .collect();
        let _ = writeln!(o, "    {bytes:>14} B  {}", list.join(" | "));
    }
}

fn tables(o: &mut String, rep: &Report<'_>) {
    let _ = writeln!(
        o,
        "\nTuning model ({} table(s); enabled cells: latency us / bandwidth GB/s)",
        rep.summary.model_tables.len()
    );
    for t in &rep.summary.model_tables {
        let at = t
            .first
            .as_ref()
            .map_or(String::new(), |(f, l)| rep.place(f, *l));
        let comm = t.comm.as_ref().map_or("?".into(), |k| rep.comm(k));
        let _ = writeln!(o, "  communicator {comm}, host {}, {at}", rep.host(&t.host));
        for (func, cells) in &t.rows {
            let on: Vec<String> = cells
                .iter()
                .filter(|c| c.bandwidth_gbs > 0.0)
                .map(|c| {
                    format!(
                        "{}/{} {:.1}/{:.1}",
                        c.algo, c.proto, c.latency_us, c.bandwidth_gbs
                    )
                })
                .collect();
            let _ = writeln!(
                o,
                "    {:>13}: {}",
                func.as_str(),
                if on.is_empty() {
                    "none".into()
                } else {
                    on.join(", ")
                }
            );
        }
    }
}
