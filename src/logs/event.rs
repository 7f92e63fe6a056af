//! What one NCCL log message says: the typed [`Event`]s the line parser emits, each with the
//! [`Origin`] (file line, host, pid, tid, device) it came from.
//!
//! [`Decision`] is the type the run-time joiner consumes: one per-call TUNING line, in file
//! order, with the communicator, rank and process it belongs to filled in from the COLL and
//! Init lines before it.

use super::names::{Algo, Func, NcclVersion, Proto};
pub use crate::result::topology::Nic;
use crate::result::tuning::TuningDecision;
use serde::Serialize;
use std::sync::Arc;

/// Where a message came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// 1-based physical line in the input.
    pub line: u64,
    /// Hostname from the prefix (empty for unprefixed lines such as a bare `NCCL version`).
    pub host: Arc<str>,
    /// Process id (0 when unprefixed).
    pub pid: u32,
    /// Thread id (0 when unprefixed).
    pub tid: u32,
    /// `[cudaDev]` of the logging thread.
    pub dev: Option<u32>,
    /// The communicator pointer the line is attributed to: a COLL line's own, a decision's
    /// matched COLL line's, or for init-time lines the communicator the thread (or else the
    /// device) is initialising. Pointers are per process.
    pub comm: Option<u64>,
}

/// Which per-call line a decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionPath {
    /// The regular kernel path: `Algo ... proto ...` (numeric 2.20-2.23, named 2.24+).
    Kernel,
    /// `[Symmetric]`: a symmetric-memory kernel (2.27+).
    Symmetric,
    /// `[Copy Engine]`: cudaMemcpy-based (2.29+).
    CopyEngine,
    /// `[Hierarchical CE]`: RMA proxy plus copy engine (2.30).
    HierarchicalCe,
}

/// One per-call TUNING decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The collective; `None` for 2.20-2.22 numeric lines with no COLL line before them.
    pub collective: Option<Func>,
    /// Bytes as NCCL printed them: for AllGather/ReduceScatter the total size up to 2.23 and
    /// the per-rank size from 2.24 on; for the other collectives always count x type size.
    pub bytes: u64,
    /// The algorithm (kernel path only).
    pub algo: Option<Algo>,
    /// The protocol (kernel path only).
    pub proto: Option<Proto>,
    /// First channel used (2.24+ `channel{Lo..Hi}`; 0 for symmetric kernels).
    pub channels_lo: Option<u32>,
    /// Last channel used, inclusive.
    pub channels_hi: Option<u32>,
    /// NCCL's model estimate in microseconds (2.20-2.23 numeric lines only).
    pub model_time_us: Option<f64>,
    /// Which line format.
    pub path: DecisionPath,
    /// Symmetric kernel name, or the copy-engine suffix.
    pub kernel: Option<String>,
    /// Communicator pointer, from the COLL line this decision follows.
    pub comm: Option<u64>,
    /// The communicator's `commId` (shared by all its ranks), from its Init line.
    pub comm_id: Option<u64>,
    /// The printing rank within the communicator (0 for kernel-path lines).
    pub rank: Option<u32>,
    /// Ranks in the communicator.
    pub nranks: Option<u32>,
    /// The COLL line's element count and datatype number, when matched.
    pub count: Option<u64>,
    /// `ncclDataType_t` number of the matched COLL line.
    pub datatype: Option<i64>,
    /// The COLL line's `opCount` (per communicator, includes warm-ups).
    pub op_count: Option<u64>,
    /// Where the line is.
    pub origin: Origin,
}

impl Decision {
    /// This one call's decision as a result annotation, in the spelling of ncclbench's
    /// `--tuning` columns: the algorithm in NCCL's table spelling, or the per-call path
    /// (`symmetric`, `copy_engine`, `hierarchical_ce`) where the line names no algorithm.
    pub fn annotation(&self) -> TuningDecision {
        let algo = match (self.algo, self.path) {
            (Some(a), _) => a.as_str().to_string(),
            (None, DecisionPath::Kernel) => String::new(),
            (None, DecisionPath::Symmetric) => "symmetric".into(),
            (None, DecisionPath::CopyEngine) => "copy_engine".into(),
            (None, DecisionPath::HierarchicalCe) => "hierarchical_ce".into(),
        };
        TuningDecision {
            algo,
            proto: self
                .proto
                .map(|p| p.as_str().to_string())
                .unwrap_or_default(),
            channels: self.channels_lo.zip(self.channels_hi),
            model_time_us: self.model_time_us,
            calls: 1,
        }
    }
}

/// One COLL line: a collective call as the API received it (all ranks print it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollCall {
    /// The function.
    pub func: Func,
    /// `opCount` (hex in the log).
    pub op_count: u64,
    /// Element count as passed (sendcount for AllGather, recvcount for ReduceScatter).
    pub count: u64,
    /// `ncclDataType_t` number.
    pub datatype: i64,
    /// `ncclRedOp_t` number.
    pub op: i64,
    /// Root (the peer for Send/Recv).
    pub root: i64,
    /// Communicator pointer.
    pub comm: u64,
    /// `[nranks=N]`.
    pub nranks: u32,
}

/// Communicator lifecycle phase of a `comm ... - Init START|COMPLETE` / `Destroy` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `Init START` (2.18.3+).
    Start,
    /// `Init COMPLETE`.
    Complete,
    /// `Destroy COMPLETE` or `Abort COMPLETE`.
    Destroy,
}

/// A communicator Init/Destroy line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommInit {
    /// Communicator pointer (per process).
    pub comm: u64,
    /// This rank.
    pub rank: u32,
    /// Ranks in the communicator.
    pub nranks: u32,
    /// `cudaDev`.
    pub cuda_dev: Option<u32>,
    /// `busId` (hex, `17000` = 0000:17:00.0).
    pub bus_id: Option<u64>,
    /// `commId` (absent on split lines of 2.23+ and on Destroy lines).
    pub comm_id: Option<u64>,
    /// Which line.
    pub phase: Phase,
}

/// The transport of a channel connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Transport {
    /// `via P2P/...` (NVLink or PCIe peer access, CUMEM, IPC).
    P2P,
    /// `via SHM/...` (through host memory).
    Shm,
    /// `via NET/...` (a network plugin: IB, Socket, a vendor plugin).
    Net,
    /// `via COLLNET...` or anything else.
    Other,
}

impl Transport {
    /// Short name.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::P2P => "P2P",
            Transport::Shm => "SHM",
            Transport::Net => "NET",
            Transport::Other => "other",
        }
    }
}

/// A `Channel NN/C : a[x] -> b[y] [send] via ...` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    /// Channel number.
    pub channel: u32,
    /// Sending rank.
    pub from: u32,
    /// Receiving rank.
    pub to: u32,
    /// Transport kind.
    pub transport: Transport,
    /// `/GDRDMA` on a NET connection.
    pub gdr: bool,
    /// The text after `via ` (`P2P/CUMEM/read`, `NET/IB/0/GDRDMA`).
    pub via: String,
}

/// A GPUDirect RDMA line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gdr {
    /// Enabled or Disabled.
    pub enabled: bool,
    /// `(distance, limit)` of the GPU/NIC pair form.
    pub distance: Option<(i64, i64)>,
    /// Whether this is the per-HCA form (`for HCA n 'name'`) rather than a GPU/NIC pair.
    pub per_hca: bool,
}

/// One tuning-model cell: latency and bandwidth of (function, algorithm, protocol).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ModelCell {
    /// Algorithm.
    pub algo: Algo,
    /// Protocol.
    pub proto: Proto,
    /// Latency, microseconds.
    pub latency_us: f64,
    /// Bandwidth, GB/s (0: disabled or unsupported).
    pub bandwidth_gbs: f64,
}

/// What a message says.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `NCCL version 2.x.y+cudaA.B` (prefixed, or bare from rank 0 up to 2.21).
    Version {
        /// Parsed `X.Y.Z`; `None` when the text after `NCCL version ` is not one.
        version: Option<NcclVersion>,
        /// The whole version text (`2.27.7+cuda13.0`).
        text: String,
    },
    /// `NCCL git version BRANCH HASH` (2.29+).
    GitVersion,
    /// `NAME set by environment to VALUE` (or `NAME set to VALUE`).
    Env {
        /// Variable name.
        name: String,
        /// Value (a trailing `.` of integer parameters removed).
        value: String,
    },
    /// `Bootstrap : Using eth0:10.0.0.1<0>` (any spacing).
    Bootstrap {
        /// `eth0:10.0.0.1<0>` (first interface).
        iface: String,
    },
    /// `NET/IB : Using [0]mlx5_0:1/IB ...; OOB ...`.
    NetIb(Vec<Nic>),
    /// `NET/IB : No device found.`
    NetIbNone,
    /// `Using network NAME`.
    Network(String),
    /// `... GPU Direct RDMA Enabled|Disabled ...`.
    Gdr(Gdr),
    /// A channel connection.
    Connection(Connection),
    /// `Channel 00/24 : 0 1 ...` (rank 0's ring order; `nchannels` after the slash).
    RingOrder {
        /// Channel count of the communicator.
        nchannels: u32,
    },
    /// An NVLink path in the topology dump.
    NvLink,
    /// A topology-dump line that shows no NVLink (`=== System : maxBw`, a graph `Pattern`
    /// line of another type): the topology is in the log.
    TopologyShown,
    /// `NVLS multicast support is [not ]available on dev N`.
    Nvls {
        /// Available.
        available: bool,
    },
    /// Communicator Init or Destroy.
    CommInit(CommInit),
    /// `N coll channels, ...`.
    Channels {
        /// Collective channels.
        coll: u32,
    },
    /// `Connected all rings`, `Connected all trees`, ... (the text).
    Connected(String),
    /// One function row of the tuning-model table, algorithms taken from the block header.
    ModelRow {
        /// The row's function.
        func: Func,
        /// Its cells.
        cells: Vec<ModelCell>,
    },
    /// A tuning-model table in the pre-2.18 single-block layout (not parsed).
    OldModelTable,
    /// A COLL line.
    Coll(CollCall),
    /// A per-call decision.
    Decision(Decision),
    /// A WARN line.
    Warn {
        /// `file.cc:123`.
        source: String,
        /// The message.
        message: String,
    },
}

/// One parsed message.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Where it came from.
    pub origin: Origin,
    /// What it says.
    pub event: Event,
}
