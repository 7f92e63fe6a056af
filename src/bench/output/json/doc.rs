//! The parts of the nccl-tests v3 JSON document, built from our result types: the head
//! (`version` .. `config`), one `results` entry per row, the closing totals, and our own
//! `ncclbench` object.

use super::value::J;
use crate::result::{IterStats, Measurement, Row, RunMeta, Step, Summary};

/// nccl-tests' JSON file version whose layout we write.
pub(crate) const JSON_VERSION: i64 = 3;

/// `version`, `start_time`, `args`, `env`, `nccl_version` and `config`, in that order.
pub(crate) fn head(meta: &RunMeta) -> Vec<(&'static str, J)> {
    let strings = |v: &[String]| J::Arr(v.iter().map(J::str).collect());
    vec![
        ("version", J::Int(JSON_VERSION)),
        ("start_time", J::str(&meta.start_time)),
        ("args", strings(&meta.argv)),
        ("env", strings(&meta.env)),
        (
            "nccl_version",
            J::Int(meta.nccl_library.unwrap_or(0).into()),
        ),
        ("config", config(meta)),
    ]
}

fn config(meta: &RunMeta) -> J {
    let step = match meta.step {
        Step::Factor(f) => ("step_factor", J::uint(f)),
        Step::Bytes(b) => ("step_bytes", J::uint(b)),
    };
    // One entry per process, its first rank's, as nccl-tests lays them out: its analysis
    // script takes entry p as process p of the per-process rows (host names, per node).
    let mut seen = std::collections::HashSet::new();
    let devices = meta
        .devices
        .iter()
        .filter(|d| seen.insert((d.hostname.as_str(), d.pid)))
        .map(|d| {
            let (domain, bus, dev) = d.pci;
            J::Obj(vec![
                ("rank", J::uint(d.rank as u64)),
                ("group", J::uint(d.group as u64)),
                ("pid", J::Int(d.pid.into())),
                ("hostname", J::str(&d.hostname)),
                ("device", J::Int(d.device.into())),
                (
                    "device_hex",
                    J::str(format!("{domain:04x}:{bus:02x}:{dev:02x}")),
                ),
                ("device_info", J::str(&d.name)),
            ])
        })
        .collect();
    J::Obj(vec![
        ("nthreads", J::uint(meta.nthreads as u64)),
        ("ngpus", J::uint(meta.ngpus as u64)),
        ("minimum_bytes", J::uint(meta.min_bytes)),
        ("maximum_bytes", J::uint(meta.max_bytes)),
        step,
        ("warmup_iters", J::Int(meta.warmup_iters.into())),
        ("iterations", J::Int(meta.iters.into())),
        ("aggregated_iterations", J::Int(meta.agg_iters.into())),
        ("validation", J::Int(meta.check.into())),
        ("graph", J::Int(meta.graph.into())),
        ("blocking_collectives", J::bool_str(meta.blocking != 0)),
        ("per_iter_timing", J::bool_str(meta.per_iter)),
        ("per_iter_skip", J::Int(meta.per_iter_skip.into())),
        ("parallel_init", J::bool_str(meta.parallel_init)),
        ("devices", J::Arr(devices)),
    ])
}

fn measurement(m: &Measurement, cputime: bool) -> J {
    let (time_key, time) = if cputime {
        ("cpu_time", m.cputime_us)
    } else {
        ("time", m.time_us)
    };
    let mut fields = vec![
        (time_key, J::Num(time)),
        ("alg_bw", J::Num(m.algbw_gbs)),
        ("bus_bw", J::Num(m.busbw_gbs)),
        ("nwrong", m.wrong.map_or(J::Null, |w| J::Num(w as f64))),
    ];
    if let Some(t) = &m.tuning {
        fields.extend(super::tuning::placement_fields(t));
    }
    J::Obj(fields)
}

fn per_iter(it: &IterStats) -> J {
    let mut fields = vec![
        ("skipped_iterations", J::Int(it.skipped.into())),
        ("min_us", J::Num(it.min_us)),
        ("max_us", J::Num(it.max_us)),
        ("avg_us", J::Num(it.mean_us)),
        ("p50_us", J::Num(it.p50_us)),
        ("p95_us", J::Num(it.p95_us)),
        ("p99_us", J::Num(it.p99_us)),
        ("stdev_us", J::Num(it.stdev_us)),
        ("cv_pct", J::Num(it.cv_pct)),
        (
            "times_us",
            J::Arr(it.times_us.iter().map(|t| J::Num(*t)).collect()),
        ),
    ];
    // nccl-tests writes the per-process rows only with more than one process.
    if !it.per_process_max_times_us.is_empty() {
        let row = |times: &Vec<f64>| J::Arr(times.iter().map(|t| J::Num(*t)).collect());
        fields.push((
            "per_process_max_times_us",
            J::Arr(it.per_process_max_times_us.iter().map(row).collect()),
        ));
    }
    J::Obj(fields)
}

/// One `results` entry: nccl-tests' keys in its order, then ours (`collective`, `cycle`,
/// `nranks`, `timestamp`).
pub(crate) fn result(row: &Row, meta: &RunMeta) -> J {
    let k = &row.key;
    let mut fields = vec![
        ("size", J::uint(k.bytes)),
        ("count", J::uint(k.count)),
        ("type", J::str(k.dtype.name())),
        ("redop", J::str(k.op_label())),
        ("root", J::str(format!("{:>6}", k.root_value()))),
        (
            "out_of_place",
            measurement(&row.out_of_place, meta.report_cputime),
        ),
    ];
    if let Some(it) = &row.out_of_place.iter {
        fields.push(("out_of_place_per_iter", per_iter(it)));
    }
    fields.push(("in_place", measurement(&row.in_place, meta.report_cputime)));
    if let Some(it) = &row.in_place.iter {
        fields.push(("in_place_per_iter", per_iter(it)));
    }
    fields.extend([
        ("actual_iterations", J::Int(meta.iters.into())),
        ("experiment_name", J::str("")),
        ("collective", J::str(k.collective.name())),
        ("cycle", J::Int(k.cycle.into())),
        ("nranks", J::uint(k.nranks as u64)),
        ("timestamp", J::str(&row.timestamp)),
    ]);
    if let Some(groups) = super::groups::result_groups(row) {
        fields.push(("groups", groups));
    }
    J::Obj(fields)
}

/// `out_of_bounds`, `average_bus_bandwidth`, `errors` and `end_time`, written at `finish`.
pub(crate) fn totals(summary: &Summary) -> Vec<(&'static str, J)> {
    let bw_ok = match summary.bandwidth_ok() {
        Some(ok) => J::bool_str(ok),
        None => J::str("unchecked"),
    };
    vec![
        (
            "out_of_bounds",
            J::Obj(vec![
                ("count", J::uint(summary.out_of_bounds)),
                ("okay", J::bool_str(summary.out_of_bounds == 0)),
            ]),
        ),
        (
            "average_bus_bandwidth",
            J::Obj(vec![
                ("bandwidth", J::Num(summary.avg_busbw)),
                ("okay", bw_ok),
            ]),
        ),
        // nccl-tests lists ncclGetLastError's text, which is "" when there was none.
        (
            "errors",
            J::Arr(vec![J::str(summary.error.clone().unwrap_or_default())]),
        ),
        ("end_time", J::str(&summary.end_time)),
    ]
}

/// Our `ncclbench` object; `complete` stays false until the run is sealed (it ended normally);
/// `end_time` comes with `finish`. `environment` is the run's
/// [`crate::result::environment::RunEnvironment`] when recorded.
pub(crate) fn ncclbench(meta: &RunMeta, end_time: Option<&str>, complete: bool) -> J {
    let collective = meta.program.strip_suffix("_perf").unwrap_or(&meta.program);
    let mut fields = vec![
        ("version", J::str(&meta.version)),
        ("backend", J::str(meta.backend.name())),
        ("collective", J::str(collective)),
        ("nranks", J::uint(meta.nranks as u64)),
        ("complete", J::Bool(complete)),
    ];
    if let Some(groups) = super::groups::membership(&meta.groups) {
        fields.push(("groups", groups));
    }
    if let Some(env) = &meta.environment {
        let mut env = env.clone();
        env.end_time = end_time.map(str::to_string);
        let text = serde_json::to_string(&env).unwrap_or_else(|_| "null".into());
        fields.push(("environment", J::Raw(text)));
    }
    J::Obj(fields)
}

/// [`ncclbench`] with the `tuning` report added once the run is finished.
pub(crate) fn ncclbench_with(meta: &RunMeta, summary: Option<&Summary>, sealed: bool) -> J {
    let mut j = ncclbench(meta, summary.map(|s| s.end_time.as_str()), sealed);
    if let (J::Obj(fields), Some(t)) = (&mut j, summary.and_then(|s| s.tuning.as_ref())) {
        fields.push(("tuning", super::tuning::report(t)));
    }
    j
}
