//! [`Record`]: one recorded operation in 64 bytes. A job's dump holds millions of records, and
//! the memory they take (faulted in, copied, freed) was most of what reading a dump cost once
//! parsing was fast: at 144 bytes, keeping the records took about 40% of the reading time.
//!
//! So a record holds its numbers as plain words (a bandwidth not written is NaN; a sequence
//! number or time stamp not written is a flag), the operation, timing source and size rule
//! as codes, and what few records have (a name outside the known ones, a Prometheus size
//! bucket's upper end) behind one pointer to a [`Rare`] kept in the read's arena. The
//! accessors give each field back as [`Parts`] holds it.

use super::{Op, Parts, Size, SizeRule, Source, Timing};
use crate::analysis::inspector::Arena;
use crate::core::collective::Collective;

/// What few records have: an operation or timing source name outside the known ones, the
/// upper end of a size bucket. Kept in the read's arena, one per distinct value.
#[derive(Debug, PartialEq, Eq)]
pub struct Rare {
    // The arena's own names: they live as long as the arena, and are only handed out
    // borrowed from a record, which borrows the arena.
    pub(in crate::analysis::inspector) op: Option<&'static String>,
    pub(in crate::analysis::inspector) timing: Option<&'static String>,
    pub(in crate::analysis::inspector) hi: Option<u64>,
}

/// One recorded operation (or, for a Prometheus snapshot, one label set's latest values).
#[derive(Clone, Copy)]
pub struct Record<'a> {
    /// Who wrote it (shared by the records of one communicator in one process).
    pub source: &'a Source,
    /// Execution time in microseconds.
    pub time_us: f64,
    /// The size (a bucket's lower end).
    size: u64,
    seq: u64,
    /// NaN where not written.
    busbw: f64,
    timestamp: u64,
    rare: Option<&'a Rare>,
    /// One of the `OTHER`, `COLL`, `SEND`, `RECV` kinds.
    kind: u8,
    /// The collective's position in [`Collective::ALL`].
    coll: u8,
    /// 0: none, then [`TIMINGS`]'s order, then `TIMING_OTHER`.
    timing: u8,
    /// The size rule (low two bits) and the `HAS_*` flags.
    bits: u8,
    peer: u32,
}

const COLL: u8 = 0;
const OTHER: u8 = 1;
const SEND: u8 = 2;
const RECV: u8 = 3;

const TIMINGS: [Timing<'static>; 3] = [Timing::KernelGpu, Timing::KernelCpu, Timing::CollectiveCpu];
const TIMING_OTHER: u8 = 4;

const RULES: [SizeRule; 3] = [SizeRule::AsWritten, SizeRule::TimesRanks, SizeRule::Unknown];
const RULE: u8 = 0b11;
const HAS_SEQ: u8 = 1 << 2;
const HAS_TIMESTAMP: u8 = 1 << 3;
const HAS_PEER: u8 = 1 << 4;
const BUCKET: u8 = 1 << 5;

impl<'a> Record<'a> {
    /// The record of `parts`; what few records have is kept in `arena` (a NaN bandwidth is
    /// read back as not written).
    pub fn new(parts: Parts<'a>, arena: &'a Arena) -> Self {
        let (kind, coll, peer, op_name) = match parts.op {
            Op::Collective(c) => {
                let at = Collective::ALL.iter().position(|&x| x == c);
                (
                    COLL,
                    at.expect("every collective is in ALL") as u8,
                    None,
                    None,
                )
            }
            Op::Other(name) => (OTHER, 0, None, Some(name.as_str())),
            Op::Send { peer } => (SEND, 0, peer, None),
            Op::Recv { peer } => (RECV, 0, peer, None),
        };
        let (timing, timing_name) = match parts.timing {
            None => (0, None),
            Some(Timing::Other(name)) => (TIMING_OTHER, Some(name.as_str())),
            Some(t) => {
                let at = TIMINGS.iter().position(|&x| x == t);
                (
                    at.expect("every named timing is in TIMINGS") as u8 + 1,
                    None,
                )
            }
        };
        let (size, hi) = match parts.size {
            Size::Exact(b) => (b, None),
            Size::Bucket { lo, hi } => (lo, Some(hi)),
        };
        let rare = (op_name.is_some() || timing_name.is_some() || hi.is_some())
            .then(|| arena.rare(op_name, timing_name, hi));
        let rule = RULES.iter().position(|&r| r == parts.size_rule);
        let flag = |yes: bool, bit: u8| if yes { bit } else { 0 };
        Record {
            source: parts.source,
            time_us: parts.time_us,
            size,
            seq: parts.seq.unwrap_or(0),
            busbw: parts.busbw_gbs.unwrap_or(f64::NAN),
            timestamp: parts.timestamp_us.unwrap_or(0),
            rare,
            kind,
            coll,
            timing,
            bits: rule.expect("every rule is in RULES") as u8
                | flag(parts.seq.is_some(), HAS_SEQ)
                | flag(parts.timestamp_us.is_some(), HAS_TIMESTAMP)
                | flag(peer.is_some(), HAS_PEER)
                | flag(hi.is_some(), BUCKET),
            peer: peer.unwrap_or(0),
        }
    }

    /// This record with another record's numbers: the same source, operation name and timing
    /// source, and `peer` (for a send or receive), `size` (exact), `rule`, `seq`, `time_us`,
    /// `busbw_gbs` and `timestamp_us` of its own. Records read along one shape share all but
    /// these, so each is made from the first without looking anything up.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::analysis::inspector) fn with_numbers(
        &self,
        peer: Option<u32>,
        size: u64,
        rule: SizeRule,
        seq: Option<u64>,
        time_us: f64,
        busbw_gbs: Option<f64>,
        timestamp_us: Option<u64>,
    ) -> Self {
        debug_assert!(
            self.bits & BUCKET == 0,
            "a shape's records have exact sizes"
        );
        let rule = match rule {
            SizeRule::AsWritten => 0,
            SizeRule::TimesRanks => 1,
            SizeRule::Unknown => 2,
        };
        let p2p = self.kind == SEND || self.kind == RECV;
        let has_peer = p2p && peer.is_some();
        Record {
            size,
            seq: seq.unwrap_or(0),
            time_us,
            busbw: busbw_gbs.unwrap_or(f64::NAN),
            timestamp: timestamp_us.unwrap_or(0),
            peer: if has_peer { peer.unwrap_or(0) } else { 0 },
            bits: rule
                | if seq.is_some() { HAS_SEQ } else { 0 }
                | if timestamp_us.is_some() {
                    HAS_TIMESTAMP
                } else {
                    0
                }
                | if has_peer { HAS_PEER } else { 0 },
            ..*self
        }
    }

    /// The operation.
    pub fn op(&self) -> Op<'a> {
        let peer = (self.bits & HAS_PEER != 0).then_some(self.peer);
        match self.kind {
            COLL => Op::Collective(Collective::ALL[usize::from(self.coll)]),
            SEND => Op::Send { peer },
            RECV => Op::Recv { peer },
            _ => Op::Other(self.rare.and_then(|r| r.op).expect("a name kept")),
        }
    }

    /// The size in nccl-tests' convention for the collective (what a benchmark row's size
    /// column means), derived from the size as written ([`Record::raw_size`]) and the rank
    /// count.
    pub fn size(&self) -> Size {
        match self.rare.and_then(|r| r.hi) {
            Some(hi) if self.bits & BUCKET != 0 => Size::Bucket { lo: self.size, hi },
            _ => Size::Exact(self.size),
        }
    }

    /// How [`Record::size`] was derived (and whether it can be trusted for a join by size).
    pub fn size_rule(&self) -> SizeRule {
        RULES[usize::from(self.bits & RULE)]
    }

    /// Per-communicator sequence number (`coll_sn` / `p2p_sn`).
    pub fn seq(&self) -> Option<u64> {
        (self.bits & HAS_SEQ != 0).then_some(self.seq)
    }

    /// The timing source (`None`: older format versions do not write it).
    pub fn timing(&self) -> Option<Timing<'a>> {
        match self.timing {
            0 => None,
            TIMING_OTHER => Some(Timing::Other(
                self.rare.and_then(|r| r.timing).expect("a name kept"),
            )),
            t => Some(TIMINGS[usize::from(t - 1)]),
        }
    }

    /// Bus bandwidth as written, GB/s.
    pub fn busbw_gbs(&self) -> Option<f64> {
        Some(self.busbw).filter(|b| !b.is_nan())
    }

    /// `metadata.dump_timestamp_us` (or the event trace's time), for ordering records in time.
    pub fn timestamp_us(&self) -> Option<u64> {
        (self.bits & HAS_TIMESTAMP != 0).then_some(self.timestamp)
    }

    /// Every field, as [`Record::new`] took them.
    pub fn parts(&self) -> Parts<'a> {
        Parts {
            source: self.source,
            op: self.op(),
            seq: self.seq(),
            size: self.size(),
            size_rule: self.size_rule(),
            time_us: self.time_us,
            timing: self.timing(),
            busbw_gbs: self.busbw_gbs(),
            timestamp_us: self.timestamp_us(),
        }
    }

    /// The size as the plugin wrote it: [`Record::size`] back in the plugin's convention (one
    /// rank's part under [`SizeRule::TimesRanks`]; the division is exact, as `size` is that
    /// part times the rank count).
    pub fn raw_size(&self) -> Size {
        let n = u64::from(self.source.nranks.max(1));
        match (self.size_rule(), self.size()) {
            (SizeRule::TimesRanks, Size::Exact(b)) => Size::Exact(b / n),
            (SizeRule::TimesRanks, Size::Bucket { lo, hi }) => Size::Bucket {
                lo: lo / n,
                hi: hi / n,
            },
            (_, size) => size,
        }
    }
}

impl PartialEq for Record<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl std::fmt::Debug for Record<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.parts().fmt(f)
    }
}
