//! The semantic join of NCCL's debug log to the harness's calls, with no timestamps: the
//! harness knows every call it made on rank 0's communicator, in order ([`OpKey`]s, warm-ups
//! included), and NCCL prints, for rank 0 of each communicator, one COLL line per call and
//! one decision line per launched collective, in the same order.
//!
//! * **Decisions** are matched in order by (collective, bytes): each decision line of rank 0's
//!   communicator takes the first waiting call with its collective and byte count (bytes as
//!   that version prints them: total for all_gather/reduce_scatter before 2.24); calls it
//!   passes over got no line (count 0, or a version that prints none). Decisions of the
//!   measurement's own calls (untimed, timed, verification; not warm-ups) make its
//!   [`Tuning`]. Waiting calls are dropped after each measurement, so a stray line can never
//!   move a decision into a later measurement.
//! * **COLL lines** of rank 0's communicator are matched to the calls one by one in order
//!   (checked on collective, count and type), which gives each call's opCount; the offsets
//!   `opCount - seq` (and `opCount - launch group`) are counted, so the mapping is reported
//!   ("opCount = seq + 0 for 240 calls"), not assumed.

use crate::bench::observe::{OpKey, Phase};
use crate::core::collective::spec::LogBytes;
use crate::core::collective::Collective;
use crate::logs::{CollCall, Decision, Event, Func, NcclVersion, Record};
use crate::result::tuning::Tuning;
use std::collections::{BTreeMap, VecDeque};

/// NCCL's function for a collective whose harness call is one NCCL collective call (the
/// spec's log name).
pub fn func_of(c: Collective) -> Option<Func> {
    c.spec()
        .nccl
        .log_func
        .and_then(|name| Func::parse(name.as_bytes()))
}

/// A call waiting for its decision line.
#[derive(Debug, Clone)]
struct Waiting {
    op: OpKey,
    /// Whether it belongs to the measurement in progress (not a warm-up).
    measured: bool,
}

/// Joins one log (rank 0's process) to the calls of a run.
#[derive(Debug)]
pub struct Joiner {
    pid: Option<u32>,
    nranks: u64,
    version: Option<NcclVersion>,
    rank0_comm: Option<u64>,
    waiting: VecDeque<Waiting>,
    coll_waiting: VecDeque<OpKey>,
    current: Tuning,
    /// Calls made.
    pub calls: u64,
    /// Rank-0 decision lines read.
    pub decisions: u64,
    /// Of those, matched to a call.
    pub joined: u64,
    /// COLL lines matched to calls.
    pub coll_matched: u64,
    /// COLL lines that disagreed with their call.
    pub coll_mismatched: u64,
    /// COLL lines with no call left to match.
    pub coll_extra: u64,
    seq_offsets: BTreeMap<i128, u64>,
    group_offsets: BTreeMap<i128, u64>,
}

impl Joiner {
    /// A joiner for a communicator of `nranks` ranks; `pid` (when given) keeps only lines of
    /// that process.
    pub fn new(nranks: usize, pid: Option<u32>) -> Self {
        Joiner {
            pid,
            nranks: nranks as u64,
            version: None,
            rank0_comm: None,
            waiting: VecDeque::new(),
            coll_waiting: VecDeque::new(),
            current: Tuning::default(),
            calls: 0,
            decisions: 0,
            joined: 0,
            coll_matched: 0,
            coll_mismatched: 0,
            coll_extra: 0,
            seq_offsets: BTreeMap::new(),
            group_offsets: BTreeMap::new(),
        }
    }

    /// The NCCL version the log named, if any.
    pub fn version(&self) -> Option<NcclVersion> {
        self.version
    }

    /// Sets the version when the log does not name it (from the loaded library).
    pub fn assume_version(&mut self, v: NcclVersion) {
        self.version.get_or_insert(v);
    }

    /// The harness made a call.
    pub fn call(&mut self, op: &OpKey) {
        self.calls += 1;
        let measured = op.phase != Phase::Warmup;
        if measured {
            self.current.calls += 1;
            self.current.unmatched_calls += 1;
        }
        if func_of(op.collective).is_some() {
            self.waiting.push_back(Waiting {
                op: op.clone(),
                measured,
            });
            self.coll_waiting.push_back(op.clone());
        }
    }

    /// One parsed log record.
    pub fn record(&mut self, r: &Record) {
        if self
            .pid
            .is_some_and(|p| r.origin.pid != 0 && r.origin.pid != p)
        {
            return;
        }
        match &r.event {
            Event::Version {
                version: Some(v), ..
            } => self.version = Some(*v),
            Event::CommInit(c)
                if c.rank == 0
                    && u64::from(c.nranks) == self.nranks
                    && !matches!(c.phase, crate::logs::event::Phase::Destroy) =>
            {
                self.rank0_comm = Some(c.comm);
            }
            Event::Coll(c) if Some(c.comm) == self.rank0_comm => self.coll(c),
            Event::Decision(d) if self.is_rank0(d) => self.decision(d),
            _ => {}
        }
    }

    fn is_rank0(&self, d: &Decision) -> bool {
        match (d.comm, self.rank0_comm) {
            (Some(c), Some(r)) => c == r,
            _ => d.rank.is_none_or(|r| r == 0),
        }
    }

    fn coll(&mut self, c: &CollCall) {
        let Some(op) = self.coll_waiting.pop_front() else {
            self.coll_extra += 1;
            return;
        };
        let agrees = func_of(op.collective) == Some(c.func)
            && op.count == c.count
            && i64::from(op.dtype.nccl_code()) == c.datatype;
        if !agrees {
            self.coll_mismatched += 1;
            return;
        }
        self.coll_matched += 1;
        let oc = i128::from(c.op_count);
        *self.seq_offsets.entry(oc - i128::from(op.seq)).or_default() += 1;
        *self
            .group_offsets
            .entry(oc - i128::from(op.group))
            .or_default() += 1;
    }

    /// Whether a decision of `bytes` can be this call's.
    fn bytes_match(&self, op: &OpKey, bytes: u64) -> bool {
        if op.collective.spec().nccl.log_bytes != LogBytes::TotalBefore2_24 {
            return bytes == op.bytes;
        }
        let whole = op.bytes.saturating_mul(self.nranks);
        match self.version {
            Some(v) if (v.major, v.minor) >= (2, 24) => bytes == op.bytes,
            Some(_) => bytes == whole,
            None => bytes == op.bytes || bytes == whole,
        }
    }

    fn decision(&mut self, d: &Decision) {
        self.decisions += 1;
        let found = self.waiting.iter().position(|w| {
            d.collective
                .is_none_or(|f| func_of(w.op.collective) == Some(f))
                && self.bytes_match(&w.op, d.bytes)
        });
        let Some(i) = found else {
            return;
        };
        self.joined += 1;
        let w = self
            .waiting
            .drain(..=i)
            .next_back()
            .expect("position is in range");
        if w.measured {
            self.current.unmatched_calls -= 1;
            self.current.add(d.annotation());
        }
    }

    /// Closes the measurement in progress: its annotation, and a fresh one for the next.
    pub fn take_measurement(&mut self) -> Tuning {
        self.waiting.clear();
        std::mem::take(&mut self.current)
    }

    /// The opCount mapping in words, e.g. `opCount = seq + 0 for 240 calls`.
    pub fn op_count_text(&self) -> String {
        let n = self.coll_matched;
        if n == 0 {
            return String::new();
        }
        let mut s = match (self.seq_offsets.len(), self.group_offsets.len()) {
            (1, _) => {
                let k = self.seq_offsets.keys().next().expect("one");
                format!("opCount = seq + {k} for {n} calls")
            }
            (_, 1) => {
                let k = self.group_offsets.keys().next().expect("one");
                format!("opCount = launch group + {k} for {n} calls (calls of a group share one)")
            }
            _ => {
                let list: Vec<String> = self
                    .seq_offsets
                    .iter()
                    .take(8)
                    .map(|(k, c)| format!("{k} x{c}"))
                    .collect();
                format!(
                    "opCount - seq not constant over {n} calls (offsets {})",
                    list.join(", ")
                )
            }
        };
        if self.coll_mismatched + self.coll_extra > 0 {
            s += &format!(
                "; {} COLL lines disagreed with the call at their position, {} had none",
                self.coll_mismatched, self.coll_extra
            );
        }
        s
    }
}

#[cfg(test)]
mod tests;
