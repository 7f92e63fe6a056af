//! ncclbench CSV (`--csv`): a header line, then one record per (row, placement). Columns are
//! found by name, so extra ones (`-I` statistics, `backend`, `timestamp`, later additions) are
//! ignored and `algo`/`proto`/`channels` become [`Tuning`](crate::analysis::input::Tuning).
//! A header line repeated further down (files joined with `cat`) starts the next run.
//!
//! Required columns: `dtype`, `placement`, `bytes`, `time_us`, `algbw_gbs`, `busbw_gbs`.
//! Optional ones default to: `collective` none, `op` empty, `root` -1, `nranks` unknown,
//! `cycle` 0, `count` 0, `wrong` none (as when it is empty).
//!
//! Records are parsed by the `csv` crate as they stream in (RFC 4180: quoted fields may hold
//! commas, quotes and line breaks; CRLF or LF; a UTF-8 BOM is dropped), so memory holds the
//! rows kept, not the file. A quote left open runs to the end of the file, as RFC 4180 reads
//! it: that one record is skipped for its field count. A record's line is where it starts.

use super::common::{collective_name, fail, int, known_dtype, num, tuning_with_model, uint};
use crate::analysis::input::{InputRow, ReadSet, Skipped, SourceRef};
use crate::core::bounded::quote;
use crate::core::error::Error;
use crate::result::Placement;
use ::csv::ByteRecord;
use std::borrow::Cow;
use std::collections::HashMap;

/// Columns without which a record means nothing.
/// The longest collective name a record may hold (ncclbench's and nccl-tests' are under 20
/// bytes; a longer one is a damaged field, never shown whole).
const MAX_NAME: usize = 64;

/// The most bytes one CSV record may take (ncclbench's are under 1 KiB): a longer one stops
/// the read, so a damaged field is never held or echoed whole.
pub(super) const MAX_RECORD: u64 = 1 << 20;

const REQUIRED: &[&str] = &[
    "dtype",
    "placement",
    "bytes",
    "time_us",
    "algbw_gbs",
    "busbw_gbs",
];

/// The record reader: RFC 4180 (quoted fields may hold commas, quotes and line breaks; CRLF
/// or LF line ends), any number of fields per record (a wrong count is a skipped row, not an
/// error), no header handling (headers are recognised by content, repeated ones included).
/// Records end at `\n` only: with the crate's CRLF default a record after `\r\n` reports the
/// line before its own (the `\n` is consumed with the next record), and a `\r` left at the
/// end of the last field is trimmed like any white space.
fn records<R: std::io::Read>(input: R) -> ::csv::Reader<R> {
    ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_reader(input)
}

/// A record's fields as text (invalid UTF-8 replaced), a leading UTF-8 BOM dropped.
fn fields(record: &ByteRecord) -> Vec<Cow<'_, str>> {
    let mut fields: Vec<Cow<str>> = record.iter().map(String::from_utf8_lossy).collect();
    if let Some(first) = fields.first_mut() {
        if let Some(rest) = first.strip_prefix('\u{feff}') {
            *first = Cow::Owned(rest.to_string());
        }
    }
    fields
}

/// The first record of `head` (the start of a file), to recognise a header.
pub(super) fn first_record(head: &str) -> Option<Vec<String>> {
    let mut reader = records(head.as_bytes());
    let mut record = ByteRecord::new();
    reader.read_byte_record(&mut record).ok()?;
    Some(fields(&record).into_iter().map(Cow::into_owned).collect())
}

/// True when a record is a header: it names the columns we need.
pub(super) fn is_header<S: AsRef<str>>(fields: &[S]) -> bool {
    REQUIRED
        .iter()
        .filter(|c| fields.iter().any(|f| f.as_ref().trim() == **c))
        .count()
        >= 3
}

/// Reads an ncclbench CSV file from a stream, one record at a time.
pub(super) fn read(
    name: &str,
    input: impl std::io::Read,
    mark: &crate::core::bounded::Mark,
) -> Result<ReadSet, Error> {
    let mut set = ReadSet::default();
    let mut columns: Option<HashMap<String, usize>> = None;
    let mut width = 0;
    let mut run: Option<u32> = None;
    let mut reader = records(input);
    let mut raw = ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut raw) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
                return Err(fail(name, line, format!("cannot read: {e}")));
            }
        }
        // The line the record starts on (a quoted line break makes a record span lines).
        let no = raw.position().map_or(0, |p| p.line() as usize);
        let fields = fields(&raw);
        if fields.iter().all(|f| f.trim().is_empty()) && fields.len() <= 1 {
            continue;
        }
        mark.record();
        let skip = |set: &mut ReadSet, reason: String| {
            set.skipped.push(Skipped {
                source: SourceRef {
                    file: name.to_string(),
                    line: no,
                },
                reason,
            });
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
        if is_group_line(cols, &fields) {
            set.group_rows += 1;
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

/// A `--per-group` line: its `group` column names a colour (the aggregate's says `all`).
fn is_group_line(cols: &HashMap<String, usize>, fields: &[Cow<str>]) -> bool {
    let group = cols.get("group").and_then(|&i| fields.get(i));
    group.is_some_and(|g| !matches!(g.trim(), "" | "all"))
}

/// One record as an [`InputRow`] (source and run filled in by the caller).
fn record(cols: &HashMap<String, usize>, fields: &[Cow<str>]) -> Result<InputRow, String> {
    let get = |c: &str| {
        cols.get(c)
            .and_then(|&i| fields.get(i))
            .map_or("", |s| s.trim())
    };
    let number =
        |c: &str| num(get(c)).ok_or_else(|| format!("{c} {} is not a number", quote(get(c))));
    let optional = |c: &str, default: i64| match get(c) {
        "" => Ok(default),
        t => int(t).ok_or_else(|| format!("{c} {} is not an integer", quote(t))),
    };
    let collective = get("collective");
    if collective.len() > MAX_NAME {
        return Err(format!(
            "collective {} is not a collective name (longer than {MAX_NAME} bytes)",
            quote(collective)
        ));
    }
    let dtype = get("dtype");
    if !known_dtype(dtype) {
        return Err(format!("unknown dtype {}", quote(dtype)));
    }
    let placement = match get("placement") {
        "out_of_place" => Placement::OutOfPlace,
        "in_place" => Placement::InPlace,
        p => {
            return Err(format!(
                "placement {} is neither out_of_place nor in_place",
                quote(p)
            ))
        }
    };
    let bytes = uint(get("bytes"))
        .ok_or_else(|| format!("bytes {} is not a byte count", quote(get("bytes"))))?;
    let time_us = number("time_us")?;
    if !(time_us.is_finite() && time_us > 0.0) {
        return Err(format!("time {time_us} is not a positive latency"));
    }
    let nranks = match get("nranks") {
        "" => None,
        t => Some(
            uint(t)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| format!("nranks {} is not a count", quote(t)))?,
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
            t => uint(t).ok_or_else(|| format!("count {} is not a count", quote(t)))?,
        },
        time_us,
        algbw_gbs: number("algbw_gbs")?,
        busbw_gbs: number("busbw_gbs")?,
        wrong: match get("wrong") {
            "" => None,
            w => Some(num(w).ok_or_else(|| format!("wrong {} is not a number", quote(w)))?),
        },
        tuning: tuning_with_model(
            get("algo"),
            get("proto"),
            get("channels"),
            get("nccl_model_time_us"),
        ),
    })
}
