//! What a run produces: one [`Row`] per (cycle, collective, dtype, op, root, size) with an
//! out-of-place and an in-place [`Measurement`], plus the run's [`RunMeta`] and [`Summary`].
//! Sinks render these; nothing here knows how they are measured or printed.

use crate::core::collective::{Collective, OpColumn};
use crate::core::dtype::DataType;
use crate::core::op::RedOp;

mod backend;
mod device;
pub mod environment;
mod group;
pub mod topology;
pub mod tuning;

pub use backend::BackendKind;
pub use device::DeviceInfo;
pub use group::{GroupInfo, GroupMeasurement};

pub use crate::core::stats::IterStats;

/// Out-of-place or in-place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Separate send and receive buffers.
    OutOfPlace,
    /// One shared buffer.
    InPlace,
}

impl Placement {
    /// Both placements in measuring order.
    pub const BOTH: [Placement; 2] = [Placement::OutOfPlace, Placement::InPlace];

    /// `out_of_place` / `in_place` (CSV and JSON spelling).
    pub fn name(self) -> &'static str {
        match self {
            Placement::OutOfPlace => "out_of_place",
            Placement::InPlace => "in_place",
        }
    }
}

/// Identity of one result row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowKey {
    /// 0-based cycle (`-N`).
    pub cycle: u32,
    /// Collective.
    pub collective: Collective,
    /// Element type.
    pub dtype: DataType,
    /// Reduction operator as iterated (meaningful only where the table says the op applies).
    pub op: RedOp,
    /// Root, `None` for unrooted collectives (printed as -1).
    pub root: Option<usize>,
    /// Ranks in the communicator.
    pub nranks: usize,
    /// The `size` column: bytes.
    pub bytes: u64,
    /// The `count` column: elements (the NCCL count argument).
    pub count: u64,
}

impl RowKey {
    /// The `redop` column text: the op name, `none`, or empty (from the collective table).
    pub fn op_label(&self) -> &'static str {
        match self.collective.op_column() {
            OpColumn::Op => self.op.name(),
            OpColumn::None => "none",
            OpColumn::Blank => "",
        }
    }

    /// The root column value (-1 when unrooted).
    pub fn root_value(&self) -> i64 {
        self.root.map_or(-1, |r| r as i64)
    }
}

/// One placement's measurement of one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Time per operation in microseconds, reduced across ranks per `-a`.
    pub time_us: f64,
    /// Host time to enqueue one operation in microseconds (this process only; `-C`).
    pub cputime_us: f64,
    /// Algorithm bandwidth, GB/s (1e9 bytes).
    pub algbw_gbs: f64,
    /// Bus bandwidth, GB/s.
    pub busbw_gbs: f64,
    /// Wrong elements summed over ranks; `None` when not checked.
    pub wrong: Option<u64>,
    /// Per-iteration statistics when `-I 1`.
    pub iter: Option<IterStats>,
    /// NCCL's decisions for this measurement's calls (`--tuning`); `None` without it.
    pub tuning: Option<crate::result::tuning::Tuning>,
    /// Each split group's own figures (`--per-group`), by colour; empty without it (and on
    /// processes other than the one that writes the outputs).
    pub groups: Vec<GroupMeasurement>,
}

/// A completed row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Identity.
    pub key: RowKey,
    /// Out-of-place measurement.
    pub out_of_place: Measurement,
    /// In-place measurement.
    pub in_place: Measurement,
    /// Local time when the row completed, `%Y-%m-%d %H:%M:%S`.
    pub timestamp: String,
}

impl Row {
    /// The measurement of one placement.
    pub fn get(&self, p: Placement) -> &Measurement {
        match p {
            Placement::OutOfPlace => &self.out_of_place,
            Placement::InPlace => &self.in_place,
        }
    }
}

/// The sweep step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Multiply by this factor (> 1).
    Factor(u64),
    /// Add this many bytes.
    Bytes(u64),
}

/// Everything the headers of every output need, fixed before the first row.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMeta {
    /// ncclbench version.
    pub version: String,
    /// Program name as nccl-tests prints it (`all_reduce_perf`).
    pub program: String,
    /// The backend that ran it (outputs print its name).
    pub backend: BackendKind,
    /// Extra header lines from the backend (each starting with `#`).
    pub backend_lines: Vec<String>,
    /// NCCL header version code.
    pub nccl_headers: Option<i32>,
    /// NCCL runtime version code.
    pub nccl_library: Option<i32>,
    /// The command line.
    pub argv: Vec<String>,
    /// Selected environment variables, `NAME=value`.
    pub env: Vec<String>,
    /// `-t`.
    pub nthreads: usize,
    /// `-g`.
    pub ngpus: usize,
    /// `-b` as given (before any clamp).
    pub min_bytes: u64,
    /// `-e` as given (before any clamp).
    pub max_bytes: u64,
    /// `-f` / `-i`.
    pub step: Step,
    /// `-w`.
    pub warmup_iters: u32,
    /// `-n`.
    pub iters: u32,
    /// `-m`.
    pub agg_iters: u32,
    /// `-c`.
    pub check: u32,
    /// `-G`.
    pub graph: u32,
    /// `-u`.
    pub unalign: usize,
    /// `-z`.
    pub blocking: u8,
    /// `-I`.
    pub per_iter: bool,
    /// `-K`.
    pub per_iter_skip: u32,
    /// `-p`.
    pub parallel_init: bool,
    /// `-C`.
    pub report_cputime: bool,
    /// `-S`.
    pub report_timestamps: bool,
    /// `--show-algo`: NCCL's decisions after each text row.
    pub show_algo: bool,
    /// Ranks in the communicator.
    pub nranks: usize,
    /// Devices of every rank.
    pub devices: Vec<DeviceInfo>,
    /// Set when `-e` was reduced to fit memory.
    pub reduced_max_bytes: Option<u64>,
    /// Local start time, `%Y-%m-%d %H:%M:%S`.
    pub start_time: String,
    /// Where the run ran (written into the JSON and next to CSV output), when recorded.
    pub environment: Option<crate::result::environment::RunEnvironment>,
    /// The split groups and their members (`--per-group`), by colour; empty without it.
    pub groups: Vec<GroupInfo>,
}

/// End-of-run totals for the footers.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Checked (row, placement) cases with wrong elements.
    pub out_of_bounds: u64,
    /// Mean bus bandwidth over every measurement; NaN when nothing was measured.
    pub avg_busbw: f64,
    /// `NCCL_TESTS_MIN_BW` when set.
    pub min_bw: Option<f64>,
    /// The `-M` memory line text, when asked for.
    pub memory: Option<String>,
    /// Last library error text, when any.
    pub error: Option<String>,
    /// Local end time.
    pub end_time: String,
    /// How NCCL's debug log was joined to the calls (`--tuning`).
    pub tuning: Option<crate::result::tuning::TuningReport>,
}

impl Summary {
    /// `Some(true/false)` when `NCCL_TESTS_MIN_BW` was checked: FAILED below 90% of it.
    pub fn bandwidth_ok(&self) -> Option<bool> {
        self.min_bw.map(|t| self.avg_busbw >= 0.9 * t)
    }
}
