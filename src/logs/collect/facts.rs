//! Folding the rare, init-time records (version, ENV, interfaces, NICs, GDR, connections,
//! channels, Init lines, model tables, WARN lines) into the summary, and settling at a file's
//! end the facts no line named an owner for. The hot path (COLL and TUNING lines) is in the
//! parent module.

use super::super::attribute::Owners;
use super::super::event::{Event, Origin, Transport};
use super::super::names::Func;
use super::super::summary::{ModelTable, RankInfo};
use super::super::warnings::WarningKind;
use super::{Collector, EXAMPLES};
use rustc_hash::FxHashMap as FxMap;
use std::sync::Arc;

impl Collector {
    pub(super) fn rare(&mut self, o: &Origin, event: Event, raw: &[u8], host_addr: usize) {
        let ev = self.evidence(o.line, raw);
        if o.host.is_empty() {
            // Only the bare version line has no prefix: its process is found at the file's end.
            if let Event::Version { text, .. } = event {
                self.tally.owners.bare.push((text, ev));
            }
            return;
        }
        self.tally
            .hosts
            .entry(host_addr)
            .or_insert_with(|| o.host.clone());
        let thread = (host_addr, o.pid, o.tid);
        let host = self.summary.hosts.entry(o.host.clone()).or_default();
        if o.pid != 0 {
            host.pids.insert(o.pid);
        }
        match event {
            Event::Version { text, .. } => {
                host.versions.entry(text).or_insert(ev);
            }
            Event::Env { name, value } => {
                let v = self
                    .summary
                    .env
                    .entry(name)
                    .or_default()
                    .values
                    .entry(value);
                v.or_insert_with(|| (Default::default(), ev))
                    .0
                    .insert(o.host.clone());
            }
            Event::Bootstrap { iface } => {
                host.bootstrap.entry(iface).or_insert(ev);
            }
            Event::NetIb(nics) => {
                host.nics.extend(nics);
                host.nic_evidence.get_or_insert(ev);
            }
            Event::NetIbNone => {
                host.ib_none.get_or_insert(ev);
            }
            Event::Network(name) => {
                host.networks.entry(name).or_insert(ev);
            }
            Event::Gdr(g) if g.enabled => host.gdr_enabled += 1,
            Event::Gdr(g) => {
                host.gdr_disabled += 1;
                host.gdr_distances.extend(g.distance);
                if host.gdr_disabled_evidence.len() < EXAMPLES {
                    host.gdr_disabled_evidence.push(ev);
                }
            }
            Event::Connection(c) => {
                host.transports.entry(c.transport).or_insert((0, ev)).0 += 1;
                if c.transport == Transport::Net && c.gdr {
                    host.net_gdr += 1;
                }
                let n = c.channel.saturating_add(1);
                match o.comm {
                    Some(_) => {
                        let key = self.comm_key(&o.host, o.pid, o.comm, None);
                        let comm = self.summary.comms.entry(key).or_default();
                        comm.channels = comm.channels.max(n);
                    }
                    None => {
                        let p = self.tally.owners.hold(thread, &o.host, o.line);
                        p.channels = p.channels.max(n);
                    }
                }
            }
            Event::NvLink => host.nvlink = Some(true),
            Event::TopologyShown => {
                host.nvlink.get_or_insert(false);
            }
            Event::Nvls { available } => {
                if host.nvls.as_ref().is_none_or(|(a, _)| !a && available) {
                    host.nvls = Some((available, ev));
                }
            }
            Event::CommInit(c) => {
                if let Some(id) = c.comm_id {
                    self.comm_ids.insert((o.host.clone(), o.pid, c.comm), id);
                }
                self.tally
                    .owners
                    .init((host_addr, o.pid), &o.host, c.comm, c.rank, o.line);
                let key = self.comm_key(&o.host, o.pid, Some(c.comm), c.comm_id);
                let comm = self.summary.comms.entry(key).or_default();
                comm.nranks = Some(c.nranks);
                let info = comm.ranks.entry(c.rank).or_insert_with(|| RankInfo {
                    host: o.host.clone(),
                    pid: o.pid,
                    cuda_dev: c.cuda_dev,
                    bus_id: c.bus_id,
                });
                info.cuda_dev = info.cuda_dev.or(c.cuda_dev);
                info.bus_id = info.bus_id.or(c.bus_id);
                if c.phase == super::super::event::Phase::Complete {
                    comm.complete.insert(c.rank);
                }
            }
            Event::RingOrder { nchannels: n } | Event::Channels { coll: n } => match o.comm {
                Some(_) => {
                    let key = self.comm_key(&o.host, o.pid, o.comm, None);
                    let comm = self.summary.comms.entry(key).or_default();
                    comm.channels = comm.channels.max(n);
                }
                None => {
                    let p = self.tally.owners.hold(thread, &o.host, o.line);
                    p.channels = p.channels.max(n);
                }
            },
            Event::Connected(text) => match o.comm {
                Some(_) => {
                    let key = self.comm_key(&o.host, o.pid, o.comm, None);
                    let comm = self.summary.comms.entry(key).or_default();
                    comm.connected.entry(text).or_insert(ev);
                }
                None => {
                    let p = self.tally.owners.hold(thread, &o.host, o.line);
                    p.connected.entry(text).or_insert(ev);
                }
            },
            Event::ModelRow { func, cells } => self.model_row(o, host_addr, func, cells),
            Event::Warn { source, message } => {
                let file = source.split(':').next().unwrap_or("").to_string();
                let kind = format!("{file}: {}", template(&message));
                let g = self.summary.warns.entry(kind).or_default();
                g.count += 1;
                g.hosts.insert(o.host.clone());
                if g.examples.len() < EXAMPLES {
                    g.examples.push(ev);
                }
            }
            Event::GitVersion | Event::OldModelTable | Event::Coll(_) | Event::Decision(_) => {}
        }
    }

    fn model_row(
        &mut self,
        o: &Origin,
        host_addr: usize,
        func: Func,
        cells: Vec<super::super::event::ModelCell>,
    ) {
        let tkey = (host_addr, o.pid, o.tid);
        let first_algo = cells.first().map(|c| c.algo);
        let open = self.tally.open_tables.get(&tkey).copied().filter(|&i| {
            self.summary.model_tables[i]
                .rows
                .get(&func)
                .is_none_or(|row| !row.iter().any(|c| Some(c.algo) == first_algo))
        });
        let i = match open {
            Some(i) => i,
            None => {
                let comm = o.comm.map(|c| self.comm_key(&o.host, o.pid, Some(c), None));
                self.summary.model_tables.push(ModelTable {
                    comm,
                    first: Some((self.file.clone(), o.line)),
                    host: o.host.clone(),
                    rows: Default::default(),
                });
                let i = self.summary.model_tables.len() - 1;
                self.tally.open_tables.insert(tkey, i);
                i
            }
        };
        self.summary.model_tables[i]
            .rows
            .entry(func)
            .or_default()
            .extend(cells);
    }

    /// Gives the file's unowned facts their owners (see [`super::super::attribute`]), or counts them.
    pub(super) fn settle_owners(&mut self, mut owners: Owners, hosts: &FxMap<usize, Arc<str>>) {
        for (text, ev) in std::mem::take(&mut owners.bare) {
            let only_host = || match hosts.values().collect::<Vec<_>>().as_slice() {
                [one] => Some(((*one).clone(), None)),
                _ => None,
            };
            match owners
                .version_owner(ev.line)
                .map(|(h, p)| (h, Some(p)))
                .or_else(only_host)
            {
                Some((host, pid)) => {
                    let h = self.summary.hosts.entry(host).or_default();
                    h.pids.extend(pid);
                    h.versions.entry(text).or_insert(ev);
                }
                None => {
                    self.summary.unattributed_versions.entry(text).or_insert(ev);
                }
            }
        }
        let mut left: Vec<_> = std::mem::take(&mut owners.pending).into_iter().collect();
        left.sort_by_key(|(_, (_, p))| p.first_line);
        for ((addr, pid, _), (host, p)) in left {
            match owners.only_comm((addr, pid)) {
                Some(comm) => {
                    let key = self.comm_key(&host, pid, Some(comm), None);
                    p.fold_into(self.summary.comms.entry(key).or_default());
                }
                None => {
                    let e = self
                        .stats
                        .warnings
                        .entry(WarningKind::UnattributedChannelLines)
                        .or_insert((0, p.first_line));
                    e.0 += p.lines;
                    e.1 = e.1.min(p.first_line);
                }
            }
        }
    }
}

/// A WARN message with numbers, hex and quoted text replaced, so repeats group together.
fn template(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len().min(100));
    let mut prev_num = false;
    for ch in msg.chars().take(120) {
        if ch.is_ascii_digit() {
            if !prev_num {
                out.push('N');
            }
            prev_num = true;
        } else {
            if !(prev_num && (ch.is_ascii_hexdigit() || ch == 'x' || ch == '.')) {
                prev_num = false;
                out.push(ch);
            }
        }
    }
    out.trim().to_string()
}

#[test]
fn warn_messages_group_by_their_shape() {
    assert_eq!(
        template("Call to connect returned Connection refused, retrying 12"),
        "Call to connect returned Connection refused, retrying N"
    );
    assert_eq!(
        template("NET/IB : Got completion with error 12, opcode 0x1a, len 32"),
        "NET/IB : Got completion with error N, opcode N, len N"
    );
}
