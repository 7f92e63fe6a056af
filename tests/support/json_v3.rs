//! The layout of nccl-tests' JSON file version 3 (nccl-tests 2.19.6's `-J`), written down once
//! for the tests that check ncclbench's `-J` document against it: every key of every object in
//! file order, each value's type (integers, `%lf` decimals, strings, nccl-tests' boolean
//! strings, its `%6i`-padded `root`), the nesting, the `-I` objects with `-K`'s skip and the
//! per-process rows of a job of several processes; then the keys ncclbench adds after
//! nccl-tests' own, which its reference documents. [`check`] asserts all of it on a document.

use super::nccl_json::{number_tokens, Doc};

/// The top-level keys nccl-tests writes.
pub const TOP: [&str; 11] = [
    "version",
    "start_time",
    "args",
    "env",
    "nccl_version",
    "config",
    "results",
    "out_of_bounds",
    "average_bus_bandwidth",
    "errors",
    "end_time",
];
/// `config` up to the step key (`step_factor` or `step_bytes`), then after it.
pub const CONFIG_HEAD: [&str; 4] = ["nthreads", "ngpus", "minimum_bytes", "maximum_bytes"];
pub const CONFIG_TAIL: [&str; 10] = [
    "warmup_iters",
    "iterations",
    "aggregated_iterations",
    "validation",
    "graph",
    "blocking_collectives",
    "per_iter_timing",
    "per_iter_skip",
    "parallel_init",
    "devices",
];
/// One `config.devices` entry (one per process).
pub const DEVICE: [&str; 7] = [
    "rank",
    "group",
    "pid",
    "hostname",
    "device",
    "device_hex",
    "device_info",
];
/// A `results` entry before its placements, and after them.
pub const RESULT_HEAD: [&str; 5] = ["size", "count", "type", "redop", "root"];
pub const RESULT_TAIL: [&str; 2] = ["actual_iterations", "experiment_name"];
/// A placement's figures after its time key (`time`, or `cpu_time` with `-C 1`).
pub const FIGURES: [&str; 3] = ["alg_bw", "bus_bw", "nwrong"];
/// A `*_per_iter` object (`-I 1`); a job of several processes adds `per_process_max_times_us`.
pub const PER_ITER: [&str; 10] = [
    "skipped_iterations",
    "min_us",
    "max_us",
    "avg_us",
    "p50_us",
    "p95_us",
    "p99_us",
    "stdev_us",
    "cv_pct",
    "times_us",
];
/// ncclbench's own keys: after nccl-tests' at the top and in every `results` entry, and its
/// `ncclbench` object's (without `--per-group` and `--tuning`).
pub const OURS_TOP: [&str; 1] = ["ncclbench"];
pub const OURS_RESULT: [&str; 4] = ["collective", "cycle", "nranks", "timestamp"];
pub const OURS_OBJECT: [&str; 6] = [
    "version",
    "backend",
    "collective",
    "nranks",
    "complete",
    "environment",
];
/// The only variables ncclbench copies into `env` (nccl-tests copies all).
pub const ENV_PREFIXES: [&str; 6] = ["NCCL_", "CUDA_", "UCX_", "OMPI_", "SLURM_", "PMIX_"];

/// What the run was asked for, which the document must reflect.
pub struct Expect {
    /// Processes of the job (entries in `config.devices`, per-process rows with more than one).
    pub processes: usize,
    /// `step_factor` or `step_bytes`.
    pub step_key: &'static str,
    /// `time`, or `cpu_time` with `-C 1`.
    pub time_key: &'static str,
    /// `-n`.
    pub iters: u32,
    /// `-I 1`.
    pub per_iter: bool,
    /// `-K`.
    pub skip: u32,
}

fn concat(parts: &[&[&str]]) -> Vec<String> {
    parts
        .iter()
        .flat_map(|p| p.iter().map(|k| k.to_string()))
        .collect()
}

fn assert_keys(d: &Doc, want: &[String], what: &str) {
    assert_eq!(
        d.keys(),
        want.iter().map(String::as_str).collect::<Vec<_>>(),
        "keys of {what}"
    );
}

/// `"%Y-%m-%d %H:%M:%S"`.
fn is_local_time(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 19
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b' ',
            13 | 16 => *c == b':',
            _ => c.is_ascii_digit(),
        })
}

fn is_str(d: &Doc) -> bool {
    matches!(d, Doc::Str(_))
}

/// nccl-tests' booleans: the strings `"true"` and `"false"`.
fn bool_str(d: &Doc, what: &str) -> bool {
    match d.str() {
        "true" => true,
        "false" => false,
        other => panic!("{what} is {other:?}, not \"true\" or \"false\""),
    }
}

/// Asserts the whole version-3 layout on the document `text`; returns it parsed.
pub fn check(text: &str, e: &Expect) -> Doc {
    // `%lf` decimals and plain integers: no other number spelling.
    for t in number_tokens(text) {
        let (int, frac) = t.split_once('.').unwrap_or((t, ""));
        let int = int.strip_prefix('-').unwrap_or(int);
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
        assert!(
            digits(int) && (frac.is_empty() || (frac.len() == 6 && digits(frac))),
            "number {t:?} is neither an integer nor written with six decimals"
        );
    }
    let doc = Doc::parse(text);
    assert_keys(&doc, &concat(&[&TOP, &OURS_TOP]), "the document");
    assert_eq!(doc.get("version").int(), 3);
    for key in ["start_time", "end_time"] {
        let t = doc.get(key).str();
        assert!(is_local_time(t), "{key} {t:?}");
    }
    let args = doc.get("args").items();
    assert!(!args.is_empty() && args.iter().all(is_str), "args {args:?}");
    for v in doc.get("env").items() {
        let (name, _) = v.str().split_once('=').expect("NAME=value");
        assert!(
            ENV_PREFIXES.iter().any(|p| name.starts_with(p)),
            "env {name}"
        );
    }
    assert!(doc.get("nccl_version").int() >= 0);
    config(doc.get("config"), e);
    let results = doc.get("results").items();
    assert!(!results.is_empty(), "no results");
    for r in results {
        result(r, e);
    }
    let oob = doc.get("out_of_bounds");
    assert_keys(oob, &concat(&[&["count", "okay"]]), "out_of_bounds");
    assert!(oob.get("count").int() >= 0);
    bool_str(oob.get("okay"), "out_of_bounds.okay");
    let avg = doc.get("average_bus_bandwidth");
    assert_keys(
        avg,
        &concat(&[&["bandwidth", "okay"]]),
        "average_bus_bandwidth",
    );
    match avg.get("bandwidth") {
        Doc::Num(_) => {}
        Doc::Str(s) => assert_eq!(s, "nan"),
        other => panic!("average bandwidth {other:?}"),
    }
    let okay = avg.get("okay").str();
    assert!(["true", "false", "unchecked"].contains(&okay), "{okay}");
    let errors = doc.get("errors").items();
    assert!(errors.iter().all(is_str), "errors {errors:?}");
    assert_keys(doc.get("ncclbench"), &concat(&[&OURS_OBJECT]), "ncclbench");
    doc
}

fn config(c: &Doc, e: &Expect) {
    assert_keys(
        c,
        &concat(&[&CONFIG_HEAD, &[e.step_key], &CONFIG_TAIL]),
        "config",
    );
    let ints = [
        &CONFIG_HEAD[..],
        &[e.step_key],
        &CONFIG_TAIL[..5],
        &["per_iter_skip"],
    ];
    for key in ints.concat() {
        assert!(c.get(key).int() >= 0, "config.{key}");
    }
    for key in ["blocking_collectives", "per_iter_timing", "parallel_init"] {
        bool_str(c.get(key), key);
    }
    assert_eq!(c.get("iterations").int(), e.iters.into());
    assert_eq!(
        bool_str(c.get("per_iter_timing"), "per_iter_timing"),
        e.per_iter
    );
    assert_eq!(c.get("per_iter_skip").int(), e.skip.into());
    let devices = c.get("devices").items();
    assert_eq!(devices.len(), e.processes, "one device entry per process");
    let mut last_rank = -1;
    let mut pids = Vec::new();
    for d in devices {
        assert_keys(d, &concat(&[&DEVICE]), "a device");
        let rank = d.get("rank").int();
        assert!(rank > last_rank, "devices in process order: {devices:?}");
        last_rank = rank;
        for key in ["group", "device"] {
            assert!(d.get(key).int() >= 0, "device {key}");
        }
        pids.push((d.get("hostname").str().to_string(), d.get("pid").int()));
        let hex = d.get("device_hex").str();
        let parts: Vec<&str> = hex.split(':').collect();
        assert!(
            parts.iter().map(|p| p.len()).eq([4, 2, 2])
                && hex.bytes().all(|b| b == b':' || b.is_ascii_hexdigit()),
            "device_hex {hex:?}"
        );
        assert!(is_str(d.get("device_info")), "device_info");
    }
    pids.dedup();
    assert_eq!(
        pids.len(),
        e.processes,
        "one entry per process: {devices:?}"
    );
}

fn result(r: &Doc, e: &Expect) {
    let per_iter: &[&str] = if e.per_iter { &["_per_iter"] } else { &[] };
    let mut placements = Vec::new();
    for p in ["out_of_place", "in_place"] {
        placements.push(p.to_string());
        placements.extend(per_iter.iter().map(|s| format!("{p}{s}")));
    }
    let head = concat(&[&RESULT_HEAD]);
    let tail = concat(&[&RESULT_TAIL, &OURS_RESULT]);
    assert_keys(r, &[head, placements, tail].concat(), "a result");
    for key in ["size", "count", "cycle", "nranks"] {
        assert!(r.get(key).int() >= 0, "{key}");
    }
    for key in ["type", "redop", "collective", "timestamp"] {
        assert!(!r.get(key).str().is_empty(), "{key}");
    }
    let root = r.get("root").str();
    assert!(
        root.len() == 6 && root.trim_start().parse::<i64>().is_ok(),
        "root {root:?} is not %6i"
    );
    assert_eq!(r.get("actual_iterations").int(), e.iters.into());
    assert_eq!(r.get("experiment_name").str(), "");
    for p in ["out_of_place", "in_place"] {
        let m = r.get(p);
        assert_keys(m, &concat(&[&[e.time_key], &FIGURES]), p);
        for key in [e.time_key, "alg_bw", "bus_bw"] {
            assert!(m.get(key).num() >= 0.0, "{p}.{key}");
        }
        assert!(
            matches!(m.get("nwrong"), Doc::Num(_) | Doc::Null),
            "{p}.nwrong"
        );
        if e.per_iter {
            iterations(r.get(&format!("{p}_per_iter")), e);
        }
    }
}

/// A `*_per_iter` object: its statistics are nccl-tests' over the iterations after the `-K`
/// skipped ones, while `times_us` (and each process's row) keeps every iteration.
fn iterations(it: &Doc, e: &Expect) {
    let several: &[&str] = if e.processes > 1 {
        &["per_process_max_times_us"]
    } else {
        &[]
    };
    assert_keys(it, &concat(&[&PER_ITER, several]), "a *_per_iter object");
    assert_eq!(it.get("skipped_iterations").int(), e.skip.into());
    let times = it.get("times_us").nums();
    assert_eq!(
        times.len(),
        e.iters as usize,
        "times_us holds every iteration"
    );
    let mut kept = times[e.skip as usize..].to_vec();
    kept.sort_by(f64::total_cmp);
    let n = kept.len();
    let mean = kept.iter().sum::<f64>() / n as f64;
    let stdev = (kept.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    let nearest = |p: f64| {
        kept[((n as f64 * p / 100.0).ceil() as usize)
            .saturating_sub(1)
            .min(n - 1)]
    };
    // The elements are exact (the same doubles printed alike); the means and deviations carry
    // the six-decimal rounding of each time.
    assert_eq!(it.get("min_us").num(), kept[0], "min_us of {kept:?}");
    assert_eq!(it.get("max_us").num(), kept[n - 1], "max_us of {kept:?}");
    assert_eq!(it.get("p50_us").num(), kept[n / 2], "p50_us of {kept:?}");
    assert_eq!(it.get("p95_us").num(), nearest(95.0), "p95_us of {kept:?}");
    assert_eq!(it.get("p99_us").num(), nearest(99.0), "p99_us of {kept:?}");
    let close = |key: &str, want: f64, tol: f64| {
        let got = it.get(key).num();
        assert!(
            (got - want).abs() <= tol,
            "{key} {got}, want {want} over {kept:?}"
        );
    };
    close("avg_us", mean, 2e-6);
    close("stdev_us", stdev, 1e-5);
    close("cv_pct", stdev / mean * 100.0, 1e-3);
    if e.processes > 1 {
        let rows: Vec<Vec<f64>> = it
            .get("per_process_max_times_us")
            .items()
            .iter()
            .map(Doc::nums)
            .collect();
        assert_eq!(rows.len(), e.processes, "one row per process");
        for r in &rows {
            assert_eq!(r.len(), times.len(), "a process row holds every iteration");
        }
        for (i, t) in times.iter().enumerate() {
            let max = rows.iter().map(|r| r[i]).fold(f64::MIN, f64::max);
            assert_eq!(
                *t, max,
                "times_us[{i}] is the maximum over the process rows"
            );
        }
    }
}
