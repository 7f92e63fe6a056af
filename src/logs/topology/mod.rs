//! The topology a run's NCCL log shows, for the run's environment record: NCCL version(s), the
//! communicator's ranks, nodes and channels, the transports its connections used (`P2P/CUMEM`,
//! `SHM/direct`, `NET/IB`...), GPUDirect RDMA, NVLS, the network and NICs, and the `Connected
//! all rings/trees` lines (the first facts listed in docs/nccl-log-formats.md, less the
//! environment variables and the per-call decisions).
//!
//! Only what the log printed is reported: a fact the log does not show stays `None` or empty,
//! never a default. Nodes, in particular, are only counted when every rank of the
//! communicator logged its Init line (a multi-process run's rank-0 log sees one process).
//!
//! Timing matters: NCCL 2.22 and later connect channels at the first collective (runtime
//! connect), so a log read right after communicator init holds the version, ranks, network,
//! NICs, GPUDirect RDMA availability and NVLS support, but no connection lines yet.

mod comm;
#[cfg(test)]
mod tests;
mod text;

use super::event::{Event, Record, Transport};
use super::summary::{CommFacts, LogSummary};
use super::{for_each_line, Collector, LineParser, ParseOptions};
pub use crate::result::topology::{CommTopology, HostRanks, TopologySummary, TransportUse};
use comm::{comm_topology, with_process_lines};
pub use text::lines;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The topology in `log`; `None` when the log holds no init-time fact at all (no version,
/// communicator Init, network, NIC, bootstrap, GDR, NVLS or connection line).
pub fn summarize(log: &LogSummary) -> Option<TopologySummary> {
    let mut transports: BTreeMap<Transport, u64> = BTreeMap::new();
    let mut networks = BTreeSet::new();
    let mut nics = BTreeSet::new();
    let mut bootstrap = BTreeSet::new();
    let (mut net_gdr, mut gdr_on, mut gdr_off) = (0, 0, 0);
    let mut nvls: Option<bool> = None;
    let mut nvlink: Option<bool> = None;
    for h in log.hosts.values() {
        for (t, (n, _)) in &h.transports {
            *transports.entry(*t).or_default() += n;
        }
        networks.extend(h.networks.keys().cloned());
        nics.extend(h.nics.iter().cloned());
        bootstrap.extend(h.bootstrap.keys().cloned());
        net_gdr += h.net_gdr;
        gdr_on += h.gdr_enabled;
        gdr_off += h.gdr_disabled;
        if let Some((available, _)) = &h.nvls {
            nvls = Some(nvls.unwrap_or(false) || *available);
        }
        if let Some(seen) = h.nvlink {
            nvlink = Some(nvlink.unwrap_or(false) || seen);
        }
    }
    let inits: Vec<&CommFacts> = log.comms.values().filter(|c| c.nranks.is_some()).collect();
    let versions: Vec<String> = log.versions().into_iter().map(str::to_string).collect();
    let nothing = versions.is_empty()
        && inits.is_empty()
        && transports.is_empty()
        && networks.is_empty()
        && nics.is_empty()
        && bootstrap.is_empty()
        && gdr_on + gdr_off == 0
        && nvls.is_none();
    if nothing {
        return None;
    }
    // `rev`: of equals, `max_by_key` keeps the last, so the first in key order wins.
    let largest = inits
        .iter()
        .rev()
        .max_by_key(|c| (c.nranks, c.ranks.len()))
        .map(|c| with_process_lines(comm_topology(c), c, &inits, log));
    let net = transports.get(&Transport::Net).copied().unwrap_or(0);
    Some(TopologySummary {
        nccl_versions: versions,
        communicators: inits.len(),
        comm: largest,
        transports: transports
            .into_iter()
            .map(|(t, n)| TransportUse {
                kind: t.as_str().to_string(),
                connections: n,
                paths: BTreeMap::new(),
            })
            .collect(),
        gdr_used: (net > 0).then_some(net_gdr > 0),
        gdr_enabled_lines: gdr_on,
        gdr_disabled_lines: gdr_off,
        nvls_available: nvls,
        nvlink,
        networks: networks.into_iter().collect(),
        nics: nics.into_iter().collect(),
        bootstrap: bootstrap.into_iter().collect(),
    })
}

/// The path of a `via` text: its first two `/`-separated parts (`NET/IB/0/GDRDMA` ->
/// `NET/IB`, `P2P/direct pointer/read` -> `P2P/direct pointer`).
fn via_path(via: &str) -> String {
    let mut parts = via.trim().splitn(3, '/');
    match (parts.next(), parts.next()) {
        (Some(a), Some(b)) => format!("{a}/{}", b.trim_end()),
        (Some(a), None) => a.to_string(),
        _ => String::new(),
    }
}

/// Reads one NCCL log file and summarises its topology, with the per-path transport counts;
/// `None` when it cannot be read or holds no init-time fact.
pub fn from_log_file(path: &Path) -> Option<TopologySummary> {
    let file = std::fs::File::open(path).ok()?;
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut collector = Collector::new(&ParseOptions::default());
    let mut parser = LineParser::new();
    let mut paths: BTreeMap<(Transport, String), u64> = BTreeMap::new();
    collector.begin_file(&path.display().to_string());
    for_each_line(reader, |line, _| {
        let mut sink = |rec: Record| {
            if let Event::Connection(c) = &rec.event {
                *paths.entry((c.transport, via_path(&c.via))).or_default() += 1;
            }
            collector.record(rec, line);
        };
        if parser.line(line, &mut sink) {
            collector.nccl_line();
        }
    })
    .ok()?;
    collector.end_file(&parser);
    let mut topo = summarize(&collector.finish())?;
    for t in &mut topo.transports {
        t.paths = paths
            .iter()
            .filter(|((kind, _), _)| kind.as_str() == t.kind)
            .map(|((_, p), n)| (p.clone(), *n))
            .collect();
    }
    Some(topo)
}
