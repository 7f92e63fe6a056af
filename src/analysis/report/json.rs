//! The JSON report: the [`Analysis`] as pretty JSON under a schema tag.
//!
//! # Schema `ncclbench-analysis/1`
//!
//! A stable, documented interface; new keys may be added, none are renamed or removed within
//! a schema version. A curve too short to fit has no regimes, 0 for the fitted plateau and a
//! `null` half-performance size; `latency_floor_us`, `half_perf_bytes`, `sat90_bytes` and
//! `efficiency_pct` are `null` when undefined, the first two with the reason in `notes` (a
//! non-finite number, which the builder never produces, would also be written as `null`).
//!
//! ```text
//! {
//!   "schema": "ncclbench-analysis/1",
//!   "rows_read": 197,              // rows read from all inputs
//!   "rows_skipped": 7,             // rows that could not be used
//!   "skipped": [                   // why (a reader may keep fewer reasons than rows_skipped)
//!     {"source": {"file": "a.txt", "line": 12}, "reason": "..."}
//!   ],
//!   "peak_gbs": 400.0,             // --peak-gbs, or null
//!   "curves": [{                   // one per (collective, dtype, op, nranks, placement)
//!     "collective": "all_reduce", "dtype": "float", "op": "sum",
//!     "nranks": 8,                 // 0 = unknown
//!     "placement": "out_of_place", // or "in_place"
//!     "rows": 112,                 // input rows pooled into the curve
//!     "collective_basis": "inferred from ...", // only when the file did not name it
//!     "setup": "GPU ...; 2 hosts, 16 processes; NCCL 2.22.3", // only when kept apart
//!     "busbw_factor": 1.75,        // busbw = algbw x factor
//!     "latency_floor_us": 10.05,   // median time at the smallest sizes, or null
//!     "plateau_busbw_gbs": 347.6,  // measured at the largest sizes
//!     "plateau_busbw_fit_gbs": 350.0, // busbw of the last fitted regime
//!     "plateau_fit_extrapolates": false, // fitted plateau > 1.02 x every measured busbw
//!     "half_perf_bytes": 6000000.0,   // alpha x bandwidth of the last regime, or null
//!     "sat90_bytes": 67108864,     // smallest size reaching 90% of the plateau, or null
//!     "efficiency_pct": 86.9,      // plateau / peak_gbs x 100, or null
//!     "regimes": [{"from_bytes": 8, "to_bytes": 65536, "alpha_us": 10.0,
//!                  "algbw_gbs": 20.0, "busbw_gbs": 35.0,
//!                  "rms_rel_err": 0.012, // RMS relative error of the fit
//!                  "points": 14}],
//!     "switch_points_bytes": [131072, 8388608], // first size of regimes 2..
//!     "switch_points": [{"bytes": 131072,
//!                        "time_jump": 0.136,    // relative time change at the switch
//!                        "tuning_change": "Tree/LL -> Ring/LL128"}], // or null
//!     "anomalies": [{"kind": "dip", "bytes": 4194304, "detail": "..."}],
//!       // kinds: dip, time_drop, placement_disagreement, wrong_data, cycle_disagreement,
//!       // outlier, fit_extrapolates, decision_change_without_step, unusable_time
//!     "points": [{"bytes": 8, "time_us": 9.9, "time_min_us": 9.7, "time_max_us": 10.2,
//!                 "samples": 4, "busbw_gbs": 0.0014,
//!                 "tuning": {"algo": "Tree", "proto": "LL", "channels": "0..7"}}], // or null
//!     "notes": ["latency_floor_us: none; the smallest size ... is bandwidth-bound ..."]
//!   }],
//!   "notes": ["...: collective unknown: gather, scatter all fit (...)"]
//! }
//! ```

use crate::analysis::curve::Analysis;
use serde::{Deserialize, Serialize};

/// The schema tag of the JSON report.
pub const SCHEMA: &str = "ncclbench-analysis/1";

/// The JSON document: the schema tag, then every field of the [`Analysis`] at top level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The analysis, flattened into the document.
    #[serde(flatten)]
    pub analysis: Analysis,
}

/// The analysis as pretty JSON with the schema tag, ending in a newline.
pub(crate) fn render(analysis: &Analysis) -> String {
    #[derive(Serialize)]
    struct Tagged<'a> {
        schema: &'static str,
        #[serde(flatten)]
        analysis: &'a Analysis,
    }
    let doc = Tagged {
        schema: SCHEMA,
        analysis,
    };
    match serde_json::to_string_pretty(&doc) {
        Ok(mut s) => {
            s.push('\n');
            s
        }
        // Plain structs with string keys always serialise; say so rather than panic.
        Err(e) => format!(
            "{}\n",
            serde_json::json!({"schema": SCHEMA, "error": e.to_string()})
        ),
    }
}
