//! Rule-based findings on the facts a log shows (docs/nccl-log-formats.md): each names its rule
//! id, says what it means, and quotes the lines it rests on (file:line). Rules only read the
//! [`LogSummary`].
//!
//! | rule | fires when |
//! |---|---|
//! | `rdma-not-used` | a host lists IB/RoCE devices but uses `Using network Socket` |
//! | `gdr-disabled` | `GPU Direct RDMA Disabled` lines where traffic may cross the network |
//! | `shm-not-p2p` | intra-node connections `via SHM` (a problem when NVLink is present) |
//! | `mixed-nic-links` | one host's `NET/IB : Using` list mixes link types (IB and RoCE) |
//! | `bootstrap-iface` | bootstrap on docker/loopback/virtual interfaces or 127.x/172.17.x |
//! | `algo-proto-forced` | `NCCL_ALGO` or `NCCL_PROTO` set by environment |
//! | `version-mismatch` | NCCL versions differ between hosts or processes |
//! | `warn-lines` | WARN lines, one finding per kind |
//! | `decisions-differ` | one (communicator, collective, bytes) got different algorithms or protocols |

use super::event::Transport;
use super::summary::{Evidence, LogSummary};
use super::{parse_files, LogError, ParseOptions};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Likely the cause of poor performance or a failure.
    Problem,
    /// Worth checking.
    Warning,
    /// Context.
    Info,
}

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Rule id (stable).
    pub rule: &'static str,
    /// Severity.
    pub severity: Severity,
    /// What was found, in one line.
    pub title: String,
    /// Why it matters.
    pub detail: String,
    /// The lines it rests on.
    pub evidence: Vec<Evidence>,
}

/// Findings for a set of log files (what `analyze --nccl-log` appends).
pub fn findings_for_files(paths: &[impl AsRef<Path> + Sync]) -> Result<Vec<Finding>, LogError> {
    Ok(findings(&parse_files(paths, &ParseOptions::default())?))
}

/// Every rule over a summary, most severe first, then in rule order.
pub fn findings(s: &LogSummary) -> Vec<Finding> {
    let mut out = Vec::new();
    for (host, h) in &s.hosts {
        let name = if host.is_empty() { "(no prefix)" } else { host };
        if let Some(sock) = h.networks.get("Socket") {
            if let Some(ib) = h.nic_evidence.clone().filter(|_| !h.nics.is_empty()) {
                out.push(Finding {
                    rule: "rdma-not-used",
                    severity: Severity::Problem,
                    title: format!("host {name} has IB/RoCE devices but NCCL uses sockets"),
                    detail: "inter-node traffic goes over TCP, not RDMA: check NCCL_IB_DISABLE, NCCL_NET, the IB drivers and the container's /dev/infiniband".into(),
                    evidence: vec![ib, sock.clone()],
                });
            }
        }
        if h.gdr_disabled > 0 && inter_node(s, host, h) != Some(false) {
            let dist: Vec<String> = h
                .gdr_distances
                .iter()
                .map(|(d, l)| format!("distance {d} > {l}"))
                .collect();
            out.push(Finding {
                rule: "gdr-disabled",
                severity: match inter_node(s, host, h) {
                    Some(_) => Severity::Warning,
                    None => Severity::Info,
                },
                title: format!(
                    "host {name}: GPUDirect RDMA disabled on {} line(s){}",
                    h.gdr_disabled,
                    if dist.is_empty() { String::new() } else { format!(" ({})", dist.join(", ")) }
                ),
                detail: "network transfers are staged through host memory: check the GPU/NIC PCI distance (NCCL_NET_GDR_LEVEL) and that nvidia-peermem or DMA-BUF is available; it matters for inter-node traffic only".into(),
                evidence: h.gdr_disabled_evidence.clone(),
            });
        }
        if let Some((n, ev)) = h.transports.get(&Transport::Shm) {
            let mut evidence = vec![ev.clone()];
            evidence.extend(env_lines(s, &["NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL"]));
            let p2p = h.transports.get(&Transport::P2P).map_or(0, |t| t.0);
            out.push(Finding {
                rule: "shm-not-p2p",
                severity: if h.nvlink == Some(true) { Severity::Problem } else { Severity::Warning },
                title: format!("host {name}: {n} connection(s) via SHM ({p2p} via P2P)"),
                detail: if h.nvlink == Some(true) {
                    "the topology shows NVLink, yet intra-node traffic goes through host memory: P2P is disabled (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL) or not permitted (IOMMU/ACS, containers)".into()
                } else {
                    "intra-node traffic goes through host memory rather than GPU peer access: expected only without P2P support; check NCCL_P2P_DISABLE/NCCL_P2P_LEVEL and ACS".into()
                },
                evidence,
            });
        }
        let links: std::collections::BTreeSet<&str> =
            h.nics.iter().map(|n| n.link.as_str()).collect();
        if links.len() > 1 {
            out.push(Finding {
                rule: "mixed-nic-links",
                severity: Severity::Warning,
                title: format!("host {name}: NICs of mixed link types ({})", links.into_iter().collect::<Vec<_>>().join(", ")),
                detail: "NCCL may stripe over NICs of different fabrics; restrict it with NCCL_IB_HCA to the data NICs".into(),
                evidence: h.nic_evidence.iter().cloned().collect(),
            });
        }
        for (iface, ev) in &h.bootstrap {
            if suspicious_iface(iface) {
                out.push(Finding {
                    rule: "bootstrap-iface",
                    severity: Severity::Warning,
                    title: format!("host {name}: bootstrap on {iface}"),
                    detail: "a docker, loopback or virtual interface for bootstrap is the classic cause of init hangs across hosts; set NCCL_SOCKET_IFNAME".into(),
                    evidence: vec![ev.clone()],
                });
            }
        }
    }
    for var in ["NCCL_ALGO", "NCCL_PROTO"] {
        let ev = env_lines(s, &[var]);
        if !ev.is_empty() {
            out.push(Finding {
                rule: "algo-proto-forced",
                severity: Severity::Warning,
                title: format!("{var} is set: NCCL's choice is restricted"),
                detail: "the curve shows the forced choice, not what NCCL would pick; compare against a run without it".into(),
                evidence: ev,
            });
        }
    }
    versions(s, &mut out);
    for (kind, g) in &s.warns {
        out.push(Finding {
            rule: "warn-lines",
            severity: Severity::Problem,
            title: format!("{} WARN line(s) on {} host(s): {kind}", g.count, g.hosts.len()),
            detail: "NCCL reported an error or fallback; the INFO lines after a WARN (`file.cc:N -> code`) trace it".into(),
            evidence: g.examples.clone(),
        });
    }
    differing(s, &mut out);
    out.sort_by_key(|f| f.severity);
    out
}

/// Whether `host`'s traffic crosses the network, as far as the log shows: `Some(true)` with
/// NET connections on it or a communicator spanning hosts, `Some(false)` when its connection
/// lines or its communicators' Init lines show it alone and none is NET, `None` when the log
/// does not say (nothing logged, or a communicator with ranks this log does not show).
/// GPUDirect RDMA concerns NET traffic only.
fn inter_node(s: &LogSummary, host: &str, h: &super::summary::HostFacts) -> Option<bool> {
    if h.transports.contains_key(&Transport::Net) {
        return Some(true);
    }
    let mine = s
        .comms
        .values()
        .filter(|c| c.ranks.values().any(|r| &*r.host == host));
    let (mut all_here, mut unseen) = (false, false);
    for c in mine {
        if c.ranks.values().any(|r| &*r.host != host) {
            return Some(true);
        }
        if c.nranks.is_some_and(|n| n as usize > c.ranks.len()) {
            unseen = true;
        } else {
            all_here = true;
        }
    }
    if unseen {
        return None;
    }
    (!h.transports.is_empty() || all_here).then_some(false)
}

fn versions(s: &LogSummary, out: &mut Vec<Finding>) {
    let versions = s.versions();
    if versions.len() > 1 {
        let evidence = s
            .hosts
            .values()
            .flat_map(|h| h.versions.values().cloned())
            .chain(s.unattributed_versions.values().cloned())
            .collect();
        out.push(Finding {
            rule: "version-mismatch",
            severity: Severity::Problem,
            title: format!(
                "NCCL versions differ: {}",
                versions.into_iter().collect::<Vec<_>>().join(", ")
            ),
            detail: "all ranks must load the same NCCL; mixed versions hang or corrupt data".into(),
            evidence,
        });
    }
}

fn differing(s: &LogSummary, out: &mut Vec<Finding>) {
    for ((_, func, bytes), choices) in &s.decisions {
        let distinct: std::collections::BTreeSet<_> = choices
            .iter()
            .map(|c| (c.choice.algo, c.choice.proto, c.choice.path))
            .collect();
        if distinct.len() < 2 {
            continue;
        }
        let func = func.map_or("?", |f| f.as_str());
        out.push(Finding {
            rule: "decisions-differ",
            severity: Severity::Info,
            title: format!("{func} {bytes} B: {} different decisions", distinct.len()),
            detail: "calls of the same size were tuned differently (grouped calls, a tuner plugin, or a different communicator state); their times are not one regime".into(),
            evidence: choices
                .iter()
                .map(|c| Evidence {
                    file: c.first.0.clone(),
                    line: c.first.1,
                    text: format!(
                        "{func}: {bytes} Bytes -> {}/{} ({} line(s))",
                        c.choice.algo.map_or("-", |a| a.as_str()),
                        c.choice.proto.map_or("-", |p| p.as_str()),
                        c.count
                    ),
                })
                .collect(),
        });
    }
}

/// The first line of each value of these variables.
fn env_lines(s: &LogSummary, vars: &[&str]) -> Vec<Evidence> {
    vars.iter()
        .filter_map(|v| s.env.get(*v))
        .flat_map(|e| e.values.values().map(|(_, ev)| ev.clone()))
        .collect()
}

/// Docker, loopback, libvirt, CNI and link-local interfaces or addresses.
fn suspicious_iface(iface: &str) -> bool {
    let name = iface.split(':').next().unwrap_or("");
    let addr = iface.get(name.len() + 1..).unwrap_or("");
    [
        "docker", "lo", "virbr", "veth", "br-", "cni", "flannel", "podman", "vmnet",
    ]
    .iter()
    .any(|p| {
        name.starts_with(p)
            && !(*p == "lo" && name.len() > 2 && !name[2..].chars().all(|c| c.is_ascii_digit()))
    }) || ["127.", "172.17.", "169.254.", "::1<", "fe80:"]
        .iter()
        .any(|p| addr.starts_with(p))
}

/// Keeps the type of `Arc<str>` evidence labels in one place for callers building findings.
pub fn evidence(file: &str, line: u64, text: &str) -> Evidence {
    Evidence {
        file: Arc::from(file),
        line,
        text: text.to_string(),
    }
}

#[test]
fn suspicious_interfaces_are_recognised() {
    for bad in [
        "docker0:172.17.0.1<0>",
        "lo:127.0.0.1<0>",
        "eth0:172.17.0.5<0>",
        "virbr0:192.168.122.1<0>",
    ] {
        assert!(suspicious_iface(bad), "{bad}");
    }
    for good in [
        "eth0:10.1.13.167<0>",
        "eno8303:192.168.0.3<0>",
        "ibp209s0f0:10.128.3.15<0>",
        "lo5x:10.0.0.1<0>",
    ] {
        assert!(!suspicious_iface(good), "{good}");
    }
}
