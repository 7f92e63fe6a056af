//! The per-curve results of the analysis: one [`CurveReport`] per (collective, dtype, op,
//! nranks, placement), and the whole [`Analysis`]. These are the documented JSON interface of
//! `ncclbench analyze --format json`; field names are stable.

use serde::{Deserialize, Serialize};

/// Identity of a curve.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CurveKey {
    /// Collective name, `unknown` when no input said.
    pub collective: String,
    /// Type name.
    pub dtype: String,
    /// Op column.
    pub op: String,
    /// Ranks, 0 when unknown.
    pub nranks: usize,
    /// `out_of_place` or `in_place`.
    pub placement: String,
}

/// One size of a curve after pooling cycles/runs: the median time and its spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Bytes (the `size` column).
    pub bytes: u64,
    /// Median time over samples, microseconds.
    pub time_us: f64,
    /// Smallest and largest sample time.
    pub time_min_us: f64,
    /// Largest sample time.
    pub time_max_us: f64,
    /// Number of samples pooled.
    pub samples: usize,
    /// Bus bandwidth at the median time, GB/s.
    pub busbw_gbs: f64,
    /// NCCL's choice at this size, when annotated.
    pub tuning: Option<crate::analysis::input::Tuning>,
}

/// One alpha-beta regime: `T(S) = alpha + S / bw` over `from_bytes..=to_bytes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regime {
    /// First size of the regime.
    pub from_bytes: u64,
    /// Last size of the regime.
    pub to_bytes: u64,
    /// Latency term, microseconds.
    pub alpha_us: f64,
    /// Asymptotic algorithm bandwidth (1/beta), GB/s; 0 when the regime's time does not grow
    /// with size (no bandwidth term).
    pub algbw_gbs: f64,
    /// Asymptotic bus bandwidth (algbw x the collective's factor), GB/s; 0 as algbw.
    pub busbw_gbs: f64,
    /// Root-mean-square relative error of the fit over the regime's points.
    pub rms_rel_err: f64,
    /// Points in the regime.
    pub points: usize,
}

/// A size where the fitted regime changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchPoint {
    /// First size of the new regime.
    pub bytes: u64,
    /// Measured time change from the previous size, relative (0.1 = 10% slower).
    pub time_jump: f64,
    /// How the decision changed here when tuning annotations exist (`LL -> LL128`), or
    /// `no decision change` when they exist and agree on both sides; `None` without annotations.
    pub tuning_change: Option<String>,
}

/// Something in the curve an engineer should look at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anomaly {
    /// `dip`, `time_drop`, `placement_disagreement`, `wrong_data`, `cycle_disagreement`,
    /// `outlier`, `fit_extrapolates`, `decision_change_without_step`, `unusable_time` (rows
    /// whose time is not a finite non-negative number).
    pub kind: String,
    /// Size concerned.
    pub bytes: u64,
    /// One-line explanation with the numbers.
    pub detail: String,
}

/// Everything the analysis says about one curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveReport {
    /// Collective name.
    pub collective: String,
    /// Type name.
    pub dtype: String,
    /// Op column.
    pub op: String,
    /// Ranks (0 = unknown).
    pub nranks: usize,
    /// `out_of_place` / `in_place`.
    pub placement: String,
    /// Input rows pooled into this curve.
    pub rows: usize,
    /// busbw = algbw x this factor (from the collective table, or measured from the rows).
    pub busbw_factor: f64,
    /// How the collective was inferred, for a table that did not name it; `None` when the
    /// file named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective_basis: Option<String>,
    /// The setup (GPU model, layout, NCCL version) of the files behind this curve, when files
    /// of different setups were kept apart; `None` when every file agrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    /// Median time at the smallest sizes, microseconds; `None` when the smallest size is not
    /// latency-bound (the reason is in `notes`).
    pub latency_floor_us: Option<f64>,
    /// Plateau bus bandwidth measured at the largest sizes, GB/s.
    pub plateau_busbw_gbs: f64,
    /// Plateau bus bandwidth of the last fitted regime, GB/s.
    pub plateau_busbw_fit_gbs: f64,
    /// Whether the fitted plateau lies above every measured busbw of its regime (the fit
    /// extrapolates; the measured plateau is the headline).
    #[serde(default)]
    pub plateau_fit_extrapolates: bool,
    /// Half-performance size: alpha x bandwidth of the last regime, bytes; `None` when the
    /// regime has no positive latency or no bandwidth term (the reason is in `notes`).
    pub half_perf_bytes: Option<f64>,
    /// Smallest measured size whose busbw reaches 90% of the plateau.
    pub sat90_bytes: Option<u64>,
    /// Plateau busbw / `--peak-gbs`, percent.
    pub efficiency_pct: Option<f64>,
    /// Fitted regimes, by size.
    pub regimes: Vec<Regime>,
    /// First sizes of regimes 2.., as bytes.
    pub switch_points_bytes: Vec<u64>,
    /// Details of each switch point.
    pub switch_points: Vec<SwitchPoint>,
    /// Findings.
    pub anomalies: Vec<Anomaly>,
    /// The pooled points (for plots).
    pub points: Vec<CurvePoint>,
    /// Why a number is missing or not what it seems, one line each, starting with the field.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The whole analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// Rows read from all inputs.
    pub rows_read: usize,
    /// Rows that could not be used.
    pub rows_skipped: usize,
    /// Why they were skipped (file, line, reason).
    pub skipped: Vec<crate::analysis::input::Skipped>,
    /// `--peak-gbs` when given.
    pub peak_gbs: Option<f64>,
    /// One report per curve, sorted by key.
    pub curves: Vec<CurveReport>,
    /// What the whole input needs said: tables whose collective stayed unknown, files kept
    /// apart because their setups differ.
    #[serde(default)]
    pub notes: Vec<String>,
}
