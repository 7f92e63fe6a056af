//! What NCCL's log showed about where and how a run communicated, as data for the run's
//! environment record: versions, the communicator's ranks, nodes and channels, transports per
//! path, GPUDirect RDMA, NVLS, networks and NICs. `crate::logs::topology` fills it from a log.

use crate::core::redact::Redactor;
use serde::Serialize;
use std::collections::BTreeMap;

/// What NCCL's log says about where and how a run communicated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopologySummary {
    /// NCCL version texts as printed (`2.27.7+cuda13.0`), sorted; more than one means the
    /// processes disagree.
    pub nccl_versions: Vec<String>,
    /// Communicators with an Init line in the log.
    pub communicators: usize,
    /// The largest communicator (most ranks, then most ranks seen), if any Init line was seen.
    pub comm: Option<CommTopology>,
    /// Connection lines (`Channel .. via ...`) per transport, over the whole log.
    pub transports: Vec<TransportUse>,
    /// Whether GPUDirect RDMA carried network traffic: `true` when a NET connection line
    /// ends in `/GDRDMA`, `false` when NET connections were logged and none did, `None`
    /// when no NET connection was logged.
    pub gdr_used: Option<bool>,
    /// `GPU Direct RDMA Enabled ...` lines (availability per HCA or GPU/NIC pair, not use).
    pub gdr_enabled_lines: u64,
    /// `GPU Direct RDMA Disabled ...` lines.
    pub gdr_disabled_lines: u64,
    /// `NVLS multicast support is [not ]available`: `true` when any process said available.
    pub nvls_available: Option<bool>,
    /// `Some(true)` when the topology dump showed NVLink, `Some(false)` when the dump is
    /// logged without one, `None` when it is not logged (GRAPH level only: its absence
    /// proves nothing).
    pub nvlink: Option<bool>,
    /// `Using network X` (`IB`, `Socket`, `AWS Libfabric`...), sorted.
    pub networks: Vec<String>,
    /// Data NICs from `NET/IB : Using` (`mlx5_0:1` over `RoCE`), sorted.
    pub nics: Vec<Nic>,
    /// Bootstrap interfaces as printed (`eth0:10.0.0.1<0>`), sorted.
    pub bootstrap: Vec<String>,
}

/// One communicator as the log shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommTopology {
    /// Ranks in it (`nranks` of its Init lines).
    pub nranks: u32,
    /// Ranks whose Init line is in the log.
    pub ranks_seen: u32,
    /// Ranks that logged `Init COMPLETE`.
    pub ranks_complete: u32,
    /// Distinct hosts; only when every rank was seen.
    pub nodes: Option<u32>,
    /// Ranks on each node, when every rank was seen and every node has the same number.
    pub ranks_per_node: Option<u32>,
    /// Each host with the ranks seen on it, by host name.
    pub hosts: Vec<HostRanks>,
    /// Channel count (`N coll channels`, ring order, or highest connected channel + 1).
    pub channels: Option<u32>,
    /// `Connected all rings`, `Connected all trees`, `Connected NVLS tree`... as printed.
    pub connected: Vec<String>,
}

/// The ranks of one communicator on one host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostRanks {
    /// Host name as NCCL printed it.
    pub host: String,
    /// Global ranks, ascending.
    pub ranks: Vec<u32>,
}

/// Connections over one kind of transport.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransportUse {
    /// `P2P`, `SHM`, `NET` or `other`.
    pub kind: String,
    /// Connection lines.
    pub connections: u64,
    /// Connection lines per path (`P2P/CUMEM`, `P2P/IPC`, `NET/IB`: the first two parts of
    /// the `via` text). Filled by `from_log_file`, which reads the lines themselves; empty
    /// from `summarize` alone, as a `LogSummary` keeps only the kind.
    pub paths: BTreeMap<String, u64>,
}

impl TopologySummary {
    /// Masks identifying text: host names through [`Redactor::host`], every printed text
    /// (interfaces with their addresses, NIC and network names, `Connected` lines) through
    /// [`Redactor::text`].
    pub fn redact(&mut self, r: &Redactor) {
        let text = |v: &mut Vec<String>| {
            for s in v.iter_mut() {
                *s = r.text(s);
            }
        };
        text(&mut self.networks);
        text(&mut self.bootstrap);
        for n in &mut self.nics {
            n.name = r.text(&n.name);
        }
        if let Some(c) = self.comm.as_mut() {
            for h in &mut c.hosts {
                h.host = r.host(&h.host);
            }
            text(&mut c.connected);
        }
    }
}

/// A network device from `NET/IB : Using [0]mlx5_0:1/IB ...`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Nic {
    /// Device name with port (`mlx5_0:1`).
    pub name: String,
    /// Link layer (`IB`, `RoCE`, ...).
    pub link: String,
}
