//! `--per-group` in the text output: after the aggregate table (the one nccl-tests prints), one
//! table per split group, each headed by the group's ranks and hosts and closed by its own
//! average bus bandwidth. Every line of these tables starts with `#`, so tools that read
//! nccl-tests' text output (every line not starting with `#` is a row of the aggregate) see
//! exactly the table they always saw. The rows are kept as they arrive and printed at the end,
//! also when the run stops early, so no completed group row is lost.

use super::header::{self, Columns};
use super::{body, preamble};
use crate::bench::output::format::c_g;
use crate::result::{GroupInfo, GroupMeasurement, Measurement, Row};

/// A group table's columns: the aggregate's, less what a group does not have (per-iteration
/// data, NCCL's decisions, and `-C`'s host enqueue time, which is per process: a group row
/// shows its time).
fn group_columns(cols: Columns) -> Columns {
    Columns {
        per_iter: false,
        cputime: false,
        show_algo: false,
        ..cols
    }
}
use std::collections::BTreeMap;

/// The per-group rows measured so far.
#[derive(Debug, Default)]
pub(super) struct GroupTables {
    info: Vec<GroupInfo>,
    /// Per colour: its lines, and its bus bandwidths for the average.
    rows: BTreeMap<usize, (Vec<String>, Vec<f64>)>,
}

/// A group's figures as a measurement of the table's columns.
fn as_measurement(g: &GroupMeasurement) -> Measurement {
    Measurement {
        time_us: g.time_us,
        cputime_us: 0.0,
        algbw_gbs: g.algbw_gbs,
        busbw_gbs: g.busbw_gbs,
        wrong: g.wrong,
        iter: None,
        tuning: None,
        groups: Vec::new(),
    }
}

/// A data line as a comment: `#` over its first column's leading blank.
fn commented(line: &str) -> String {
    match line.strip_prefix(' ') {
        Some(rest) => format!("#{rest}"),
        None => format!("#{line}"),
    }
}

impl GroupTables {
    /// Tables for the groups of `info` (none without `--per-group`).
    pub(super) fn new(info: &[GroupInfo]) -> Self {
        GroupTables {
            info: info.to_vec(),
            rows: BTreeMap::new(),
        }
    }

    /// Keeps `row`'s group figures.
    pub(super) fn add(&mut self, cols: Columns, row: &Row) {
        let cols = group_columns(cols);
        for g in &row.out_of_place.groups {
            let Some(ip) = row.in_place.groups.iter().find(|i| i.group == g.group) else {
                continue;
            };
            let mut key = row.key.clone();
            key.nranks = g.nranks;
            let mut line = preamble(&key);
            line += &body(cols, &as_measurement(g));
            line += &body(cols, &as_measurement(ip));
            if cols.timestamps {
                line += &format!("{:>21}", row.timestamp);
            }
            let entry = self.rows.entry(g.group).or_default();
            entry.0.push(commented(&line));
            entry.1.extend([g.busbw_gbs, ip.busbw_gbs]);
        }
    }

    /// The tables, or nothing when no group row was kept.
    pub(super) fn render(&self, cols: Columns) -> String {
        if self.rows.is_empty() {
            return String::new();
        }
        let cols = group_columns(cols);
        let n = self.info.len().max(self.rows.len());
        let mut s = format!(
            "#\n# Per group (--per-group): {n} group{}; nccl-tests prints only the aggregate above\n",
            if n == 1 { "" } else { "s" }
        );
        for (group, (lines, busbw)) in &self.rows {
            s += "#\n";
            s += &match self.info.iter().find(|i| i.group == *group) {
                Some(i) => format!(
                    "# Group {group}: {} ranks ({}) on {}\n",
                    i.ranks.len(),
                    i.ranks
                        .iter()
                        .map(|r| r.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                    i.distinct_hosts().join(",")
                ),
                None => format!("# Group {group}\n"),
            };
            s += &header::column_header(cols).replacen("#\n", "", 1);
            for l in lines {
                s += l;
                s += "\n";
            }
            let avg = busbw.iter().sum::<f64>() / busbw.len() as f64;
            s += &format!("# Group {group} avg bus bandwidth : {}\n", c_g(avg));
        }
        s += "#\n";
        s
    }
}
