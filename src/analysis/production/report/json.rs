//! The production report as JSON, schema `ncclbench-production/1`: the [`Report`]'s fields at
//! top level under the schema tag. New keys may be added within the version; none are renamed
//! or removed. Non-finite numbers (a percentile of no values) are written as `null`.
//!
//! ```text
//! {
//!   "schema": "ncclbench-production/1",
//!   "inputs": {"paths": ["dump/"], "files": 8, "records": 4096, "skipped": ["file:line: why"],
//!              "baseline_files": ["bench.json"], "baseline_curves": 2},
//!   "total_time_us": 123456.0,       // sum of every record's time
//!   "total_lost_us": 23456.0,        // sum of groups' positive lost_us; null without baseline
//!   "groups": [{"comm_id": "0x7f..", "comm_name": "dp" /* or null */,
//!               "collective": "all_reduce", "bytes": 67108864, "bytes_hi": null, "nranks": 8,
//!               "count": 512, "busbw_gbs": {"p5": .., "p50": .., "p95": ..},
//!               "time_us": {"p5": .., "p50": .., "p95": ..}, "total_time_us": ..,
//!               "time_share": 0.42, "timing": [{"value": "kernel_gpu", "count": 512}],
//!               "algo_proto": [{"value": "Ring_ll", "count": 3}],
//!               "baseline": {"curve": "all_reduce float sum, 8 ranks, out_of_place",
//!                            "source": "fitted" /* or "measured", "interpolated" */,
//!                            "busbw_gbs": .., "time_us": .., "ratio": 0.81, "lost_us": ..},
//!               "baseline_note": null /* or why there is no baseline number */}],
//!   "ranks": [{"comm_id": .., "comm_name": .., "rank": 3, "host": "h1", "count": ..,
//!              "rel_busbw_p50": 0.98, "total_time_us": ..}],
//!   "hosts": [{"host": "h1", "ranks": 8, "count": .., "rel_busbw_p50": 1.0, "total_time_us": ..}],
//!   "causes": [{"kind": "contention" /* small_size, slow_rank, slow_host, algo_proto */,
//!               "comm_id": .., "comm_name": .., "collective": "all_reduce", "bytes": 67108864,
//!               "rank": null, "host": null, "rule": "...", "evidence": "...",
//!               "advice": "...", "lost_us": 1234.5}],
//!   "notes": ["..."]
//! }
//! ```

use crate::analysis::production::model::Report;
use serde::Serialize;

/// The schema tag.
pub const SCHEMA: &str = "ncclbench-production/1";

/// The report as pretty JSON, ending in a newline.
pub fn render(r: &Report) -> String {
    #[derive(Serialize)]
    struct Tagged<'a> {
        schema: &'static str,
        #[serde(flatten)]
        report: &'a Report,
    }
    match serde_json::to_string_pretty(&Tagged {
        schema: SCHEMA,
        report: r,
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
