//! The result of a comparison: these structs are the JSON interface of
//! `ncclbench compare --format json` (schema [`super::json::SCHEMA`]); field names are stable.
//! Undefined numbers are `null` (`Option`), never NaN.

use crate::analysis::input::Tuning;
use serde::{Deserialize, Serialize};

/// Identity of a compared curve: rows align on these plus the size.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CurveId {
    /// Collective name, `unknown` when the file does not say.
    pub collective: String,
    /// Type name.
    pub dtype: String,
    /// Op column (empty for hypercube).
    pub op: String,
    /// Root, -1 when unrooted.
    pub root: i64,
    /// Ranks, 0 when unknown.
    pub nranks: usize,
    /// `out_of_place` or `in_place`.
    pub placement: String,
}

/// One side's numbers at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideStats {
    /// Median time over the samples, microseconds.
    pub median_us: f64,
    /// Smallest sample, microseconds.
    pub min_us: f64,
    /// Largest sample, microseconds.
    pub max_us: f64,
    /// Samples (cycles x runs x files).
    pub samples: usize,
    /// Bus bandwidth at the median time, GB/s.
    pub busbw_gbs: f64,
    /// NCCL's choice at this size, when the input is annotated.
    pub tuning: Option<Tuning>,
}

/// One size present on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeComparison {
    /// Bytes (the `size` column).
    pub bytes: u64,
    /// Before.
    pub before: SideStats,
    /// After.
    pub after: SideStats,
    /// Median after / median before (> 1 is slower).
    pub ratio: f64,
    /// 95% interval of the ratio of geometric means (Welch on log time); null without a test.
    pub ci_low: Option<f64>,
    /// Upper end of the interval.
    pub ci_high: Option<f64>,
    /// Two-sided p-value; null without a test (fewer than two samples on a side).
    pub p_value: Option<f64>,
    /// Benjamini-Hochberg q-value over the curve's tested sizes; null without a test.
    pub q_value: Option<f64>,
    /// `faster`, `slower` or `unchanged`.
    pub verdict: String,
    /// Why: `significant`, `not significant`, `within threshold`, `median and mean disagree`,
    /// `1 sample: threshold only`.
    pub basis: String,
    /// `Ring/LL -> Ring/LL128 (channels 0..15 -> 0..7)` when both sides are annotated and
    /// NCCL's choice differs; null otherwise.
    pub tuning_change: Option<String>,
}

/// A whole-curve number before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Before (from the analysis fit of the sizes both sides share); null when that side
    /// has no such number (a bandwidth-bound smallest size has no latency floor).
    pub before: Option<f64>,
    /// After.
    pub after: Option<f64>,
    /// after / before - 1; null when either side is null or before is not positive.
    pub change: Option<f64>,
    /// Why a side is null, when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Everything compared for one curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveComparison {
    /// The curve.
    #[serde(flatten)]
    pub id: CurveId,
    /// Sizes on both sides, ascending.
    pub sizes: Vec<SizeComparison>,
    /// Sizes only before had (listed, not compared).
    pub only_before_bytes: Vec<u64>,
    /// Sizes only after had.
    pub only_after_bytes: Vec<u64>,
    /// Sizes called slower.
    pub slower: usize,
    /// Sizes called faster.
    pub faster: usize,
    /// Sizes called unchanged.
    pub unchanged: usize,
    /// Latency floor, microseconds.
    pub latency_floor_us: Change,
    /// Measured plateau bus bandwidth, GB/s.
    pub plateau_busbw_gbs: Change,
    /// Half-performance size, bytes (0 when the fit has no bandwidth term).
    pub half_perf_bytes: Change,
    /// Sizes whose NCCL decision changed (both sides annotated), ascending.
    pub tuning_changes_bytes: Vec<u64>,
}

/// What one side's files say about the setup that produced them. Lists are sorted and
/// distinct; an empty list means the files do not record it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// Rank counts of the rows.
    pub nranks: Vec<usize>,
    /// GPU (device) names.
    pub gpus: Vec<String>,
    /// Per run: `H host(s), P process(es)`.
    pub layouts: Vec<String>,
    /// NCCL library versions (`2.28.7`).
    pub nccl_versions: Vec<String>,
    /// Backends (`host`, `nccl`), as ncclbench files record them.
    pub backends: Vec<String>,
    /// Collectives of the rows.
    pub collectives: Vec<String>,
    /// Types of the rows.
    pub dtypes: Vec<String>,
}

/// One side of the comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Files and directories as given.
    pub files: Vec<String>,
    /// Rows read.
    pub rows_read: usize,
    /// Rows that could not be used (bad lines, times that are not positive numbers).
    pub rows_skipped: usize,
    /// The setup.
    pub setup: Setup,
}

/// A way in which the two setups differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// `nranks`, `gpus`, `layouts`, `backends`, `collectives`, `dtypes`, `nccl_versions`.
    pub what: String,
    /// Before's values.
    pub before: Vec<String>,
    /// After's values.
    pub after: Vec<String>,
    /// True when the comparison is of unlike setups (everything but the NCCL version, which
    /// is expected to differ for an upgrade).
    pub warning: bool,
}

/// Sizes by verdict over all curves.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Sizes compared.
    pub compared: usize,
    /// Called slower.
    pub slower: usize,
    /// Called faster.
    pub faster: usize,
    /// Unchanged.
    pub unchanged: usize,
    /// Sizes present before only (in curves on both sides).
    pub only_before: usize,
    /// Sizes present after only.
    pub only_after: usize,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// `--threshold` in percent.
    pub threshold_pct: f64,
    /// Significance level of the (adjusted) test.
    pub alpha: f64,
    /// Before.
    pub before: Side,
    /// After.
    pub after: Side,
    /// True when any difference is a warning.
    pub unlike_setup: bool,
    /// Every difference found, warnings first.
    pub differences: Vec<Difference>,
    /// The lines the reports print at the top (warnings start with `!!!`).
    pub banner: Vec<String>,
    /// Curves on both sides, sorted.
    pub curves: Vec<CurveComparison>,
    /// Curves before only (not compared).
    pub only_before_curves: Vec<CurveId>,
    /// Curves after only.
    pub only_after_curves: Vec<CurveId>,
    /// Counts over all curves.
    pub totals: Totals,
    /// True when any size is slower (exit status 1).
    pub regression: bool,
}
