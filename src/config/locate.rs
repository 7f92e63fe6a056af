//! The validated `ncclbench locate` command.

use super::stage::StageBase;
use crate::core::collective::Collective;
use std::path::PathBuf;

/// A validated `ncclbench locate` command.
#[derive(Debug, Clone, PartialEq)]
pub struct LocateConfig {
    /// `--collective`: `all_reduce` or `sendrecv`.
    pub collective: Collective,
    /// `-b`: bytes per rank buffer (`None`: the backend's default).
    pub bytes: Option<u64>,
    /// `--rounds`: rail rounds, the partners each node meets.
    pub rounds: usize,
    /// `-n`: timed iterations per group.
    pub iters: usize,
    /// `-w`: warm-up iterations per group.
    pub warmup: usize,
    /// `-T`: the bound of every wait, seconds.
    pub timeout_s: u64,
    /// `--out DIR` (`None`: `ncclbench-locate-<date>-<time>`).
    pub out: Option<PathBuf>,
    /// `--profile NAME|FILE`: floors from its `[locate]` table.
    pub profile: Option<String>,
    /// `--nccl-log FILE...`: NCCL logs of the job, to name the NIC of a rail.
    pub nccl_logs: Vec<PathBuf>,
    /// The benchmark flags (`--backend`, `-t`, `-g`, `--nccl-lib`, `--devices`) and the
    /// configuration the job and its backend start from.
    pub base: StageBase,
    /// `--redact`: host names and PIDs masked in what is printed and written.
    pub redact: bool,
}
