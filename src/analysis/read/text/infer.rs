//! The collective of a table whose output does not name it (nccl-tests before 2.16.7 printed
//! no `Collective test starting` line; outputs cut from logs lose it), inferred from what the
//! table itself shows. Each piece of evidence leaves a set of collectives it fits:
//!
//! * the column set: before 2.13 every collective printed only its own columns (`redop`:
//!   all_reduce, reduce_scatter, and alltoall with an empty op; `root`: broadcast, gather,
//!   scatter; both: reduce; neither: all_gather, sendrecv, hypercube); from 2.13 every table
//!   has both, and the op column says `none` for the collectives without an operator, is empty
//!   for hypercube, and the root is -1 for the unrooted ones;
//! * (2.13+) an in-place `#wrong` of `N/A` beside a checked out-of-place one: sendrecv and
//!   alltoall, which never check in place;
//! * busbw / algbw against the rank count: 2(n-1)/n all_reduce, (n-1)/n all_gather,
//!   reduce_scatter, alltoall, gather, scatter, and 1 broadcast, reduce, sendrecv, hypercube;
//! * a `*_perf` program named near the table (a command line, the `Collective test concluded`
//!   footer).
//!
//! The collective is the one member of the sets' intersection; with none or several it stays
//! unknown, and the [`Inference`] says which candidates were left. Never a guess.

use super::layout::Columns;
use crate::analysis::input::{Inference, InputRow, ReadSet, SourceRef};
use crate::core::collective::Collective;
use crate::core::stats::median;
use crate::result::Placement;
use std::collections::BTreeSet;

/// Relative tolerance of a measured busbw / algbw against a collective's factor: the printed
/// bandwidths have at least three significant digits from 1 GB/s on.
const RATIO_TOLERANCE: f64 = 0.02;

/// What the parser knows about one table besides its rows.
pub(super) struct TableInfo {
    pub id: usize,
    /// Line of its column header.
    pub line: usize,
    pub columns: Columns,
    pub nranks: Option<usize>,
}

/// What the text parser collects for the tables without a collective line.
#[derive(Default)]
pub(super) struct Unnamed {
    /// Those tables.
    pub tables: Vec<TableInfo>,
    /// Header lines of every table.
    pub headers: Vec<usize>,
    /// `*_perf` programs named in the file, with their lines.
    programs: Vec<(usize, &'static str)>,
}

impl Unnamed {
    /// Notes the programs line `no` names.
    pub fn scan(&mut self, no: usize, raw: &str) {
        if raw.contains("_perf") {
            let named = raw.split_whitespace().filter_map(program_of);
            self.programs.extend(named.map(|p| (no, p)));
        }
    }

    /// Gives the rows of every unnamed table (`groups[i]` is row i's table) the collective
    /// their evidence singles out, and records how in `set.inferred`.
    pub fn apply(self, file: &str, set: &mut ReadSet, groups: &[usize]) {
        for info in &self.tables {
            let rows: Vec<usize> = (0..groups.len())
                .filter(|&i| groups[i] == info.id)
                .collect();
            if rows.is_empty() {
                continue;
            }
            // Programs named after the previous table's header and before the next one's.
            let at = self
                .headers
                .iter()
                .position(|&h| h == info.line)
                .unwrap_or(0);
            let from = at.checked_sub(1).map_or(0, |i| self.headers[i]);
            let to = self.headers.get(at + 1).copied().unwrap_or(usize::MAX);
            let programs: BTreeSet<String> = self
                .programs
                .iter()
                .filter(|(l, _)| *l > from && *l < to)
                .map(|(_, p)| p.to_string())
                .collect();
            let refs: Vec<&InputRow> = rows.iter().map(|&i| &set.rows[i]).collect();
            let inference = infer(file, info, &refs, &programs);
            for &i in &rows {
                set.rows[i].collective.clone_from(&inference.collective);
            }
            set.inferred.push(inference);
        }
    }
}

/// A set of collectives and why.
struct Evidence {
    fits: BTreeSet<&'static str>,
    why: String,
}

fn set(names: &[&'static str]) -> BTreeSet<&'static str> {
    names.iter().copied().collect()
}

/// The column set's evidence.
fn from_columns(c: Columns, rows: &[&InputRow]) -> Option<Evidence> {
    let blank_op = rows.iter().all(|r| r.op.is_empty());
    let none_op = rows.iter().all(|r| r.op == "none");
    let rooted = rows.iter().any(|r| r.root >= 0);
    let (fits, why) = match (c.legacy || !(c.redop && c.root), c.redop, c.root) {
        (true, true, false) if blank_op => (set(&["alltoall"]), "legacy columns with an empty op"),
        (true, true, false) => (
            set(&["all_reduce", "reduce_scatter"]),
            "legacy columns redop, no root",
        ),
        (true, false, true) => (
            set(&["broadcast", "gather", "scatter"]),
            "legacy columns root, no redop",
        ),
        (true, true, true) => (set(&["reduce"]), "legacy columns redop and root"),
        (true, false, false) => (
            set(&["all_gather", "sendrecv", "hypercube"]),
            "legacy columns without redop or root",
        ),
        (false, ..) if blank_op => (set(&["hypercube"]), "an empty op column"),
        (false, ..) if none_op && rooted => (
            set(&["broadcast", "gather", "scatter"]),
            "op none with a root",
        ),
        (false, ..) if none_op => (set(&["all_gather", "alltoall"]), "op none without a root"),
        (false, ..) if rooted => (set(&["reduce"]), "an op with a root"),
        (false, ..) => (
            set(&["all_reduce", "reduce_scatter", "sendrecv"]),
            "an op without a root",
        ),
    };
    Some(Evidence {
        fits,
        why: why.to_string(),
    })
}

/// In place never checked while out of place is: sendrecv, alltoall. Only the 2.13+ layout
/// prints `N/A` for them; older versions printed the unreported deviation anyway.
fn from_in_place_check(c: Columns, rows: &[&InputRow]) -> Option<Evidence> {
    if c.legacy || !(c.redop && c.root) {
        return None;
    }
    let checked = |p: Placement| {
        let mut it = rows.iter().filter(|r| r.placement == p).peekable();
        it.peek()?;
        Some(it.all(|r| r.wrong.is_some()))
    };
    let (oop, ip) = (
        checked(Placement::OutOfPlace)?,
        checked(Placement::InPlace)?,
    );
    let unchecked_in_place = rows
        .iter()
        .filter(|r| r.placement == Placement::InPlace)
        .all(|r| r.wrong.is_none());
    match (oop, ip) {
        (true, true) => Some(Evidence {
            fits: Collective::ALL
                .iter()
                .map(|c| c.name())
                .filter(|n| !matches!(*n, "sendrecv" | "alltoall"))
                .collect(),
            why: "#wrong checked in place".into(),
        }),
        (true, false) if unchecked_in_place => Some(Evidence {
            fits: set(&["sendrecv", "alltoall"]),
            why: "in-place #wrong N/A beside a checked out-of-place one".into(),
        }),
        _ => None,
    }
}

/// busbw / algbw against the rank count, over the rows printed with three significant digits.
fn from_ratio(rows: &[&InputRow], nranks: Option<usize>) -> Option<Evidence> {
    let n = nranks.filter(|&n| n >= 2)?;
    let ratios: Vec<f64> = rows
        .iter()
        .filter(|r| r.algbw_gbs >= 1.0 && r.busbw_gbs.is_finite())
        .map(|r| r.busbw_gbs / r.algbw_gbs)
        .filter(|f| f.is_finite() && *f > 0.0)
        .collect();
    let ratio = median(ratios)?;
    let fits = Collective::ALL
        .iter()
        .filter(|c| (c.busbw_factor(n) / ratio - 1.0).abs() <= RATIO_TOLERANCE)
        .map(|c| c.name())
        .collect();
    let label = [
        (2.0 * (n as f64 - 1.0) / n as f64, "2(n-1)/n"),
        ((n as f64 - 1.0) / n as f64, "(n-1)/n"),
        (1.0, "1"),
    ]
    .into_iter()
    .find(|(f, _)| (f / ratio - 1.0).abs() <= RATIO_TOLERANCE)
    .map_or_else(
        || "no collective's factor".to_string(),
        |(_, l)| l.to_string(),
    );
    Some(Evidence {
        fits,
        why: format!("busbw/algbw {ratio:.3} = {label} at {n} ranks"),
    })
}

/// `*_perf` programs named near the table.
fn from_programs(programs: &BTreeSet<String>) -> Option<Evidence> {
    if programs.is_empty() {
        return None;
    }
    let fits = Collective::ALL
        .iter()
        .map(|c| c.name())
        .filter(|n| programs.contains(*n))
        .collect();
    let names: Vec<String> = programs.iter().map(|p| format!("{p}_perf")).collect();
    Some(Evidence {
        fits,
        why: format!("program {} named in the file", names.join(", ")),
    })
}

/// Infers the collective of `table` from its rows (`rows`, both placements) and the programs
/// named near it.
fn infer(
    file: &str,
    table: &TableInfo,
    rows: &[&InputRow],
    programs: &BTreeSet<String>,
) -> Inference {
    let evidence: Vec<Evidence> = [
        from_columns(table.columns, rows),
        from_in_place_check(table.columns, rows),
        from_ratio(rows, table.nranks),
        from_programs(programs),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut left: BTreeSet<&str> = Collective::ALL.iter().map(|c| c.name()).collect();
    for e in &evidence {
        left = left.intersection(&e.fits).copied().collect();
    }
    let whys: Vec<&str> = evidence.iter().map(|e| e.why.as_str()).collect();
    let (collective, basis) = match left.len() {
        1 => {
            let name = left.iter().next().map(|s| s.to_string());
            (name, format!("inferred from {}", whys.join("; ")))
        }
        0 => (
            None,
            format!("unknown: the evidence disagrees ({})", whys.join("; ")),
        ),
        _ => (
            None,
            format!(
                "unknown: {} all fit ({})",
                left.into_iter().collect::<Vec<_>>().join(", "),
                whys.join("; ")
            ),
        ),
    };
    Inference {
        source: SourceRef {
            file: file.to_string(),
            line: table.line,
        },
        collective,
        basis,
    }
}

/// The collective a program token names (`./build/all_reduce_perf`, `alltoall_perf_mpi`).
fn program_of(token: &str) -> Option<&'static str> {
    let base = token.rsplit(['/', '\\']).next()?;
    let base = base.strip_suffix("_mpi").unwrap_or(base);
    let base = base.strip_suffix("_perf")?;
    Collective::parse(base).map(|c| c.name())
}
