//! The JSON report: the [`Comparison`] as pretty JSON under a schema tag.
//!
//! # Schema `ncclbench-compare/1`
//!
//! A stable interface; keys may be added, none renamed or removed within the version.
//! Undefined numbers are `null`. Times are microseconds, bandwidths GB/s, sizes bytes.
//!
//! ```text
//! {
//!   "schema": "ncclbench-compare/1",
//!   "threshold_pct": 5.0, "alpha": 0.05,
//!   "before": {"files": ["a.csv"], "rows_read": 160, "rows_skipped": 0,
//!              "setup": {"nranks": [8], "gpus": ["NVIDIA H100 80GB HBM3"],
//!                        "layouts": ["1 host, 1 process"], "nccl_versions": ["2.19.3"],
//!                        "backends": [], "collectives": ["all_reduce"], "dtypes": ["float"]}},
//!   "after": {...},
//!   "unlike_setup": false,            // true when any difference is a warning
//!   "differences": [{"what": "nccl_versions", "before": ["2.19.3"], "after": ["2.21.5"],
//!                    "warning": false}],  // what: nranks, gpus, layouts, backends,
//!                                         // collectives, dtypes, nccl_versions
//!   "banner": ["note: NCCL version 2.19.3 -> 2.21.5 (expected for an upgrade)"],
//!   "curves": [{
//!     "collective": "all_reduce", "dtype": "float", "op": "sum", "root": -1,
//!     "nranks": 8, "placement": "out_of_place",
//!     "sizes": [{"bytes": 8,
//!                "before": {"median_us": 18.2, "min_us": 18.0, "max_us": 18.9, "samples": 3,
//!                           "busbw_gbs": 0.0008, "tuning": null},
//!                "after": {...},
//!                "ratio": 1.102,               // median after / median before
//!                "ci_low": 1.05, "ci_high": 1.16,  // 95% CI of the geometric-mean ratio
//!                "p_value": 0.0004, "q_value": 0.002, // Welch on log time; BH per curve
//!                "verdict": "slower",          // faster | slower | unchanged
//!                "basis": "significant",       // not significant | within threshold |
//!                                              // median and mean disagree |
//!                                              // 1 sample: threshold only
//!                "tuning_change": null}],      // "LL/Ring -> LL128/Ring" when annotated
//!     "only_before_bytes": [], "only_after_bytes": [],
//!     "slower": 1, "faster": 0, "unchanged": 8,
//!     "latency_floor_us": {"before": 18.2, "after": 19.0, "change": 0.044},
//!     "plateau_busbw_gbs": {...}, "half_perf_bytes": {...},
//!     "tuning_changes_bytes": []
//!   }],
//!   "only_before_curves": [], "only_after_curves": [],  // curve keys, not compared
//!   "totals": {"compared": 9, "slower": 1, "faster": 0, "unchanged": 8,
//!              "only_before": 0, "only_after": 0},
//!   "regression": true                 // exit status 1
//! }
//! ```

use super::model::Comparison;
use serde::Serialize;

/// The schema tag of the JSON report.
pub const SCHEMA: &str = "ncclbench-compare/1";

/// The comparison as pretty JSON with the schema tag, ending in a newline.
pub(crate) fn render(cmp: &Comparison) -> String {
    #[derive(Serialize)]
    struct Tagged<'a> {
        schema: &'static str,
        #[serde(flatten)]
        cmp: &'a Comparison,
    }
    match serde_json::to_string_pretty(&Tagged {
        schema: SCHEMA,
        cmp,
    }) {
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
