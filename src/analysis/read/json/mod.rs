//! nccl-tests JSON (`-J`, file versions 1 to 3) and ncclbench JSON (the same layout plus a
//! top-level `ncclbench` object and per-result `collective`, `cycle`, `nranks`).
//!
//! Each `results` entry gives an out-of-place and an in-place row; numbers may be the string
//! `"nan"`, `root` a padded string, `nwrong` null (not checked). For nccl-tests files the
//! collective is the basename of `args[0]` and the rank count is `config.devices` entries x
//! `ngpus` x `nthreads`, because nccl-tests lists one device entry per process; `-N` cycles are
//! numbered from the sizes. A result written with `-C` (`cpu_time` instead of `time`) has no
//! latency and is skipped. [`SourceRef::line`] is the 1-based index in `results`.
//!
//! The document is parsed as a stream ([`stream`]): only one result object at a time is held
//! whole, so a soak run's file takes the memory of its rows, not of its text.

use super::common::{collective_name, known_dtype, num, tuning};
use crate::analysis::input::{InputRow, SourceRef};
use crate::result::Placement;
use serde_json::{Map, Value};

mod stream;
pub(super) use stream::read;

/// What the whole file says about every result.
struct FileInfo {
    collective: Option<String>,
    nranks: Option<usize>,
}

/// The collective and rank count the file states once for all results.
fn file_info(top: &Map<String, Value>) -> FileInfo {
    let config = top.get("config");
    let devices = config
        .and_then(|c| c.get("devices"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let config_count = |key: &str| config.and_then(|c| c.get(key)).and_then(small).unwrap_or(1);
    match top.get("ncclbench") {
        Some(ours) => FileInfo {
            collective: ours
                .get("collective")
                .and_then(Value::as_str)
                .and_then(collective_name),
            nranks: ours
                .get("nranks")
                .and_then(small)
                .or((devices > 0).then_some(devices)),
        },
        None => FileInfo {
            collective: top
                .get("args")
                .and_then(|a| a.get(0))
                .and_then(Value::as_str)
                .and_then(collective_name),
            nranks: (devices > 0).then(|| {
                devices
                    .saturating_mul(config_count("ngpus"))
                    .saturating_mul(config_count("nthreads"))
            }),
        },
    }
}

/// A non-negative integer, as a JSON number or a string.
fn count(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A count that indexes memory (ranks, devices).
fn small(v: &Value) -> Option<usize> {
    count(v).and_then(|n| usize::try_from(n).ok())
}

/// A number, as JSON number or as a string (`"nan"`, `"    -1"`).
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => num(s),
        _ => None,
    }
}

/// Everything of a row but its placement's measurement.
fn base_row(result: &Value, info: &FileInfo, source: &SourceRef) -> Result<InputRow, String> {
    let field = |key: &str| result.get(key).filter(|v| !v.is_null());
    let text = |key: &str| field(key).and_then(Value::as_str).unwrap_or("").trim();
    if !result.is_object() {
        return Err("result is not an object".into());
    }
    let bytes = field("size")
        .and_then(count)
        .ok_or("no byte count in `size`")?;
    let dtype = text("type");
    if !known_dtype(dtype) {
        return Err(format!("unknown dtype `{dtype}`"));
    }
    let root = match field("root") {
        None => -1.0,
        Some(v) => number(v)
            .filter(|r| r.fract() == 0.0)
            .ok_or("`root` is not an integer")?,
    };
    let cycle = match field("cycle") {
        None => 0,
        Some(v) => count(v)
            .and_then(|c| u32::try_from(c).ok())
            .ok_or("`cycle` is not a count")?,
    };
    Ok(InputRow {
        source: source.clone(),
        collective: match field("collective").and_then(Value::as_str) {
            Some(c) => collective_name(c),
            None => info.collective.clone(),
        },
        dtype: dtype.to_string(),
        op: text("redop").to_string(),
        root: root as i64,
        nranks: field("nranks").and_then(small).or(info.nranks),
        placement: Placement::OutOfPlace,
        cycle,
        run: 0,
        bytes,
        count: match field("count") {
            None => 0,
            Some(v) => count(v).ok_or("`count` is not a count")?,
        },
        time_us: f64::NAN,
        algbw_gbs: f64::NAN,
        busbw_gbs: f64::NAN,
        wrong: None,
        tuning: tuning(text("algo"), text("proto"), text("channels")),
    })
}

/// NCCL's decision written into a placement object by `--tuning` (`algo`, `proto`,
/// `channels`; `null` or absent when there was none).
fn placement_tuning(v: Option<&Value>) -> Option<crate::analysis::input::Tuning> {
    let m = v?.as_object()?;
    let text = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or_default();
    let model = m
        .get("nccl_model_time_us")
        .and_then(Value::as_f64)
        .map(|v| v.to_string())
        .unwrap_or_default();
    super::common::tuning_with_model(text("algo"), text("proto"), text("channels"), &model)
}

/// `(time, algbw, busbw, wrong)` of one placement object.
fn measurement(v: Option<&Value>) -> Result<(f64, f64, f64, Option<f64>), String> {
    let m = v.and_then(Value::as_object).ok_or("missing")?;
    let time = match (m.get("time"), m.get("cpu_time")) {
        (Some(t), _) => number(t).ok_or("`time` is not a number")?,
        (None, Some(_)) => return Err("cpu_time result (-C): no latency".into()),
        (None, None) => return Err("no `time`".into()),
    };
    if !(time.is_finite() && time > 0.0) {
        return Err(format!("time {time} is not a positive latency"));
    }
    let bw = |key: &str| {
        m.get(key)
            .and_then(number)
            .ok_or_else(|| format!("`{key}` is not a number"))
    };
    let wrong = match m.get("nwrong") {
        None | Some(Value::Null) => None,
        Some(w) => Some(number(w).ok_or("`nwrong` is not a number")?),
    };
    Ok((time, bw("alg_bw")?, bw("bus_bw")?, wrong))
}
