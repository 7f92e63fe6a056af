//! ncclbench CSV (`--csv`): a header line, then one record per (row, placement). Columns are
//! found by name, so extra ones (`-I` statistics, `backend`, `timestamp`, later additions) are
//! ignored and `algo`/`proto`/`channels` become [`Tuning`](crate::analysis::input::Tuning).
//! A header line repeated further down (files joined with `cat`) starts the next run.
//!
//! Required columns: `dtype`, `placement`, `bytes`, `time_us`, `algbw_gbs`, `busbw_gbs`.
//! Optional ones default to: `collective` none, `op` empty, `root` -1, `nranks` unknown,
//! `cycle` 0, `count` 0, `wrong` none (as when it is empty).

use super::common::{collective_name, fail, int, known_dtype, num, tuning_with_model, uint};
use crate::analysis::input::{InputRow, ReadSet, Skipped, SourceRef};
use crate::core::error::Error;
use crate::result::Placement;
use std::borrow::Cow;
use std::collections::HashMap;

/// Columns without which a record means nothing.
const REQUIRED: &[&str] = &[
    "dtype",
    "placement",
    "bytes",
    "time_us",
    "algbw_gbs",
    "busbw_gbs",
];

/// Splits one CSV record (RFC 4180 quoting, on one line).
pub(super) fn split_record(line: &str) -> Result<Vec<Cow<'_, str>>, &'static str> {
    if !line.contains('"') {
        return Ok(line.split(',').map(Cow::Borrowed).collect());
    }
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => fields.push(Cow::Owned(std::mem::take(&mut field))),
            (_, c) => field.push(c),
        }
    }
    if quoted {
        return Err("unterminated quoted field");
    }
    fields.push(Cow::Owned(field));
    Ok(fields)
}

/// True when a record is a header: it names the columns we need.
pub(super) fn is_header(fields: &[Cow<str>]) -> bool {
    REQUIRED
        .iter()
        .filter(|c| fields.iter().any(|f| f.trim() == **c))
        .count()
        >= 3
}

/// Reads an ncclbench CSV file.
pub(super) fn read(name: &str, text: &str) -> Result<ReadSet, Error> {
    let mut set = ReadSet::default();
    let mut columns: Option<HashMap<String, usize>> = None;
    let mut width = 0;
    let mut run: Option<u32> = None;
    for (i, raw) in text.split('\n').enumerate() {
        let no = i + 1;
        let line = raw.trim_end_matches('\r').trim_start_matches('\u{feff}');
        if line.trim().is_empty() {
            continue;
        }
        let skip = |set: &mut ReadSet, reason: String| {
            set.skipped.push(Skipped {
                source: SourceRef {
                    file: name.to_string(),
                    line: no,
                },
                reason,
            });
        };
        let fields = match split_record(line) {
            Ok(f) => f,
            Err(why) => {
                skip(&mut set, why.to_string());
                continue;
            }
        };
        if is_header(&fields) {
            let missing: Vec<&str> = REQUIRED
                .iter()
                .copied()
                .filter(|c| !fields.iter().any(|f| f.trim() == *c))
                .collect();
            if !missing.is_empty() {
                return Err(fail(
                    name,
                    no,
                    format!("CSV header lacks column(s) {}", missing.join(", ")),
                ));
            }
            let map = fields
                .iter()
                .enumerate()
                .map(|(i, f)| (f.trim().to_string(), i));
            columns = Some(map.collect());
            width = fields.len();
            run = Some(run.map_or(0, |r| r.saturating_add(1)));
            continue;
        }
        let (Some(cols), Some(run)) = (&columns, run) else {
            return Err(fail(name, no, "CSV data before the header line"));
        };
        if fields.len() != width {
            skip(
                &mut set,
                format!("{} fields, the header has {width}", fields.len()),
            );
            continue;
        }
        match record(cols, &fields) {
            Ok(mut row) => {
                row.source = SourceRef {
                    file: name.to_string(),
                    line: no,
                };
                row.run = run;
                set.rows.push(row);
            }
            Err(why) => skip(&mut set, why),
        }
    }
    Ok(set)
}

/// One record as an [`InputRow`] (source and run filled in by the caller).
fn record(cols: &HashMap<String, usize>, fields: &[Cow<str>]) -> Result<InputRow, String> {
    let get = |c: &str| {
        cols.get(c)
            .and_then(|&i| fields.get(i))
            .map_or("", |s| s.trim())
    };
    let number = |c: &str| num(get(c)).ok_or_else(|| format!("{c} `{}` is not a number", get(c)));
    let optional = |c: &str, default: i64| match get(c) {
        "" => Ok(default),
        t => int(t).ok_or_else(|| format!("{c} `{t}` is not an integer")),
    };
    let dtype = get("dtype");
    if !known_dtype(dtype) {
        return Err(format!("unknown dtype `{dtype}`"));
    }
    let placement = match get("placement") {
        "out_of_place" => Placement::OutOfPlace,
        "in_place" => Placement::InPlace,
        p => {
            return Err(format!(
                "placement `{p}` is neither out_of_place nor in_place"
            ))
        }
    };
    let bytes = uint(get("bytes"))
        .ok_or_else(|| format!("bytes `{}` is not a byte count", get("bytes")))?;
    let time_us = number("time_us")?;
    if !(time_us.is_finite() && time_us > 0.0) {
        return Err(format!("time {time_us} is not a positive latency"));
    }
    let nranks = match get("nranks") {
        "" => None,
        t => Some(
            uint(t)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| format!("nranks `{t}` is not a count"))?,
        ),
    };
    Ok(InputRow {
        source: SourceRef {
            file: String::new(),
            line: 0,
        },
        collective: collective_name(get("collective")),
        dtype: dtype.to_string(),
        op: get("op").to_string(),
        root: optional("root", -1)?,
        nranks,
        placement,
        cycle: u32::try_from(optional("cycle", 0)?).map_err(|_| "cycle out of range")?,
        run: 0,
        bytes,
        count: match get("count") {
            "" => 0,
            t => uint(t).ok_or_else(|| format!("count `{t}` is not a count"))?,
        },
        time_us,
        algbw_gbs: number("algbw_gbs")?,
        busbw_gbs: number("busbw_gbs")?,
        wrong: match get("wrong") {
            "" => None,
            w => Some(num(w).ok_or_else(|| format!("wrong `{w}` is not a number"))?),
        },
        tuning: tuning_with_model(
            get("algo"),
            get("proto"),
            get("channels"),
            get("nccl_model_time_us"),
        ),
    })
}
