//! What every reader produces: one [`InputRow`] per measured placement, whatever the file
//! format, plus an account of what could not be read.

use crate::result::Placement;
use serde::{Deserialize, Serialize};

/// Where a row came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRef {
    /// The file as given on the command line.
    pub file: String,
    /// 1-based line (text/CSV) or result index (JSON).
    pub line: usize,
}

/// NCCL's choice for the calls behind a row, when the input carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tuning {
    /// Algorithm in NCCL's spelling (`Ring`, `Tree`, `NVLS`, ...), `mixed` when calls differed.
    pub algo: String,
    /// Protocol (`LL`, `LL128`, `Simple`), `mixed` when calls differed.
    pub proto: String,
    /// Channel range as printed, e.g. `0..15`.
    pub channels: String,
    /// NCCL's own model time for the call in microseconds, where the log format prints it
    /// (2.20-2.23; the `nccl_model_time_us` field of `--tuning` output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_time_us: Option<f64>,
}

impl Tuning {
    /// Whether both name the same decision (algorithm, protocol, channels); NCCL's model time
    /// is not part of the decision.
    pub fn same_decision(&self, other: &Tuning) -> bool {
        (&self.algo, &self.proto, &self.channels) == (&other.algo, &other.proto, &other.channels)
    }
}

/// One measured placement of one size, from any input format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRow {
    /// Origin.
    pub source: SourceRef,
    /// Collective name (`all_reduce`, ...); `None` when the file does not say (old logs).
    pub collective: Option<String>,
    /// Type name as printed (`float`, `bfloat16`, ...).
    pub dtype: String,
    /// Op column as printed (`sum`, `none`, empty for hypercube).
    pub op: String,
    /// Root, -1 when unrooted or unknown.
    pub root: i64,
    /// Ranks, when known (counted from device lines, or given by the file).
    pub nranks: Option<usize>,
    /// Out-of-place or in-place.
    pub placement: Placement,
    /// Cycle within its run (`-N`), 0-based.
    pub cycle: u32,
    /// Which run of the file (concatenated runs count up from 0).
    pub run: u32,
    /// The `size` column in bytes.
    pub bytes: u64,
    /// The `count` column.
    pub count: u64,
    /// Microseconds per operation (the `time` column; never `cputime`).
    pub time_us: f64,
    /// Algorithm bandwidth, GB/s.
    pub algbw_gbs: f64,
    /// Bus bandwidth, GB/s.
    pub busbw_gbs: f64,
    /// `#wrong` (or legacy `error`) value; `None` when N/A.
    pub wrong: Option<f64>,
    /// NCCL's choice for this row, when annotated.
    pub tuning: Option<Tuning>,
}

/// A line or record a reader could not use, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Where.
    pub source: SourceRef,
    /// Why, in one line.
    pub reason: String,
}

/// How the collective of a table without a `Collective test starting` line was worked out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inference {
    /// The table's column-header line.
    pub source: SourceRef,
    /// The collective its rows were given; `None` when the evidence did not single one out.
    pub collective: Option<String>,
    /// The evidence, in one line (`busbw/algbw 1.750 = 2(n-1)/n at 8 ranks; ...`), and the
    /// candidates left when it was not enough.
    pub basis: String,
}

/// Everything read from the input files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadSet {
    /// Usable rows, in file order.
    pub rows: Vec<InputRow>,
    /// Rows (or row-like lines) that could not be used; they are counted and reported, never
    /// silently dropped.
    pub skipped: Vec<Skipped>,
    /// Tables whose collective the file did not name, and what was inferred for them.
    #[serde(default)]
    pub inferred: Vec<Inference>,
    /// `--per-group` lines of ncclbench CSV files, left out: they split the aggregate rows of
    /// the same sizes, which are read.
    #[serde(default)]
    pub group_rows: u64,
}
