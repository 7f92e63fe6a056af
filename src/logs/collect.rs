//! Folding records into a [`LogSummary`]. The hot path (COLL and decision lines, nearly all
//! of a large log) only bumps counters in per-file hash maps keyed by the parser's interned
//! host; names, communicator keys and sorting are resolved once per file in [`Collector::end_file`].

use super::event::{Decision, Event, Record, Transport};
use super::fxhash::FxMap;
use super::names::Func;
use super::parser::LineParser;
use super::summary::{
    Choice, ChoiceCount, CommKey, Evidence, FileStats, LogSummary, ModelTable, RankInfo,
};
use super::ParseOptions;
use std::collections::HashMap;
use std::sync::Arc;

/// Most example lines kept per group.
const EXAMPLES: usize = 3;
/// Longest quoted line.
const QUOTE: usize = 300;

type DecKey = (
    usize,
    u32,
    Option<u64>,
    Option<u64>,
    Option<Func>,
    u64,
    Choice,
);

/// Per-file tallies keyed by interned host address (stable while the file's parser lives).
#[derive(Default)]
struct FileTally {
    hosts: FxMap<usize, Arc<str>>,
    colls: FxMap<(usize, u32, u64, Func), u64>,
    decisions: FxMap<DecKey, (u64, Option<f64>, u64)>,
    open_tables: FxMap<(usize, u32, u32), usize>,
}

/// Accumulates records of one or more files.
pub struct Collector {
    opts: ParseOptions,
    summary: LogSummary,
    comm_ids: HashMap<(Arc<str>, u32, u64), u64>,
    file: Arc<str>,
    stats: FileStats,
    tally: FileTally,
}

impl Collector {
    /// An empty collector.
    pub fn new(opts: &ParseOptions) -> Self {
        Collector {
            opts: opts.clone(),
            summary: LogSummary::default(),
            comm_ids: HashMap::new(),
            file: Arc::from(""),
            stats: FileStats::default(),
            tally: FileTally::default(),
        }
    }

    /// Starts a file.
    pub fn begin_file(&mut self, name: &str) {
        self.file = Arc::from(name);
        self.stats = FileStats {
            name: name.to_string(),
            ..FileStats::default()
        };
        self.tally = FileTally::default();
    }

    /// Adds one record; `raw` is its physical line (quoted as evidence).
    pub fn record(&mut self, rec: Record, raw: &[u8]) {
        let o = &rec.origin;
        let host_addr = Arc::as_ptr(&o.host) as *const u8 as usize;
        match rec.event {
            Event::Coll(c) => {
                self.stats.colls += 1;
                self.tally
                    .hosts
                    .entry(host_addr)
                    .or_insert_with(|| o.host.clone());
                *self
                    .tally
                    .colls
                    .entry((host_addr, o.pid, c.comm, c.func))
                    .or_default() += 1;
            }
            Event::Decision(d) => self.decision(host_addr, d),
            event => self.rare(&rec.origin, event, raw, host_addr),
        }
    }

    fn decision(&mut self, host_addr: usize, d: Decision) {
        self.stats.decisions += 1;
        self.tally
            .hosts
            .entry(host_addr)
            .or_insert_with(|| d.origin.host.clone());
        let key = (
            host_addr,
            d.origin.pid,
            d.comm,
            d.comm_id,
            d.collective,
            d.bytes,
            Choice::of(&d),
        );
        let e = self
            .tally
            .decisions
            .entry(key)
            .or_insert((0, d.model_time_us, d.origin.line));
        e.0 += 1;
        if self.opts.keep_decisions {
            self.summary.decision_log.push(d);
        }
    }

    fn evidence(&self, line: u64, raw: &[u8]) -> Evidence {
        let t = raw.trim_ascii();
        Evidence {
            file: self.file.clone(),
            line,
            text: super::scan::text(t, QUOTE),
        }
    }

    fn comm_key(&self, host: &Arc<str>, pid: u32, comm: Option<u64>, id: Option<u64>) -> CommKey {
        let id =
            id.or_else(|| comm.and_then(|c| self.comm_ids.get(&(host.clone(), pid, c)).copied()));
        match (id, comm) {
            (Some(id), _) => CommKey::Id(id),
            (None, Some(comm)) => CommKey::Local {
                host: host.clone(),
                pid,
                comm,
            },
            (None, None) => CommKey::Process {
                host: host.clone(),
                pid,
            },
        }
    }

    fn rare(&mut self, o: &super::event::Origin, event: Event, raw: &[u8], host_addr: usize) {
        let ev = self.evidence(o.line, raw);
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
                let key = self.comm_key(&o.host, o.pid, o.comm, None);
                let comm = self.summary.comms.entry(key).or_default();
                comm.channels = comm.channels.max(c.channel.saturating_add(1));
            }
            Event::NvLink => host.nvlink = true,
            Event::Nvls { available } => {
                if host.nvls.as_ref().is_none_or(|(a, _)| !a && available) {
                    host.nvls = Some((available, ev));
                }
            }
            Event::CommInit(c) => {
                if let Some(id) = c.comm_id {
                    self.comm_ids.insert((o.host.clone(), o.pid, c.comm), id);
                }
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
                if c.phase == super::event::Phase::Complete {
                    comm.complete.insert(c.rank);
                }
            }
            Event::RingOrder { nchannels: n } | Event::Channels { coll: n } => {
                let key = self.comm_key(&o.host, o.pid, o.comm, None);
                let comm = self.summary.comms.entry(key).or_default();
                comm.channels = comm.channels.max(n);
            }
            Event::Connected(text) => {
                let key = self.comm_key(&o.host, o.pid, o.comm, None);
                let comm = self.summary.comms.entry(key).or_default();
                comm.connected.entry(text).or_insert(ev);
            }
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
        o: &super::event::Origin,
        host_addr: usize,
        func: Func,
        cells: Vec<super::event::ModelCell>,
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

    /// Ends the current file: resolves its tallies into the summary.
    pub fn end_file(&mut self, parser: &LineParser) {
        let tally = std::mem::take(&mut self.tally);
        let host = |addr: &usize| {
            tally
                .hosts
                .get(addr)
                .cloned()
                .unwrap_or_else(|| Arc::from(""))
        };
        for ((addr, pid, comm, func), n) in &tally.colls {
            let key = self.comm_key(&host(addr), *pid, Some(*comm), None);
            *self
                .summary
                .comms
                .entry(key)
                .or_default()
                .colls
                .entry(*func)
                .or_default() += n;
        }
        for ((addr, pid, comm, id, func, bytes, choice), (n, time, line)) in tally.decisions {
            let key = self.comm_key(&host(&addr), pid, comm, id);
            let list = self
                .summary
                .decisions
                .entry((key, func, bytes))
                .or_default();
            match list.iter_mut().find(|c| c.choice == choice) {
                Some(c) => {
                    c.count += n;
                    if (self.file.clone(), line) < c.first {
                        c.first = (self.file.clone(), line);
                    }
                }
                None => list.push(ChoiceCount {
                    choice,
                    count: n,
                    model_time_us: time,
                    first: (self.file.clone(), line),
                }),
            }
            list.sort_by(|a, b| b.count.cmp(&a.count).then(a.first.cmp(&b.first)));
        }
        self.stats.lines = parser.lines();
        self.stats.warnings = parser.warnings().counts.clone();
        self.summary.files.push(std::mem::take(&mut self.stats));
    }

    /// Counts a line that held an NCCL message.
    pub fn nccl_line(&mut self) {
        self.stats.nccl_lines += 1;
    }

    /// The summary.
    pub fn finish(self) -> LogSummary {
        self.summary
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
