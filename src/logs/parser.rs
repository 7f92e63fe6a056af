//! The streaming line parser: physical lines in, [`Record`]s out, in file order.
//!
//! It keeps only the context a message needs: which version each process runs (to decode
//! numeric algorithm numbers), each thread's recent COLL lines (a TUNING line names no
//! communicator; it belongs to the COLL call before it on the same thread, preferring a
//! communicator where this process is rank 0, because only comm rank 0 prints decisions),
//! each process's communicators (pointer -> rank, nranks, commId), each thread's current
//! tuning-table block header, and the communicator each thread or device is initialising (so
//! topology lines from proxy threads are attributed). Memory is bounded by the number of
//! distinct threads and communicators, not by the input size.

use super::decision::{self, AlgoField, PerCall, TuningLine};
use super::event::{CollCall, CommInit, Decision, Event, ModelCell, Origin, Phase, Record};
use super::names::{Algo, NcclVersion, Proto};
use super::prefix::{Finder, Level, Prefixed};
use super::sink::{At, Sink};
use super::table::{self, Row};
use super::topo;
use super::warnings::{ParseWarnings, WarningKind};
use rustc_hash::FxHashMap as FxMap;
use std::sync::Arc;

/// COLL lines remembered per thread for matching TUNING lines.
const RECENT_COLLS: usize = 8;

/// A communicator as one process knows it.
#[derive(Debug, Clone, Copy)]
struct CommRef {
    rank: u32,
    nranks: u32,
    comm_id: Option<u64>,
}

/// What one logging thread is in the middle of.
#[derive(Debug, Default)]
struct ThreadState {
    colls: Vec<(CollCall, Option<u32>)>,
    next: usize,
    algos: Vec<Algo>,
    init_comm: Option<u64>,
}

type ThreadKey = (u32, u32, u32);

/// Parses NCCL debug output one physical line at a time.
#[derive(Default)]
pub struct LineParser {
    finder: Finder,
    hosts: Vec<Arc<str>>,
    host_index: FxMap<Box<[u8]>, u32>,
    last_host: (Vec<u8>, u32),
    has_last_host: bool,
    threads: FxMap<ThreadKey, ThreadState>,
    comms: FxMap<(u32, u32, u64), CommRef>,
    dev_comm: FxMap<(u32, u32, u32), u64>,
    versions: FxMap<(u32, u32), NcclVersion>,
    bare_version: Option<NcclVersion>,
    line: u64,
    warnings: ParseWarnings,
    /// The host of a line whose host could not be numbered (more than `u32::MAX` of them).
    no_host: Arc<str>,
    /// Scratch for [`LineParser::line`]'s `NCCL ` offsets (kept to not allocate per line).
    hits: Vec<usize>,
}

impl LineParser {
    /// A parser at line 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Physical lines read so far.
    pub fn lines(&self) -> u64 {
        self.line
    }

    /// What could not be understood, counted by kind.
    pub fn warnings(&self) -> &ParseWarnings {
        &self.warnings
    }

    /// Counts a problem the caller found (for example a truncated last line).
    pub fn warn(&mut self, kind: WarningKind, line: u64) {
        self.warnings.add(kind, line);
    }

    /// Parses the next physical line (without its `\n`; a trailing `\r` is ignored) and
    /// calls `f` with each record it holds, in order. Returns whether the line held any NCCL
    /// message.
    pub fn line(&mut self, bytes: &[u8], f: &mut dyn FnMut(Record)) -> bool {
        let mut hits = std::mem::take(&mut self.hits);
        super::lines::hits_in(bytes, &mut hits);
        let found = self.line_hits(bytes, &hits, f);
        self.hits = hits;
        found
    }

    /// [`LineParser::line`] given the offsets of `NCCL ` in `bytes` (ascending), as
    /// [`super::lines`] finds them for a whole buffer at once, into any [`Sink`].
    pub(super) fn line_hits<S: Sink + ?Sized>(
        &mut self,
        bytes: &[u8],
        hits: &[usize],
        f: &mut S,
    ) -> bool {
        self.line += 1;
        if hits.is_empty() {
            // No prefix marker and no `NCCL version`: nothing here for the parser.
            return false;
        }
        let finder = self.finder;
        let mut found = false;
        // A marker is ` NCCL `: the hits with a space before them.
        let markers = hits
            .iter()
            .filter(|&&h| h > 0 && bytes[h - 1] == b' ')
            .map(|&h| h - 1);
        finder.each_at(bytes, markers, |p| {
            found = true;
            self.message(p, f);
        });
        if !found {
            let version = hits
                .iter()
                .find(|&&h| bytes[h..].starts_with(b"NCCL version "));
            if let Some(&at) = version {
                // Up to 2.21 rank 0 prints the version bare, without a prefix.
                let event = topo::parse(&bytes[at..]);
                if let Some(Event::Version { version, .. }) = &event {
                    self.bare_version = self.bare_version.or(*version);
                }
                if let Some(event) = event {
                    found = true;
                    let origin = self.origin_bare();
                    f.record(Record { origin, event });
                }
            }
        }
        found
    }

    fn origin_bare(&self) -> Origin {
        Origin {
            line: self.line,
            host: Arc::from(""),
            pid: 0,
            tid: 0,
            dev: None,
            comm: None,
        }
    }

    fn host(&mut self, name: &[u8]) -> u32 {
        if self.has_last_host && self.last_host.0 == name {
            return self.last_host.1;
        }
        let idx = match self.host_index.get(name).copied() {
            Some(i) => i,
            None => match self.glued_host(name) {
                Some(i) => {
                    self.host_index.insert(name.into(), i);
                    i
                }
                None => {
                    let i = u32::try_from(self.hosts.len()).unwrap_or(u32::MAX);
                    self.hosts
                        .push(Arc::from(String::from_utf8_lossy(name).as_ref()));
                    self.host_index.insert(name.into(), i);
                    i
                }
            },
        };
        self.last_host.0.clear();
        self.last_host.0.extend_from_slice(name);
        self.last_host.1 = idx;
        self.has_last_host = true;
        idx
    }

    /// A known host that `name` ends with: text glued in front of a prefix (a table row's
    /// `-1`, another message's tail) is not part of the hostname.
    fn glued_host(&self, name: &[u8]) -> Option<u32> {
        self.hosts
            .iter()
            .enumerate()
            .filter(|(_, h)| name.len() > h.len() && name.ends_with(h.as_bytes()))
            .max_by_key(|(_, h)| h.len())
            .and_then(|(i, _)| u32::try_from(i).ok())
    }

    fn message<S: Sink + ?Sized>(&mut self, p: Prefixed<'_>, f: &mut S) {
        let h = self.host(p.host);
        let key = (h, p.pid, p.tid);
        let (origin, event) = match p.level {
            Level::Trace | Level::Call => return,
            Level::Warn => (
                self.origin(h, &p),
                Event::Warn {
                    source: String::from_utf8_lossy(p.source).into_owned(),
                    message: super::scan::text(p.msg.trim_ascii(), 512),
                },
            ),
            Level::Info => match decision::parse(p.msg) {
                Some(PerCall::Coll(c)) => return self.coll(key, &p, c, f),
                Some(PerCall::Tuning(t)) => {
                    let mut origin = self.origin(h, &p);
                    let event = self.decision(key, t, &mut origin);
                    (origin, event)
                }
                Some(PerCall::Malformed) => {
                    self.warnings.add(WarningKind::MalformedDecision, self.line);
                    return;
                }
                None => {
                    let mut origin = self.origin(h, &p);
                    match self.info(key, p, &mut origin) {
                        Some(event) => (origin, event),
                        None => return,
                    }
                }
            },
        };
        f.record(Record { origin, event });
    }

    /// Where the message `p` of host number `h` was logged (attributed to no communicator).
    fn origin(&self, h: u32, p: &Prefixed<'_>) -> Origin {
        Origin {
            line: self.line,
            host: self.hosts.get(h as usize).unwrap_or(&self.no_host).clone(),
            pid: p.pid,
            tid: p.tid,
            dev: p.dev,
            comm: None,
        }
    }

    /// A COLL line: remembered for a TUNING line that may follow on its thread, and handed to
    /// the sink as it is.
    fn coll<S: Sink + ?Sized>(&mut self, key: ThreadKey, p: &Prefixed<'_>, c: CollCall, f: &mut S) {
        let t = self.threads.entry(key).or_default();
        if t.colls.len() < RECENT_COLLS {
            t.colls.push((c, p.dev));
        } else {
            t.colls[t.next] = (c, p.dev);
        }
        t.next = (t.next + 1) % RECENT_COLLS;
        let at = At {
            line: self.line,
            host: self.hosts.get(key.0 as usize).unwrap_or(&self.no_host),
            pid: p.pid,
            tid: p.tid,
            dev: p.dev,
        };
        f.coll(at, c);
    }

    /// An INFO message that is no per-call line: a tuning-table row or an init-time fact.
    fn info(&mut self, key: ThreadKey, p: Prefixed<'_>, origin: &mut Origin) -> Option<Event> {
        let (h, pid, _) = key;
        if memchr::memchr(b'|', p.msg).is_some() {
            if let Some(row) = table::parse(p.msg) {
                return self.table_row(key, row, origin);
            }
        }
        let event = topo::parse(p.msg)?;
        match &event {
            Event::Version { version, text } => match version {
                Some(v) => {
                    if !v.is_known() {
                        self.warnings.add(WarningKind::UnknownVersion, self.line);
                    }
                    self.versions.insert((h, pid), *v);
                }
                None if !text.is_empty() => {
                    self.warnings.add(WarningKind::UnknownVersion, self.line)
                }
                None => {}
            },
            Event::CommInit(c) => self.comm_init(key, p.dev, c),
            _ => {}
        }
        origin.comm = match &event {
            Event::CommInit(c) => Some(c.comm),
            _ => self.init_comm(key, p.dev),
        };
        Some(event)
    }

    fn comm_init(&mut self, key: ThreadKey, dev: Option<u32>, c: &CommInit) {
        let (h, pid, _) = key;
        let known = self.comms.get(&(h, pid, c.comm)).and_then(|r| r.comm_id);
        self.comms.insert(
            (h, pid, c.comm),
            CommRef {
                rank: c.rank,
                nranks: c.nranks,
                comm_id: c.comm_id.or(known),
            },
        );
        let t = self.threads.entry(key).or_default();
        if c.phase == Phase::Start {
            t.init_comm = Some(c.comm);
            t.algos.clear();
            if let Some(d) = dev {
                self.dev_comm.insert((h, pid, d), c.comm);
            }
        } else if c.phase == Phase::Complete && t.init_comm == Some(c.comm) {
            t.init_comm = None;
        }
    }

    /// The communicator a thread's init-time line belongs to.
    fn init_comm(&self, key: ThreadKey, dev: Option<u32>) -> Option<u64> {
        let (h, pid, _) = key;
        self.threads
            .get(&key)
            .and_then(|t| t.init_comm)
            .or_else(|| dev.and_then(|d| self.dev_comm.get(&(h, pid, d)).copied()))
    }

    fn table_row(&mut self, key: ThreadKey, row: Row, origin: &mut Origin) -> Option<Event> {
        origin.comm = self.init_comm(key, origin.dev);
        let t = self.threads.entry(key).or_default();
        match row {
            Row::Header(algos) => {
                t.algos = algos;
                None
            }
            Row::Other => None,
            Row::Old => {
                self.warnings.add(WarningKind::OldTableLayout, self.line);
                Some(Event::OldModelTable)
            }
            Row::Func(func, values) => {
                if t.algos.is_empty() {
                    self.warnings
                        .add(WarningKind::TableRowWithoutHeader, self.line);
                    return None;
                }
                let cells = values
                    .iter()
                    .enumerate()
                    .filter_map(|(i, &(lat, bw))| {
                        Some(ModelCell {
                            algo: *t.algos.get(i / 3)?,
                            proto: Proto::ALL[i % 3],
                            latency_us: lat,
                            bandwidth_gbs: bw,
                        })
                    })
                    .collect();
                Some(Event::ModelRow { func, cells })
            }
        }
    }

    fn decision(&mut self, key: ThreadKey, t: TuningLine, origin: &mut Origin) -> Event {
        let (h, pid, _) = key;
        let comms = &self.comms;
        // The COLL line this decision follows: same function, then preferably the same
        // device (one process may drive several GPUs), else a comm where this is rank 0.
        let dev = origin.dev;
        let coll = self.threads.get(&key).and_then(|ts| {
            let newest_first = (0..ts.colls.len())
                .map(|k| (ts.next + RECENT_COLLS - 1 - k) % RECENT_COLLS)
                .filter_map(|i| ts.colls.get(i))
                .filter(|(c, _)| t.func.is_none_or(|f| f == c.func));
            let rank0 = |c: &CollCall| comms.get(&(h, pid, c.comm)).is_some_and(|r| r.rank == 0);
            newest_first
                .clone()
                .find(|(_, d)| dev.is_some() && *d == dev)
                .or_else(|| newest_first.clone().find(|(c, _)| rank0(c)))
                .or_else(|| newest_first.clone().next())
                .map(|(c, _)| *c)
        });
        let comm = coll.and_then(|c| self.comms.get(&(h, pid, c.comm)).copied());
        let algo = match t.algo {
            AlgoField::Index(i) => {
                let count = self
                    .versions
                    .get(&(h, pid))
                    .or(self.bare_version.as_ref())
                    .map_or(if t.func.is_some() { 7 } else { 6 }, |v| v.algo_count());
                let a = Algo::from_index(i, count);
                if a.is_none() {
                    self.warnings.add(WarningKind::UnknownAlgorithm, self.line);
                }
                a
            }
            AlgoField::Name(a) => {
                if a.is_none() {
                    self.warnings.add(WarningKind::UnknownAlgorithm, self.line);
                }
                a
            }
            AlgoField::Absent => None,
        };
        if t.bad_proto {
            self.warnings.add(WarningKind::UnknownProtocol, self.line);
        }
        if coll.is_none() {
            self.warnings
                .add(WarningKind::DecisionWithoutColl, self.line);
        }
        origin.comm = coll.map(|c| c.comm);
        Event::Decision(Decision {
            collective: t.func.or(coll.map(|c| c.func)),
            bytes: t.bytes,
            algo,
            proto: t.proto,
            channels_lo: t.channels.map(|c| c.0),
            channels_hi: t.channels.map(|c| c.1),
            model_time_us: t.time_us,
            path: t.path,
            kernel: t.kernel,
            comm: coll.map(|c| c.comm),
            comm_id: comm.and_then(|c| c.comm_id),
            rank: comm.map(|c| c.rank),
            nranks: comm.map(|c| c.nranks).or(coll.map(|c| c.nranks)),
            count: coll.map(|c| c.count),
            datatype: coll.map(|c| c.datatype),
            op_count: coll.map(|c| c.op_count),
            origin: origin.clone(),
        })
    }
}
