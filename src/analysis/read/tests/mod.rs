//! Tests of the readers: real published outputs ([`fixtures`]), hand-written and
//! host-backend samples under `tests/data/analysis/` ([`samples`], [`json_csv`]), broken input
//! ([`malformed`]), CSV quoting and layout edge cases ([`csv_edges`]), streaming from files
//! larger than the sniffed head ([`stream`]) and random mutations of all of them ([`mutate`]).

mod csv_edges;
mod fixtures;
mod inference;
mod inline_decisions;
mod json_csv;
mod legacy_columns;
mod malformed;
mod mutate;
mod samples;
mod stream;

use crate::analysis::input::{InputRow, ReadSet};
use std::path::{Path, PathBuf};

/// A committed sample file.
fn sample_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/analysis")
        .join(name)
}

/// Reads a committed sample (it must parse).
fn sample(name: &str) -> ReadSet {
    match super::read_files(&[sample_path(name)]) {
        Ok(set) => set,
        Err(e) => panic!("{name}: {e}"),
    }
}

/// One row in a line: where, which curve, and the numbers.
fn brief(r: &InputRow) -> String {
    let wrong = r.wrong.map_or("-".to_string(), |w| w.to_string());
    let nranks = r.nranks.map_or("?".to_string(), |n| n.to_string());
    format!(
        "L{} run{} cyc{} {} {} {:?} root{} n{} {} {}B/{} t={} alg={} bus={} w={}",
        r.source.line,
        r.run,
        r.cycle,
        r.collective.as_deref().unwrap_or("?"),
        r.dtype,
        r.op,
        r.root,
        nranks,
        r.placement.name(),
        r.bytes,
        r.count,
        r.time_us,
        r.algbw_gbs,
        r.busbw_gbs,
        wrong
    )
}

/// Every row of a set, briefly.
fn briefs(set: &ReadSet) -> Vec<String> {
    set.rows.iter().map(brief).collect()
}

/// Every skipped entry as `LINE: reason`.
fn skips(set: &ReadSet) -> Vec<String> {
    set.skipped
        .iter()
        .map(|s| format!("{}: {}", s.source.line, s.reason))
        .collect()
}
