//! The CSV columns, each declared once: its name beside how its field is taken from a line.
//! The header and every record (an aggregate's line, a `--per-group` group's line) are made
//! from these tables, so a column cannot be named in one place and filled in another.

use crate::core::stats::IterStats;
use crate::result::tuning::Tuning;
use crate::result::{GroupInfo, Placement, RowKey};

/// What one CSV line is made of; the fields a line does not have are `None` (empty fields).
pub(super) struct Line<'a> {
    pub key: &'a RowKey,
    pub placement: Placement,
    pub nranks: usize,
    pub time_us: f64,
    pub algbw_gbs: f64,
    pub busbw_gbs: f64,
    pub wrong: Option<u64>,
    pub backend: &'a str,
    /// Host enqueue time: per process, so a group's line has none.
    pub cputime_us: Option<f64>,
    pub timestamp: &'a str,
    pub tuning: Option<&'a Tuning>,
    pub iter: Option<&'a IterStats>,
    /// `--per-group`: the group's colour and what is known of it; `None` on the aggregate.
    pub group: Option<(usize, Option<&'a GroupInfo>)>,
}

/// A column: its header name and its field on a line.
pub struct Column {
    /// The header name.
    pub name: &'static str,
    field: fn(&Line) -> String,
}

/// A column (a function, so that each table entry stays one line).
const fn col(name: &'static str, field: fn(&Line) -> String) -> Column {
    Column { name, field }
}

/// An optional value's text; empty when absent.
fn text<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The columns every CSV file has, in order. The `algo` .. `decision` fields are empty
/// without `--tuning` or without a decision line; a mixed measurement lists its distinct
/// decisions, aligned, separated by `|`.
pub const CSV_COLUMNS: &[Column] = &[
    col("cycle", |l| l.key.cycle.to_string()),
    col("collective", |l| l.key.collective.name().to_string()),
    col("dtype", |l| l.key.dtype.name().to_string()),
    col("op", |l| l.key.op_label().to_string()),
    col("root", |l| l.key.root_value().to_string()),
    col("nranks", |l| l.nranks.to_string()),
    col("placement", |l| l.placement.name().to_string()),
    col("bytes", |l| l.key.bytes.to_string()),
    col("count", |l| l.key.count.to_string()),
    col("time_us", |l| l.time_us.to_string()),
    col("algbw_gbs", |l| l.algbw_gbs.to_string()),
    col("busbw_gbs", |l| l.busbw_gbs.to_string()),
    col("wrong", |l| text(l.wrong)),
    col("backend", |l| l.backend.to_string()),
    col("cputime_us", |l| text(l.cputime_us)),
    col("timestamp", |l| l.timestamp.to_string()),
    col("algo", |l| text(l.tuning.map(Tuning::algo_text))),
    col("proto", |l| text(l.tuning.map(Tuning::proto_text))),
    col("channels", |l| text(l.tuning.map(Tuning::channels_text))),
    col("nccl_model_time_us", |l| {
        text(l.tuning.map(Tuning::model_time_text))
    }),
    col("decision", |l| text(l.tuning.map(Tuning::kind))),
];

/// The columns appended when per-iteration timing (`-I 1`) is on; empty on a line without
/// per-iteration data.
pub const CSV_ITER_COLUMNS: &[Column] = &[
    col("iter_skipped", |l| text(l.iter.map(|i| i.skipped))),
    col("iter_min_us", |l| text(l.iter.map(|i| i.min_us))),
    col("iter_max_us", |l| text(l.iter.map(|i| i.max_us))),
    col("iter_mean_us", |l| text(l.iter.map(|i| i.mean_us))),
    col("iter_p50_us", |l| text(l.iter.map(|i| i.p50_us))),
    col("iter_p95_us", |l| text(l.iter.map(|i| i.p95_us))),
    col("iter_p99_us", |l| text(l.iter.map(|i| i.p99_us))),
    col("iter_stdev_us", |l| text(l.iter.map(|i| i.stdev_us))),
    col("iter_cv_pct", |l| text(l.iter.map(|i| i.cv_pct))),
];

/// The columns appended with `--per-group`: `all` and two empty fields on the aggregate's
/// lines; on a group's line its colour, its job-wide ranks and its hosts, each list
/// separated by spaces.
pub const CSV_GROUP_COLUMNS: &[Column] = &[
    Column {
        name: "group",
        field: |l| {
            l.group
                .map_or("all".to_string(), |(colour, _)| colour.to_string())
        },
    },
    Column {
        name: "group_ranks",
        field: |l| {
            let ranks = l.group.and_then(|(_, info)| info).map(|i| &i.ranks);
            let ranks = ranks.into_iter().flatten().map(|r| r.to_string());
            ranks.collect::<Vec<_>>().join(" ")
        },
    },
    Column {
        name: "group_hosts",
        field: |l| {
            let info = l.group.and_then(|(_, info)| info);
            info.map_or(Vec::new(), GroupInfo::distinct_hosts).join(" ")
        },
    },
];

/// The columns of a file: the common ones, then the per-iteration and per-group ones when on.
pub(super) fn of_file(per_iter: bool, per_group: bool) -> Vec<&'static Column> {
    let iter = if per_iter { CSV_ITER_COLUMNS } else { &[] };
    let group = if per_group { CSV_GROUP_COLUMNS } else { &[] };
    CSV_COLUMNS.iter().chain(iter).chain(group).collect()
}

/// The header record.
pub(super) fn header(columns: &[&Column]) -> Vec<String> {
    columns.iter().map(|c| c.name.to_string()).collect()
}

/// A line's record.
pub(super) fn record(columns: &[&Column], line: &Line) -> Vec<String> {
    columns.iter().map(|c| (c.field)(line)).collect()
}

/// The names of `columns`, joined with commas (as a header line reads).
pub fn names(columns: &[Column]) -> String {
    let names: Vec<&str> = columns.iter().map(|c| c.name).collect();
    names.join(",")
}
