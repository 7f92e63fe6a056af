//! The topology summary as text lines, as `ncclbench env` prints it.

use super::TopologySummary;

/// The summary as text lines (`ncclbench env` style, no trailing newlines).
pub fn lines(t: &TopologySummary) -> Vec<String> {
    let mut out = vec!["topology (from NCCL's log):".to_string()];
    let none = |v: &[String]| {
        if v.is_empty() {
            "not in the log".to_string()
        } else {
            v.join(", ")
        }
    };
    out.push(format!("  NCCL version: {}", none(&t.nccl_versions)));
    match &t.comm {
        None => out.push("  communicator: no Init line in the log".into()),
        Some(c) => {
            let nodes = match (c.nodes, c.ranks_per_node) {
                (Some(n), Some(p)) => format!("{n} node(s), {p} rank(s) per node"),
                (Some(n), None) => format!("{n} node(s), uneven"),
                _ => format!("{} of {} ranks seen, nodes unknown", c.ranks_seen, c.nranks),
            };
            let channels = c
                .channels
                .map_or_else(|| "channels not logged".into(), |n| format!("{n} channels"));
            out.push(format!(
                "  communicator: {} ranks, {nodes}, {channels} ({} in the log)",
                c.nranks, t.communicators
            ));
            for h in &c.hosts {
                let ranks: Vec<String> = h.ranks.iter().map(u32::to_string).collect();
                out.push(format!("    {}: ranks {}", h.host, ranks.join(" ")));
            }
            if !c.connected.is_empty() {
                out.push(format!("  connected: {}", c.connected.join("; ")));
            }
        }
    }
    if t.transports.is_empty() {
        out.push("  transports: no connection lines in the log".into());
    }
    for tr in &t.transports {
        let paths: Vec<String> = tr.paths.iter().map(|(p, n)| format!("{p} {n}")).collect();
        let detail = if paths.is_empty() {
            String::new()
        } else {
            format!(" ({})", paths.join(", "))
        };
        out.push(format!(
            "  transport {}: {} connection(s){detail}",
            tr.kind, tr.connections
        ));
    }
    out.push(format!("  network: {}", none(&t.networks)));
    if !t.nics.is_empty() {
        let nics: Vec<String> = t
            .nics
            .iter()
            .map(|n| format!("{}/{}", n.name, n.link))
            .collect();
        out.push(format!("  NICs: {}", nics.join(" ")));
    }
    if !t.bootstrap.is_empty() {
        out.push(format!("  bootstrap: {}", t.bootstrap.join(" ")));
    }
    let used = match t.gdr_used {
        Some(true) => "used",
        Some(false) => "not used by the NET connections",
        None => "no NET connection in the log",
    };
    out.push(format!(
        "  GPUDirect RDMA: {used} (enabled lines {}, disabled lines {})",
        t.gdr_enabled_lines, t.gdr_disabled_lines
    ));
    out.push(format!(
        "  NVLS multicast: {}",
        match t.nvls_available {
            Some(true) => "available",
            Some(false) => "not available",
            None => "not in the log",
        }
    ));
    if t.nvlink == Some(true) {
        out.push("  NVLink: in the topology dump".into());
    }
    out
}
