//! Folding records into a [`LogSummary`]. The hot path (COLL and decision lines, nearly all
//! of a large log) only bumps counters in per-file hash maps keyed by the parser's interned
//! host; names, communicator keys and sorting are resolved once per file in
//! [`Collector::end_file`]. The rare init-time records are folded in [`facts`].

mod facts;

use super::attribute::Owners;
use super::event::{CollCall, Decision, Event, Record};
use super::merge::CommIds;
use super::names::Func;
use super::parser::LineParser;
use super::sink::{At, Sink};
use super::summary::{Choice, ChoiceCount, CommKey, Evidence, FileStats, LogSummary};
use super::ParseOptions;
use rustc_hash::FxHashMap as FxMap;
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
    owners: Owners,
    /// The host of the last COLL line, already in `hosts` (most lines repeat it).
    last_host: usize,
}

/// Accumulates records of one or more files.
pub struct Collector {
    opts: ParseOptions,
    summary: LogSummary,
    comm_ids: CommIds,
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
            comm_ids: CommIds::new(),
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
                let at = At {
                    line: o.line,
                    host: &o.host,
                    pid: o.pid,
                    tid: o.tid,
                    dev: o.dev,
                };
                return self.coll(at, c);
            }
            Event::Decision(d) => self.decision(host_addr, d),
            event => self.rare(&rec.origin, event, raw, host_addr),
        }
        let o = &rec.origin;
        if let Some(comm) = o.comm {
            self.claim(&o.host, host_addr, (o.pid, o.tid), comm);
        }
    }

    /// Adds a COLL line's call.
    fn coll(&mut self, at: At<'_>, c: CollCall) {
        self.stats.colls += 1;
        let host_addr = Arc::as_ptr(at.host) as *const u8 as usize;
        if self.tally.last_host != host_addr {
            self.tally
                .hosts
                .entry(host_addr)
                .or_insert_with(|| at.host.clone());
            self.tally.last_host = host_addr;
        }
        *self
            .tally
            .colls
            .entry((host_addr, at.pid, c.comm, c.func))
            .or_default() += 1;
        self.claim(at.host, host_addr, (at.pid, at.tid), c.comm);
    }

    /// A line naming its communicator claims what its thread logged before unowned (after the
    /// line itself is folded, so an Init line's commId is known).
    fn claim(&mut self, host: &Arc<str>, host_addr: usize, (pid, tid): (u32, u32), comm: u64) {
        if let Some(p) = self.tally.owners.claim((host_addr, pid, tid)) {
            let key = self.comm_key(host, pid, Some(comm), None);
            p.fold_into(self.summary.comms.entry(key).or_default());
        }
    }

    /// The collector as the parser's sink for the records of the physical line `raw`.
    pub(super) fn sink<'s>(&'s mut self, raw: &'s [u8]) -> LineSink<'s> {
        LineSink {
            collector: self,
            raw,
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
        self.settle_owners(tally.owners, &tally.hosts);
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

    /// The summary, and the commIds its Init lines gave (to join it with other files').
    pub fn finish_with_ids(self) -> (LogSummary, CommIds) {
        (self.summary, self.comm_ids)
    }
}

/// The collector taking one physical line's records (the line is quoted as evidence), COLL
/// calls without their record.
pub(super) struct LineSink<'s> {
    collector: &'s mut Collector,
    raw: &'s [u8],
}

impl Sink for LineSink<'_> {
    fn record(&mut self, rec: Record) {
        self.collector.record(rec, self.raw)
    }

    fn coll(&mut self, at: At<'_>, call: CollCall) {
        self.collector.coll(at, call)
    }
}
