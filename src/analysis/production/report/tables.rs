//! The production report's tables as plain cells, defined once for the terminal, markdown
//! and HTML renderers: where the job loses time (one row per group), the causes, the ranks
//! and the hosts.

use crate::analysis::production::model::{Cause, Group, Report};
use crate::analysis::report::table::{Align, Table};
use crate::analysis::units;

use Align::{Left, Right};

/// Groups shown in the losses table; the rest are counted (all are in the JSON).
pub(crate) const TOP_GROUPS: usize = 25;

fn table(columns: &[(&'static str, Align)]) -> Table {
    Table {
        headers: columns.iter().map(|c| c.0).collect(),
        align: columns.iter().map(|c| c.1).collect(),
        rows: Vec::new(),
    }
}

/// The communicator in words: its name, else its id.
pub(crate) fn comm(name: &Option<String>, id: &str) -> String {
    name.clone().unwrap_or_else(|| id.to_string())
}

/// Milliseconds with two decimals.
pub(crate) fn ms(us: f64) -> String {
    units::us(us / 1e3)
}

/// A group's size: `64M`, or a bucket `64M..65M`.
pub(crate) fn size(g: &Group) -> String {
    match g.bytes_hi {
        Some(hi) => units::size_range(g.bytes, hi),
        None => units::size(g.bytes),
    }
}

/// The first line: records, time, time lost.
pub(crate) fn headline(r: &Report) -> String {
    let mut s = format!(
        "{} Inspector record(s) from {} file(s), {} group(s); communication time {} ms",
        r.inputs.records,
        r.inputs.files,
        r.groups.len(),
        ms(r.total_time_us)
    );
    if let Some(lost) = r.total_lost_us {
        s.push_str(&format!(
            "; lost against the benchmark {} ms ({} of it)",
            ms(lost),
            units::pct(if r.total_time_us > 0.0 {
                lost / r.total_time_us * 100.0
            } else {
                0.0
            })
        ));
    }
    s
}

/// One row per group (the first [`TOP_GROUPS`]), the most time lost first.
pub(crate) fn losses(r: &Report) -> Table {
    let mut t = table(&[
        ("communicator", Left),
        ("collective", Left),
        ("size", Right),
        ("ranks", Right),
        ("calls", Right),
        ("time(ms)", Right),
        ("share", Right),
        ("busbw p5/p50/p95", Right),
        ("bench", Right),
        ("ratio", Right),
        ("lost(ms)", Right),
        ("timing", Left),
    ]);
    for g in r.groups.iter().take(TOP_GROUPS) {
        let b = &g.busbw_gbs;
        let (bench, ratio, lost) = match &g.baseline {
            Some(v) => (
                format!(
                    "{}{}",
                    units::gbs(v.busbw_gbs),
                    if v.source == "interpolated" { "~" } else { "" }
                ),
                format!("{:.2}", v.ratio),
                ms(v.lost_us),
            ),
            None => (units::NONE.into(), units::NONE.into(), units::NONE.into()),
        };
        t.rows.push(vec![
            comm(&g.comm_name, &g.comm_id),
            g.collective.clone(),
            size(g),
            g.nranks.to_string(),
            g.count.to_string(),
            ms(g.total_time_us),
            units::pct(g.time_share * 100.0),
            format!(
                "{}/{}/{}",
                units::gbs(b.p5),
                units::gbs(b.p50),
                units::gbs(b.p95)
            ),
            bench,
            ratio,
            lost,
            g.timing
                .iter()
                .map(|t| t.value.as_str())
                .collect::<Vec<_>>()
                .join(","),
        ]);
    }
    t
}

/// Why the shown groups (the first [`TOP_GROUPS`]) have no benchmark number, one line each:
/// `DP all_reduce 16K: size 16K is below the benchmark's smallest size 64K: not extrapolated`.
pub(crate) fn unmatched(r: &Report) -> Vec<String> {
    r.groups
        .iter()
        .take(TOP_GROUPS)
        .filter_map(|g| {
            let why = g.baseline_note.as_ref()?;
            Some(format!(
                "{} {} {}: {why}",
                comm(&g.comm_name, &g.comm_id),
                g.collective,
                size(g)
            ))
        })
        .collect()
}

/// What the losses table's benchmark columns mean, in one line.
pub(crate) const LOSSES_LEGEND: &str = "bench: the benchmark's busbw at the size, on its fitted \
     curve (~: interpolated between measured sizes); ratio: job median busbw / bench; lost: \
     job time minus bench time over the calls";

/// What the cause is about: `all_reduce 64M`, `rank 5 (host-b)`, `host host-b`.
pub(crate) fn subject(c: &Cause) -> String {
    match (c.kind.as_str(), c.rank, &c.host) {
        ("slow_host", _, Some(h)) => format!("host {h}"),
        (_, Some(rank), host) => match host {
            Some(h) => format!("rank {rank} ({h})"),
            None => format!("rank {rank}"),
        },
        _ => {
            let mut s = c.collective.clone().unwrap_or_default();
            if let Some(b) = c.bytes {
                s.push_str(&format!(" {}", units::size(b)));
            }
            s
        }
    }
}

/// One row per (communicator, rank).
pub(crate) fn ranks(r: &Report) -> Table {
    let mut t = table(&[
        ("communicator", Left),
        ("rank", Right),
        ("host", Left),
        ("calls", Right),
        ("rel busbw p50", Right),
        ("time(ms)", Right),
    ]);
    for k in &r.ranks {
        t.rows.push(vec![
            comm(&k.comm_name, &k.comm_id),
            k.rank.to_string(),
            k.host.clone().unwrap_or_else(|| units::NONE.into()),
            k.count.to_string(),
            format!("{:.2}", k.rel_busbw_p50),
            ms(k.total_time_us),
        ]);
    }
    t
}

/// One row per host.
pub(crate) fn hosts(r: &Report) -> Table {
    let mut t = table(&[
        ("host", Left),
        ("ranks", Right),
        ("calls", Right),
        ("rel busbw p50", Right),
        ("time(ms)", Right),
    ]);
    for h in &r.hosts {
        t.rows.push(vec![
            h.host.clone(),
            h.ranks.to_string(),
            h.count.to_string(),
            format!("{:.2}", h.rel_busbw_p50),
            ms(h.total_time_us),
        ]);
    }
    t
}
