//! One NCCL Inspector record as plain data: what the readers produce from a training job's
//! profiler output (JSON records or a Prometheus textfile snapshot) and what the production
//! report aggregates and holds against a benchmark curve.
//!
//! What records repeat (communicator, rank, host, process, format version) is one shared
//! [`Source`] behind an [`Arc`]: a job's file holds millions of records from a handful of
//! communicators in one process, and those fields held per record would be most of each
//! record's memory. A name outside the known ones is an `Arc<str>` shared the same way.
//!
//! Sizes are in nccl-tests' convention for the collective (the size column of a benchmark
//! table), because a job's record is only comparable with the benchmark row of the same
//! convention; the size as the plugin wrote it is derived back from it
//! ([`Record::raw_size`]).

use crate::core::collective::Collective;
use std::path::PathBuf;
use std::sync::Arc;

/// What was recorded.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A collective ncclbench benchmarks (NCCL's `AllReduce` is `all_reduce`).
    Collective(Collective),
    /// A collective name ncclbench has no benchmark for, as written.
    Other(Arc<str>),
    /// A point-to-point send to `peer` (rank in the communicator; `None` when not written).
    Send {
        /// The receiving rank.
        peer: Option<u32>,
    },
    /// A point-to-point receive from `peer`.
    Recv {
        /// The sending rank.
        peer: Option<u32>,
    },
}

/// The message size of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// An exact byte count (JSON records).
    Exact(u64),
    /// A bucket `[lo, hi)` in bytes (Prometheus `message_size="512-513MB"` labels).
    Bucket {
        /// Lowest size of the bucket.
        lo: u64,
        /// First size above the bucket.
        hi: u64,
    },
}

/// How [`Record::size`] was derived from the size as written ([`Record::raw_size`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeRule {
    /// The size as written is already nccl-tests' size (AllReduce, Broadcast, Reduce, P2P).
    AsWritten,
    /// The size as written is one rank's part: nccl-tests' size is that times the rank count
    /// (AllGather, ReduceScatter).
    TimesRanks,
    /// Neither the collective nor the record's own bandwidths tell the convention (the plugin
    /// writes zero bandwidths for AllToAll): `size` holds the size as written, unconverted, and
    /// must not be joined to a benchmark row by size.
    Unknown,
}

/// How the record's time was taken (`coll_timing_source`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Timing {
    /// GPU kernel timing (`kernel_gpu`): the only source comparable with a benchmark.
    KernelGpu,
    /// CPU-side kernel timing (`kernel_cpu`).
    KernelCpu,
    /// CPU-side whole-collective timing (`collective_cpu`).
    CollectiveCpu,
    /// Any other value, as written.
    Other(Arc<str>),
}

/// Where a record came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A JSON record.
    Json,
    /// One sample set of a Prometheus textfile snapshot (latest values, no per-call count).
    Prometheus,
}

/// What every record of one communicator in one process shares (for a Prometheus snapshot,
/// what one label set's samples share): where the records came from and who wrote them.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// The file it was read from.
    pub file: Arc<PathBuf>,
    /// JSON or Prometheus.
    pub origin: Origin,
    /// Communicator hash (`header.id`); one communicator has one id across its ranks.
    pub comm_id: String,
    /// `comm_name`, where the format version writes it.
    pub comm_name: Option<String>,
    /// Rank in the communicator (`None` where not written: Prometheus has `gpu` instead).
    pub rank: Option<u32>,
    /// Ranks of the communicator (at least one: the readers refuse a record of none).
    pub nranks: u32,
    /// Nodes of the communicator, where written.
    pub nnodes: Option<u32>,
    /// Host name (`metadata.hostname`, Prometheus `node`).
    pub host: Option<String>,
    /// Process id (`metadata.pid`).
    pub pid: Option<u32>,
    /// The GPU (Prometheus `gpu` label), where written.
    pub gpu: Option<String>,
    /// NCCL's algorithm and protocol (`Ring_ll`), where written (Prometheus `algo_proto`).
    pub algo_proto: Option<String>,
    /// `inspector_output_format_version` (or the Prometheus `version` label).
    pub format_version: Option<String>,
}

/// One recorded operation (or, for a Prometheus snapshot, one label set's latest values).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Who wrote it (shared by the records of one communicator in one process).
    pub source: Arc<Source>,
    /// The operation.
    pub op: Op,
    /// Per-communicator sequence number (`coll_sn` / `p2p_sn`).
    pub seq: Option<u64>,
    /// The size in nccl-tests' convention for the collective (what a benchmark row's size
    /// column means), derived from the size as written ([`Record::raw_size`]) and the rank
    /// count.
    pub size: Size,
    /// How `size` was derived (and whether it can be trusted for a join by size).
    pub size_rule: SizeRule,
    /// Execution time in microseconds.
    pub time_us: f64,
    /// The timing source (`None`: older format versions do not write it).
    pub timing: Option<Timing>,
    /// Bus bandwidth as written, GB/s (`None` where not written or not a number).
    pub busbw_gbs: Option<f64>,
    /// `metadata.dump_timestamp_us` (or the event trace's time), for ordering records in time.
    pub timestamp_us: Option<u64>,
}

impl Record {
    /// The size as the plugin wrote it: [`Record::size`] back in the plugin's convention (one
    /// rank's part under [`SizeRule::TimesRanks`]; the division is exact, as `size` is that
    /// part times the rank count).
    pub fn raw_size(&self) -> Size {
        let n = u64::from(self.source.nranks.max(1));
        match (self.size_rule, self.size) {
            (SizeRule::TimesRanks, Size::Exact(b)) => Size::Exact(b / n),
            (SizeRule::TimesRanks, Size::Bucket { lo, hi }) => Size::Bucket {
                lo: lo / n,
                hi: hi / n,
            },
            (_, size) => size,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_stays_small_and_its_raw_size_undoes_the_rule() {
        // A dump of a GiB is millions of records: the record's width is most of the memory
        // a read keeps.
        assert!(
            std::mem::size_of::<Record>() <= 144,
            "{}",
            std::mem::size_of::<Record>()
        );
        let source = Arc::new(Source {
            file: Arc::new(PathBuf::from("f.log")),
            origin: Origin::Json,
            comm_id: "0xa".into(),
            comm_name: None,
            rank: Some(3),
            nranks: 8,
            nnodes: None,
            host: None,
            pid: None,
            gpu: None,
            algo_proto: None,
            format_version: None,
        });
        let r = Record {
            source,
            op: Op::Collective(Collective::AllGather),
            seq: None,
            size: Size::Bucket { lo: 64, hi: 72 },
            size_rule: SizeRule::TimesRanks,
            time_us: 1.0,
            timing: None,
            busbw_gbs: None,
            timestamp_us: None,
        };
        assert_eq!(r.raw_size(), Size::Bucket { lo: 8, hi: 9 });
        let exact = Record {
            size: Size::Exact(800),
            size_rule: SizeRule::Unknown,
            ..r.clone()
        };
        assert_eq!(exact.raw_size(), Size::Exact(800));
        let times = Record {
            size_rule: SizeRule::TimesRanks,
            ..exact
        };
        assert_eq!(times.raw_size(), Size::Exact(100));
    }
}
