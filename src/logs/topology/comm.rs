//! The largest communicator's ranks, nodes, channels and `Connected` lines, including the
//! lines a process logged outside any communicator it was seen to initialise.

use super::super::summary::{CommFacts, CommKey, LogSummary};
use super::{CommTopology, HostRanks};
use std::collections::{BTreeMap, BTreeSet};

pub(super) fn comm_topology(c: &CommFacts) -> CommTopology {
    let nranks = c.nranks.unwrap_or(0);
    let mut by_host: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for (rank, info) in &c.ranks {
        by_host.entry(&info.host).or_default().push(*rank);
    }
    let seen = u32::try_from(c.ranks.len()).unwrap_or(u32::MAX);
    let all = seen == nranks && nranks > 0;
    let nodes = all.then(|| u32::try_from(by_host.len()).unwrap_or(u32::MAX));
    let mut sizes = by_host.values().map(Vec::len);
    let first = sizes.next();
    let uniform = first.filter(|&f| sizes.all(|s| s == f));
    CommTopology {
        nranks,
        ranks_seen: seen,
        ranks_complete: u32::try_from(c.complete.len()).unwrap_or(u32::MAX),
        nodes,
        ranks_per_node: uniform.filter(|_| all).and_then(|n| u32::try_from(n).ok()),
        hosts: by_host
            .into_iter()
            .map(|(h, ranks)| HostRanks {
                host: h.to_string(),
                ranks,
            })
            .collect(),
        channels: (c.channels > 0).then_some(c.channels),
        connected: c.connected.keys().cloned().collect(),
    }
}

/// Adds the channel count and `Connected` lines the parser could not tie to a communicator
/// (a thread it did not see initialise one: `CommKey::Process`) from the processes of `c`'s
/// ranks, when no other communicator in the log has a rank in that process, so the lines
/// can only be `c`'s.
pub(super) fn with_process_lines(
    mut t: CommTopology,
    c: &CommFacts,
    inits: &[&CommFacts],
    log: &LogSummary,
) -> CommTopology {
    let procs: BTreeSet<(&str, u32)> = c.ranks.values().map(|r| (&*r.host, r.pid)).collect();
    let shared = |p: &(&str, u32)| {
        inits
            .iter()
            .any(|o| !std::ptr::eq(*o, c) && o.ranks.values().any(|r| (&*r.host, r.pid) == *p))
    };
    let mut connected: BTreeSet<String> = t.connected.drain(..).collect();
    let mut channels = t.channels.unwrap_or(0);
    for (key, facts) in &log.comms {
        let CommKey::Process { host, pid } = key else {
            continue;
        };
        let p = (&**host, *pid);
        if procs.contains(&p) && !shared(&p) {
            channels = channels.max(facts.channels);
            connected.extend(facts.connected.keys().cloned());
        }
    }
    t.channels = (channels > 0).then_some(channels);
    t.connected = connected.into_iter().collect();
    t
}
