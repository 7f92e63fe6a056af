//! `ncclbench accept --make-profile RUN`: an acceptance profile from a healthy run's results.
//!
//! Per collective the run measured, out-of-place rows are used, of one dtype (`float` when
//! the run has it, else the most common one), op `sum` (or `none`/empty for collectives
//! without an op) and root 0 or -1; 0-byte rows (divided collectives at tiny sizes) are left
//! out, since a sweep cannot start at 0. Each size's busbw and time is the median over all its
//! samples (cycles, runs, files). Then:
//! * `[[busbw]]`: the plateau is the 3 largest sizes (fewer if fewer); `min_bytes` is the
//!   smallest of them and `min_gbs` the median of their medians less the margin, rounded down
//!   to 3 significant digits;
//! * `[[latency]]`: the 3 smallest sizes; `max_bytes` is the largest of them and `max_us` the
//!   median of their medians plus the margin, rounded up to 3 significant digits.
//!
//! The result parses back with [`super::profile::parse`] into exactly those numbers.

use crate::analysis::input::InputRow;
use crate::analysis::read::read_files;
use crate::core::collective::Collective;
use crate::core::error::Error;
use crate::result::Placement;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

mod curve;
mod text;

#[cfg(test)]
mod tests;

use curve::Curve;
use text::{quoted, size_text};

/// How many sizes make the plateau and the latency range.
const SIZES: usize = 3;

/// One collective's usable rows, keyed by the collective's place in [`Collective::ALL`] so
/// that the profile lists them in table order.
type ByCollective<'a> = BTreeMap<usize, (Collective, Vec<&'a InputRow>)>;

/// A profile (TOML text) from a healthy run's result files (any format `read_files` reads).
pub fn make_profile(paths: &[PathBuf], name: &str, margin_pct: f64) -> Result<String, Error> {
    check_request(paths, name, margin_pct)?;
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let shown = shown.join(", ");
    let set = read_files(paths)?;
    // Thresholds come only from tables that name their collective: one that `analyze` infers
    // from the table's evidence is left out here like an unnamed one.
    let inferred: std::collections::BTreeSet<(&str, &str)> = set
        .inferred
        .iter()
        .filter_map(|i| Some((i.source.file.as_str(), i.collective.as_deref()?)))
        .collect();
    let named: Vec<InputRow> = set
        .rows
        .iter()
        .filter(|r| r.placement == Placement::OutOfPlace)
        .map(|r| {
            let mut r = r.clone();
            let guessed = r
                .collective
                .as_deref()
                .is_some_and(|c| inferred.contains(&(r.source.file.as_str(), c)));
            if guessed {
                r.collective = None;
            }
            r
        })
        .collect();
    let out_of_place: Vec<&InputRow> = named.iter().collect();
    let unnamed = out_of_place
        .iter()
        .filter(|r| r.collective.is_none())
        .count();
    let by_collective = by_collective(&out_of_place)?;
    if by_collective.is_empty() {
        return Err(nothing_usable(&shown, unnamed));
    }
    let curves: Vec<Curve> = by_collective
        .into_values()
        .map(|(collective, rows)| Curve::new(collective, &rows))
        .collect();
    let baseline = absolute(paths)?;

    let mut out = String::new();
    write_head(&mut out, &shown, margin_pct, unnamed, set.skipped.len());
    write_profile(&mut out, name, &shown, &curves);
    write_suite(&mut out, &curves);
    for curve in &curves {
        curve.write_checks(&mut out, margin_pct);
    }
    write_baseline(&mut out, &baseline);
    Ok(out)
}

/// Refuses a margin outside 0..100 %, an empty name and no input before any file is read.
fn check_request(paths: &[PathBuf], name: &str, margin_pct: f64) -> Result<(), Error> {
    if !(0.0..100.0).contains(&margin_pct) {
        return Err(Error::usage(format!(
            "profile margin must be at least 0 and below 100 percent, not {margin_pct}"
        )));
    }
    if name.trim().is_empty() {
        return Err(Error::usage("profile name is empty"));
    }
    if paths.is_empty() {
        return Err(Error::usage("no result files to make a profile from"));
    }
    Ok(())
}

/// The out-of-place rows a profile can be made from (op sum or none, root 0 or -1, above 0
/// bytes), per collective. A row naming no known collective is an error.
fn by_collective<'a>(out_of_place: &[&'a InputRow]) -> Result<ByCollective<'a>, Error> {
    let mut by_collective = ByCollective::new();
    for row in out_of_place.iter().copied() {
        let Some(name) = &row.collective else {
            continue;
        };
        let Some(collective) = Collective::parse(name) else {
            return Err(Error::usage(format!(
                "{}:{}: unknown collective '{name}'",
                row.source.file, row.source.line
            )));
        };
        let usable_op = matches!(row.op.as_str(), "sum" | "none" | "");
        if usable_op && matches!(row.root, 0 | -1) && row.bytes > 0 {
            let order = Collective::ALL.iter().position(|c| *c == collective);
            by_collective
                .entry(order.unwrap_or(usize::MAX))
                .or_insert_with(|| (collective, Vec::new()))
                .1
                .push(row);
        }
    }
    Ok(by_collective)
}

/// The error for input without a usable row; it names the likely cause when rows lacked
/// their collective's name.
fn nothing_usable(shown: &str, unnamed: usize) -> Error {
    let why = if unnamed > 0 {
        " (the rows do not say which collective they measured: nccl-tests names it only \
         in a `# Collective test starting:` line; use ncclbench --csv or -J output)"
    } else {
        ""
    };
    Error::usage(format!(
        "{shown}: no out-of-place rows above 0 bytes with op sum (or none) at root 0 or -1 to make a profile from{why}"
    ))
}

/// The input paths made absolute, so that the profile's baseline still finds them when it
/// is read from another directory.
fn absolute(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    paths
        .iter()
        .map(|p| {
            std::path::absolute(p)
                .map_err(|e| Error::usage(format!("{}: cannot make absolute: {e}", p.display())))
        })
        .collect()
}

/// The comment block at the top: where the numbers come from, how they were made, and what
/// input was left out.
fn write_head(w: &mut String, shown: &str, margin_pct: f64, unnamed: usize, skipped: usize) {
    let _ = writeln!(
        w,
        "# Made by `ncclbench accept --make-profile` from a healthy run:"
    );
    let _ = writeln!(w, "#   {shown}");
    let _ = writeln!(
        w,
        "# busbw floors: median busbw of the {SIZES} largest sizes less {margin_pct}%, rounded down;"
    );
    let _ = writeln!(
        w,
        "# latency ceilings: median time of the {SIZES} smallest sizes plus {margin_pct}%, rounded up"
    );
    let _ = writeln!(
        w,
        "# (3 significant digits; per size the median over all samples of out-of-place rows)."
    );
    let _ = writeln!(
        w,
        "# These numbers describe that run, not a guarantee: review them before judging other runs."
    );
    if unnamed > 0 {
        let _ = writeln!(
            w,
            "# {unnamed} out-of-place rows were left out: their file does not name the collective."
        );
    }
    if skipped > 0 {
        let _ = writeln!(
            w,
            "# {skipped} lines of the input could not be read and were left out."
        );
    }
}

/// The `[profile]` table; `ranks` only when every used row ran on the same number of ranks.
fn write_profile(w: &mut String, name: &str, shown: &str, curves: &[Curve]) {
    let mut ranks = curves.iter().flat_map(|c| c.rows.iter()).map(|r| r.nranks);
    let first = ranks.next().flatten();
    let ranks = first.filter(|_| ranks.all(|n| n == first));
    let date = chrono::Local::now().format("%Y-%m-%d");
    let _ = writeln!(w, "\n[profile]");
    let _ = writeln!(w, "name = {}", quoted(name));
    let _ = writeln!(
        w,
        "description = {}",
        quoted(&format!("made from {shown} on {date}"))
    );
    let _ = writeln!(w, "typical = false");
    if let Some(n) = ranks {
        let _ = writeln!(w, "ranks = {n}");
    }
}

/// The `[suite]` table: the collectives measured, swept over the sizes the run measured.
fn write_suite(w: &mut String, curves: &[Curve]) {
    let sizes = || curves.iter().flat_map(|c| c.rows.iter()).map(|r| r.bytes);
    let (perf_min, perf_max) = (sizes().min().unwrap_or(1), sizes().max().unwrap_or(1));
    let _ = writeln!(w, "\n[suite]");
    let names: Vec<String> = curves.iter().map(|c| quoted(c.collective.name())).collect();
    let _ = writeln!(w, "collectives = [{}]", names.join(", "));
    let _ = writeln!(w, "perf_min_bytes = {}", size_text(perf_min));
    let _ = writeln!(w, "perf_max_bytes = {}", size_text(perf_max));
}

/// The `[baseline]` table: the run itself, so that later runs are also compared with it.
fn write_baseline(w: &mut String, baseline: &[PathBuf]) {
    let paths: Vec<String> = baseline
        .iter()
        .map(|p| quoted(&p.display().to_string()))
        .collect();
    let _ = writeln!(w, "\n[baseline]");
    let _ = writeln!(w, "paths = [{}]", paths.join(", "));
    let _ = writeln!(w, "threshold_pct = 5");
}
