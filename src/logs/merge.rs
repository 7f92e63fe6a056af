//! Joining the summaries of files parsed apart (one file per task, in parallel) into the one
//! summary of the whole set: counts add up, the first evidence in file order wins, and a
//! communicator that one file knows only by pointer takes the commId another file's Init line
//! gives the same process's pointer.

use super::summary::{ChoiceCount, CommFacts, CommKey, HostFacts, LogSummary, WarnGroup};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// `(host, pid, comm pointer) -> commId`, from the Init lines of one or more files.
pub type CommIds = HashMap<(Arc<str>, u32, u64), u64>;

/// Most example lines kept per group (as one pass keeps).
const EXAMPLES: usize = 3;

/// The summary of all `parts`, given in file order.
pub fn merge(parts: Vec<(LogSummary, CommIds)>) -> LogSummary {
    let mut ids = CommIds::new();
    for (_, part_ids) in &parts {
        for (k, v) in part_ids {
            ids.entry(k.clone()).or_insert(*v);
        }
    }
    let mut out = LogSummary::default();
    for (s, _) in parts {
        absorb(&mut out, s, &ids);
    }
    out
}

fn rekey(k: CommKey, ids: &CommIds) -> CommKey {
    match k {
        CommKey::Local { host, pid, comm } => match ids.get(&(host.clone(), pid, comm)) {
            Some(id) => CommKey::Id(*id),
            None => CommKey::Local { host, pid, comm },
        },
        other => other,
    }
}

fn absorb(out: &mut LogSummary, s: LogSummary, ids: &CommIds) {
    out.files.extend(s.files);
    for (name, h) in s.hosts {
        host(out.hosts.entry(name).or_default(), h);
    }
    for (v, ev) in s.unattributed_versions {
        out.unattributed_versions.entry(v).or_insert(ev);
    }
    for (k, c) in s.comms {
        comm(out.comms.entry(rekey(k, ids)).or_default(), c);
    }
    for ((k, func, bytes), choices) in s.decisions {
        let list = out
            .decisions
            .entry((rekey(k, ids), func, bytes))
            .or_default();
        decisions(list, choices);
    }
    out.decision_log.extend(s.decision_log);
    for mut t in s.model_tables {
        t.comm = t.comm.map(|k| rekey(k, ids));
        out.model_tables.push(t);
    }
    for (name, e) in s.env {
        let into = out.env.entry(name).or_default();
        for (value, (hosts, ev)) in e.values {
            into.values
                .entry(value)
                .or_insert_with(|| (Default::default(), ev))
                .0
                .extend(hosts);
        }
    }
    for (kind, g) in s.warns {
        warns(out.warns.entry(kind).or_default(), g);
    }
}

fn host(into: &mut HostFacts, h: HostFacts) {
    into.pids.extend(h.pids);
    first_wins(&mut into.versions, h.versions);
    first_wins(&mut into.bootstrap, h.bootstrap);
    into.nics.extend(h.nics);
    if into.nic_evidence.is_none() {
        into.nic_evidence = h.nic_evidence;
    }
    if into.ib_none.is_none() {
        into.ib_none = h.ib_none;
    }
    first_wins(&mut into.networks, h.networks);
    into.gdr_enabled += h.gdr_enabled;
    into.gdr_disabled += h.gdr_disabled;
    into.gdr_distances.extend(h.gdr_distances);
    let room = EXAMPLES.saturating_sub(into.gdr_disabled_evidence.len());
    into.gdr_disabled_evidence
        .extend(h.gdr_disabled_evidence.into_iter().take(room));
    for (t, (n, ev)) in h.transports {
        into.transports.entry(t).or_insert((0, ev)).0 += n;
    }
    into.net_gdr += h.net_gdr;
    // As one pass: the first "available" line, else the first "not available" one.
    if let Some((available, ev)) = h.nvls {
        if into.nvls.as_ref().is_none_or(|(a, _)| !a && available) {
            into.nvls = Some((available, ev));
        }
    }
    into.nvlink = match (into.nvlink, h.nvlink) {
        (Some(a), Some(b)) => Some(a || b),
        (a, b) => a.or(b),
    };
}

fn first_wins<V>(into: &mut BTreeMap<String, V>, from: BTreeMap<String, V>) {
    for (k, v) in from {
        into.entry(k).or_insert(v);
    }
}

fn comm(into: &mut CommFacts, c: CommFacts) {
    into.nranks = into.nranks.or(c.nranks);
    for (rank, info) in c.ranks {
        let have = into.ranks.entry(rank).or_insert_with(|| info.clone());
        have.cuda_dev = have.cuda_dev.or(info.cuda_dev);
        have.bus_id = have.bus_id.or(info.bus_id);
    }
    into.complete.extend(c.complete);
    into.channels = into.channels.max(c.channels);
    first_wins(&mut into.connected, c.connected);
    for (f, n) in c.colls {
        *into.colls.entry(f).or_default() += n;
    }
}

fn decisions(list: &mut Vec<ChoiceCount>, choices: Vec<ChoiceCount>) {
    for c in choices {
        match list.iter_mut().find(|have| have.choice == c.choice) {
            Some(have) => {
                have.count += c.count;
                if c.first < have.first {
                    have.first = c.first;
                }
            }
            None => list.push(c),
        }
    }
    list.sort_by(|a, b| b.count.cmp(&a.count).then(a.first.cmp(&b.first)));
}

fn warns(into: &mut WarnGroup, g: WarnGroup) {
    into.count += g.count;
    into.hosts.extend(g.hosts);
    let room = EXAMPLES.saturating_sub(into.examples.len());
    into.examples.extend(g.examples.into_iter().take(room));
}
