//! `--per-group` lines of the CSV file: after each aggregate line, one line per split group
//! with the same key, the group's rank count and figures, and its colour, ranks and hosts in
//! the appended columns ([`super::CSV_GROUP_COLUMNS`]).

use super::{tuning_fields, CSV_ITER_COLUMNS};
use crate::result::{GroupInfo, GroupMeasurement, Placement, RowKey};

/// A group's line: the aggregate line's key with the group's rank count and figures; no host
/// enqueue time, decisions or per-iteration data (those are per process).
pub(super) fn line(
    key: &RowKey,
    p: Placement,
    g: &GroupMeasurement,
    info: Option<&GroupInfo>,
    backend: &str,
    per_iter: bool,
    timestamp: &str,
) -> Vec<String> {
    let mut fields = vec![
        key.cycle.to_string(),
        key.collective.name().to_string(),
        key.dtype.name().to_string(),
        key.op_label().to_string(),
        key.root_value().to_string(),
        g.nranks.to_string(),
        p.name().to_string(),
        key.bytes.to_string(),
        key.count.to_string(),
        g.time_us.to_string(),
        g.algbw_gbs.to_string(),
        g.busbw_gbs.to_string(),
        g.wrong.map(|w| w.to_string()).unwrap_or_default(),
        backend.to_string(),
        String::new(),
        timestamp.to_string(),
    ];
    fields.extend(tuning_fields(None));
    if per_iter {
        fields.extend(CSV_ITER_COLUMNS.iter().map(|_| String::new()));
    }
    fields.push(g.group.to_string());
    let ranks = info.map_or(Vec::new(), |i| {
        i.ranks.iter().map(|r| r.to_string()).collect()
    });
    fields.push(ranks.join(" "));
    let hosts = info.map_or(Vec::new(), |i| i.distinct_hosts());
    fields.push(hosts.join(" "));
    fields
}
