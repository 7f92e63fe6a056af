//! Acceptance profiles: what `ncclbench accept` runs (the suite) and what it expects (busbw and
//! latency thresholds, an optional healthy baseline), read from TOML.
//!
//! Builtin profiles are the files of `profiles/` at the repository root, embedded in the binary.
//! Layout (every section but `[profile]` optional; unknown keys anywhere are errors):
//!
//! ```toml
//! [profile]
//! name = "h100-nvswitch"                 # required
//! description = "8x H100 SXM in one node, NVSwitch"
//! typical = true                         # thresholds are typical ranges, not guarantees
//! ranks = 8                              # ranks the thresholds assume; omit for any
//!
//! [suite]                                # every key optional; defaults shown
//! collectives = ["all_reduce", "all_gather"]   # default: every collective
//! correctness_min_bytes = "8"            # sizes: strings as `-b/-e` take them ("1K", "8G")
//! correctness_max_bytes = "16M"          #   or integers (bytes)
//! correctness_step_factor = 4            # >= 2
//! perf_min_bytes = "8"                   # sizes of both stages: min >= 1, min <= max
//! perf_max_bytes = "8G"
//! perf_step_factor = 2                   # >= 2
//! iters = 20                             # >= 1
//! warmup_iters = 5
//! timeout_s = 300                        # >= 1, passed as -T
//!
//! [[busbw]]                              # one per judged range
//! collective = "all_reduce"              # must be in suite.collectives
//! min_bytes = "1G"                       # required
//! max_bytes = "8G"                       # optional: up to the end of the sweep
//! min_gbs = 350                          # median busbw over the range must be >= this
//! typical_gbs = [350, 480]               # optional, for the report
//!
//! [[latency]]
//! collective = "all_reduce"
//! min_bytes = "0"                        # optional, default 0
//! max_bytes = "8"                        # required
//! max_us = 20                            # median time over the range must be <= this
//! typical_us = [10, 20]                  # optional
//!
//! [baseline]                             # optional
//! paths = ["healthy/performance"]        # relative to the profile file's directory
//! threshold_pct = 5                      # default 5
//!
//! [locate]                               # optional: accept runs `locate` when a performance
//! collective = "all_reduce"              #   check fails; all_reduce (default) or sendrecv
//! bytes = "256M"                         # per rank; default 256M on GPUs, 1M on host memory
//! rounds = 3                             # rail rounds (partners per node), 1..=1000
//! intra_node_min_gbs = 300               # optional floors (busbw, GB/s) of a node's group
//! inter_node_min_gbs = 40                #   and of a rail pair of GPUs on two nodes
//! ```
//!
//! Every problem is one [`Error::Usage`](crate::core::error::Error::Usage) line naming the
//! profile source and, where the TOML parser gives a position, the line and its text.
//!
//! Here: the profile's types. `builtin`: the shipped profiles and [`load`]. `parse`: the
//! checks from text to [`Profile`]. `raw`: the TOML shapes.

mod builtin;
mod parse;
mod raw;
#[cfg(test)]
mod tests;

use crate::core::collective::Collective;
use std::path::PathBuf;

pub use builtin::{builtins, load};
pub use parse::parse;

/// An acceptance profile: the suite to run and the thresholds to judge it by.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Profile name (`[profile] name`).
    pub name: String,
    /// One-line description.
    pub description: String,
    /// True when thresholds are typical ranges, not guarantees (every shipped profile says so).
    pub typical: bool,
    /// "builtin" or the file path as given.
    pub source: String,
    /// Ranks the thresholds assume (`None`: any).
    pub ranks: Option<usize>,
    /// What to run.
    pub suite: Suite,
    /// Bus bandwidth floors.
    pub busbw: Vec<BusbwCheck>,
    /// Small-message time ceilings.
    pub latency: Vec<LatencyCheck>,
    /// A healthy run to compare against.
    pub baseline: Option<Baseline>,
    /// Find the suspects when a performance check fails (`[locate]`).
    pub locate: Option<LocateStage>,
    /// The TOML text as read (accept copies it into its output directory).
    pub text: String,
}

/// `[locate]`: how `accept` runs `ncclbench locate` after a performance failure, and the floors
/// it judges groups by (with or without `accept`).
#[derive(Debug, Clone, PartialEq)]
pub struct LocateStage {
    /// `all_reduce` or `sendrecv`.
    pub collective: Collective,
    /// Bytes per rank (`None`: locate's default for the backend).
    pub bytes: Option<u64>,
    /// Rail rounds.
    pub rounds: usize,
    /// Least busbw (GB/s) of a node's intra-node group or GPU pair.
    pub intra_node_min_gbs: Option<f64>,
    /// Least busbw (GB/s) of a rail pair of GPUs on two nodes.
    pub inter_node_min_gbs: Option<f64>,
}

/// What the suite runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// Collectives, in table order unless the profile lists another order (default: all).
    pub collectives: Vec<Collective>,
    /// Smallest size of the correctness stage (default 8).
    pub correctness_min_bytes: u64,
    /// Largest size of the correctness stage (default 16 MiB).
    pub correctness_max_bytes: u64,
    /// Size factor of the correctness stage (default 4).
    pub correctness_step_factor: u64,
    /// Smallest size of the performance sweep (default 8).
    pub perf_min_bytes: u64,
    /// Largest size of the performance sweep (default 8 GiB).
    pub perf_max_bytes: u64,
    /// Size factor of the performance sweep (default 2).
    pub perf_step_factor: u64,
    /// Timed iterations per size (default 20).
    pub iters: u32,
    /// Warmup iterations per size (default 5).
    pub warmup_iters: u32,
    /// Wait timeout in seconds, passed as `-T` (default 300).
    pub timeout_s: u64,
}

impl Default for Suite {
    fn default() -> Suite {
        Suite {
            collectives: Collective::ALL.to_vec(),
            correctness_min_bytes: 8,
            correctness_max_bytes: 16 << 20,
            correctness_step_factor: 4,
            perf_min_bytes: 8,
            perf_max_bytes: 8 << 30,
            perf_step_factor: 2,
            iters: 20,
            warmup_iters: 5,
            timeout_s: 300,
        }
    }
}

/// A bus bandwidth floor over a size range.
#[derive(Debug, Clone, PartialEq)]
pub struct BusbwCheck {
    /// Collective judged.
    pub collective: Collective,
    /// Smallest size judged (inclusive).
    pub min_bytes: u64,
    /// Largest size judged (inclusive); `None`: up to the end of the sweep.
    pub max_bytes: Option<u64>,
    /// The median busbw (GB/s) over sizes in range must be >= this.
    pub min_gbs: f64,
    /// Typical range (GB/s), for the report only.
    pub typical_gbs: Option<(f64, f64)>,
}

/// A time ceiling over a small-message size range.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyCheck {
    /// Collective judged.
    pub collective: Collective,
    /// Smallest size judged (inclusive, default 0).
    pub min_bytes: u64,
    /// Largest size judged (inclusive).
    pub max_bytes: u64,
    /// The median time (us) over sizes in range must be <= this.
    pub max_us: f64,
    /// Typical range (us), for the report only.
    pub typical_us: Option<(f64, f64)>,
}

/// A healthy run to compare the performance stage against.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    /// Result files/directories of a healthy run; relative paths resolved against the
    /// profile file's directory (builtin profiles have none).
    pub paths: Vec<PathBuf>,
    /// Slowdown (percent) beyond which a size counts as regressed (default 5).
    pub threshold_pct: f64,
}
