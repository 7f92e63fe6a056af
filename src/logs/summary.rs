//! What a set of logs says, aggregated: per host (version, env, interfaces, NICs, GDR,
//! transports, NVLS), per communicator (ranks, channels, connections, calls), the decisions
//! counted per (communicator, collective, bytes, choice), the tuning-model tables, WARN lines
//! grouped by kind, and the parse warnings. Every fact keeps the line it came from as
//! [`Evidence`], so findings can quote it.

use super::event::{Decision, DecisionPath, ModelCell, Nic, Transport};
use super::names::{Algo, Func, Proto};
use super::warnings::WarningKind;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A quoted input line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Evidence {
    /// File label.
    pub file: Arc<str>,
    /// 1-based line.
    pub line: u64,
    /// The line (CR and surrounding blanks trimmed, cut at 300 bytes).
    pub text: String,
}

/// How a communicator is identified.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CommKey {
    /// By `commId` (shared by all its ranks).
    Id(u64),
    /// By pointer within one process (no Init line with a commId seen).
    Local {
        /// Host.
        host: Arc<str>,
        /// Process.
        pid: u32,
        /// `comm` pointer.
        comm: u64,
    },
    /// Not known at all (TUNING lines without COLL lines): per process.
    Process {
        /// Host.
        host: Arc<str>,
        /// Process.
        pid: u32,
    },
}

/// Facts about one host.
#[derive(Debug, Clone, Default)]
pub struct HostFacts {
    /// Process ids seen.
    pub pids: BTreeSet<u32>,
    /// NCCL version texts, with the first line of each.
    pub versions: BTreeMap<String, Evidence>,
    /// Bootstrap interfaces (`eth0:10.0.0.1<0>`).
    pub bootstrap: BTreeMap<String, Evidence>,
    /// Data NICs from `NET/IB : Using`.
    pub nics: BTreeSet<Nic>,
    /// The first `NET/IB : Using` line.
    pub nic_evidence: Option<Evidence>,
    /// `NET/IB : No device found.`
    pub ib_none: Option<Evidence>,
    /// `Using network X`.
    pub networks: BTreeMap<String, Evidence>,
    /// GPUDirect RDMA lines: enabled count.
    pub gdr_enabled: u64,
    /// Disabled count.
    pub gdr_disabled: u64,
    /// `(distance, limit)` pairs of disabled GPU/NIC pairs.
    pub gdr_distances: BTreeSet<(i64, i64)>,
    /// First few disabled lines.
    pub gdr_disabled_evidence: Vec<Evidence>,
    /// Connections per transport, with the first line of each.
    pub transports: BTreeMap<Transport, (u64, Evidence)>,
    /// NET connections using GPUDirect RDMA.
    pub net_gdr: u64,
    /// `NVLS multicast support is [not ]available`: (available, evidence).
    pub nvls: Option<(bool, Evidence)>,
    /// NVLink in the topology: `Some(true)` when a topology line shows an NVLink,
    /// `Some(false)` when the topology dump is logged without one, `None` when this log does
    /// not show the topology (GRAPH lines not logged): not seen is not absent.
    pub nvlink: Option<bool>,
}

/// One rank of a communicator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankInfo {
    /// Host.
    pub host: Arc<str>,
    /// Process.
    pub pid: u32,
    /// CUDA device.
    pub cuda_dev: Option<u32>,
    /// PCI bus id.
    pub bus_id: Option<u64>,
}

/// Facts about one communicator.
#[derive(Debug, Clone, Default)]
pub struct CommFacts {
    /// Ranks in it.
    pub nranks: Option<u32>,
    /// Ranks seen in Init lines.
    pub ranks: BTreeMap<u32, RankInfo>,
    /// Ranks that logged `Init COMPLETE`.
    pub complete: BTreeSet<u32>,
    /// Channel count (`N coll channels`, ring order, or highest channel + 1).
    pub channels: u32,
    /// `Connected all rings, ...` and friends (text, first line).
    pub connected: BTreeMap<String, Evidence>,
    /// COLL lines per function.
    pub colls: BTreeMap<Func, u64>,
}

/// What a decision chose.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Choice {
    /// Line format.
    pub path: DecisionPath,
    /// Algorithm.
    pub algo: Option<Algo>,
    /// Protocol.
    pub proto: Option<Proto>,
    /// First channel.
    pub channels_lo: Option<u32>,
    /// Last channel (inclusive).
    pub channels_hi: Option<u32>,
    /// Kernel name (symmetric) or copy-engine suffix.
    pub kernel: Option<String>,
}

impl Choice {
    /// The choice a decision made.
    pub fn of(d: &Decision) -> Choice {
        Choice {
            path: d.path,
            algo: d.algo,
            proto: d.proto,
            channels_lo: d.channels_lo,
            channels_hi: d.channels_hi,
            kernel: d.kernel.clone(),
        }
    }
}

/// How often one choice was seen for one (communicator, collective, bytes).
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceCount {
    /// The choice.
    pub choice: Choice,
    /// Lines.
    pub count: u64,
    /// Model time of the first line (2.20-2.23).
    pub model_time_us: Option<f64>,
    /// First line.
    pub first: (Arc<str>, u64),
}

/// Tuning-model cells of one communicator's table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelTable {
    /// Whose table.
    pub comm: Option<CommKey>,
    /// Where it starts.
    pub first: Option<(Arc<str>, u64)>,
    /// Host that printed it.
    pub host: Arc<str>,
    /// Cells per function.
    pub rows: BTreeMap<Func, Vec<ModelCell>>,
}

/// WARN lines of one kind.
#[derive(Debug, Clone, Default)]
pub struct WarnGroup {
    /// Lines.
    pub count: u64,
    /// Hosts that logged it.
    pub hosts: BTreeSet<Arc<str>>,
    /// First few lines.
    pub examples: Vec<Evidence>,
}

/// An environment variable's values.
#[derive(Debug, Clone, Default)]
pub struct EnvFact {
    /// Value -> (hosts, first line).
    pub values: BTreeMap<String, (BTreeSet<Arc<str>>, Evidence)>,
}

/// Per-file counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileStats {
    /// File label.
    pub name: String,
    /// Physical lines.
    pub lines: u64,
    /// Lines holding at least one NCCL message.
    pub nccl_lines: u64,
    /// COLL lines.
    pub colls: u64,
    /// Decision lines.
    pub decisions: u64,
    /// Parse warnings: kind -> (count, first line).
    pub warnings: BTreeMap<WarningKind, (u64, u64)>,
}

/// Everything read from a set of logs.
#[derive(Debug, Clone, Default)]
pub struct LogSummary {
    /// Per input file.
    pub files: Vec<FileStats>,
    /// Per host (only hosts named by a prefix or resolved to one).
    pub hosts: BTreeMap<Arc<str>, HostFacts>,
    /// Bare `NCCL version` lines (2.18-2.21) whose process no line of their file shows.
    pub unattributed_versions: BTreeMap<String, Evidence>,
    /// Per communicator.
    pub comms: BTreeMap<CommKey, CommFacts>,
    /// Decisions: (communicator, collective, bytes) -> choices seen, most frequent first.
    pub decisions: BTreeMap<(CommKey, Option<Func>, u64), Vec<ChoiceCount>>,
    /// Every decision in file order (only with `ParseOptions::keep_decisions`).
    pub decision_log: Vec<Decision>,
    /// Tuning-model tables, one per printing (comm rank 0 per communicator).
    pub model_tables: Vec<ModelTable>,
    /// `NCCL_*` variables in force.
    pub env: BTreeMap<String, EnvFact>,
    /// WARN lines by kind (`file: message with numbers replaced`).
    pub warns: BTreeMap<String, WarnGroup>,
}

impl LogSummary {
    /// Total decision lines.
    pub fn decision_count(&self) -> u64 {
        self.files.iter().map(|f| f.decisions).sum()
    }

    /// NCCL versions over all hosts.
    pub fn versions(&self) -> BTreeSet<&str> {
        self.hosts
            .values()
            .flat_map(|h| h.versions.keys().map(String::as_str))
            .chain(self.unattributed_versions.keys().map(String::as_str))
            .collect()
    }
}

impl LogSummary {
    /// A redactor that knows the host names, PIDs and communicator ids this log shows, so that
    /// none of them survives a `--redact` report.
    pub fn redactor(&self) -> crate::core::redact::Redactor {
        let mut hosts: Vec<String> = Vec::new();
        let mut pids: Vec<u32> = Vec::new();
        for (h, f) in &self.hosts {
            hosts.push(h.to_string());
            pids.extend(&f.pids);
        }
        let mut comm_ids = Vec::new();
        for (k, c) in &self.comms {
            if let CommKey::Id(id) = k {
                comm_ids.push(*id);
            }
            for r in c.ranks.values() {
                hosts.push(r.host.to_string());
                pids.push(r.pid);
            }
        }
        crate::core::redact::Redactor::for_names(hosts, pids).with_comm_ids(comm_ids)
    }
}
