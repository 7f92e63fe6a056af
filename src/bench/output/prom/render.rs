//! The textfile's text: HELP and TYPE lines, one sample per series, label values escaped and
//! numbers spelled as Prometheus' text format has them.

use super::{PromSink, Values, MARKER};
use std::fmt::Write as _;

/// Label pairs in order.
type Labels = [(&'static str, String)];

/// A label value with Prometheus' escapes (`\\`, `\"`, `\n`).
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A sample value as Prometheus spells it (`NaN`, `+Inf`, `-Inf`).
pub(super) fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        v.to_string()
    }
}

/// `{a="x",b="y"}`.
fn labels(pairs: &[(&str, String)]) -> String {
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

impl PromSink {
    /// The whole textfile as it stands.
    pub(super) fn render(&mut self) -> String {
        let now = (self.clock)();
        let mut out = format!(
            "{MARKER}: one benchmark run's latest result per size and placement, rewritten \
             after every row\n"
        );
        let metric = |out: &mut String, name: &str, help: &str| {
            let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n");
        };
        type Pick = fn(&Values) -> Option<f64>;
        let per_series: [(&str, &str, Pick); 4] = [
            (
                "ncclbench_bus_bandwidth_gbs",
                "Bus bandwidth of the latest measurement, GB/s (nccl-tests' busbw).",
                |v| Some(v.busbw_gbs),
            ),
            (
                "ncclbench_algorithm_bandwidth_gbs",
                "Algorithm bandwidth of the latest measurement, GB/s (nccl-tests' algbw).",
                |v| Some(v.algbw_gbs),
            ),
            (
                "ncclbench_collective_exec_time_microseconds",
                "Time of one operation in the latest measurement, microseconds.",
                |v| Some(v.time_us),
            ),
            (
                "ncclbench_wrong_elements",
                "Wrong elements found by -c in the latest measurement (checked measurements only).",
                |v| v.wrong.map(|w| w as f64),
            ),
        ];
        for (name, help, pick) in per_series {
            metric(&mut out, name, help);
            for ((collective, dtype, op, root, bytes, placement), v) in &self.series {
                let Some(value) = pick(v) else {
                    continue;
                };
                let mut l: Vec<(&str, String)> = vec![
                    ("collective", collective.clone()),
                    ("dtype", dtype.clone()),
                    ("op", op.clone()),
                    ("root", root.clone()),
                    ("bytes", bytes.to_string()),
                    ("nranks", self.nranks.to_string()),
                    ("placement", placement.clone()),
                ];
                l.extend(self.common.iter().cloned());
                let _ = writeln!(out, "{name}{} {}", labels(&l), number(value));
            }
        }
        let run: Vec<(&str, String)> = [("nranks", self.nranks.to_string())]
            .into_iter()
            .chain(self.common.iter().cloned())
            .collect();
        let mut info = self.info.clone();
        info.extend(run.iter().cloned());
        let mut run_metrics: Vec<(&str, &str, &Labels, f64)> = vec![
            (
                "ncclbench_run_info",
                "The run: ncclbench version, collective, NCCL library version (0 without NCCL).",
                &info,
                1.0,
            ),
            (
                "ncclbench_run_complete",
                "1 when the run ended normally and every process agreed on its status; 0 while \
                 it runs and after a failure or interrupt.",
                &run,
                f64::from(u8::from(self.complete)),
            ),
            (
                "ncclbench_run_ended",
                "1 once the run stopped, normally or not.",
                &run,
                f64::from(u8::from(self.ended)),
            ),
            (
                "ncclbench_rows_measured",
                "Rows (size, type, op, root, cycle) measured so far.",
                &run,
                self.rows as f64,
            ),
            (
                "ncclbench_cycle",
                "The -N cycle of the latest row (0-based).",
                &run,
                f64::from(self.cycle),
            ),
            (
                "ncclbench_start_timestamp_seconds",
                "When the run began, seconds since the Unix epoch.",
                &run,
                self.start,
            ),
            (
                "ncclbench_last_update_timestamp_seconds",
                "When this file was written, seconds since the Unix epoch.",
                &run,
                now,
            ),
        ];
        if let Some(avg) = self.avg_busbw {
            run_metrics.push((
                "ncclbench_average_bus_bandwidth_gbs",
                "The footer's average bus bandwidth over every measurement, GB/s (after the \
                 run).",
                &run,
                avg,
            ));
        }
        for (name, help, l, value) in run_metrics {
            metric(&mut out, name, help);
            let _ = writeln!(out, "{name}{} {}", labels(l), number(value));
        }
        out
    }
}
