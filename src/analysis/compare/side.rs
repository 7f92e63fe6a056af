//! One side of a comparison read and grouped: its rows by curve and size (only rows with a
//! positive finite time, the others counted as skipped), and its [`Side`] summary with the
//! setup the files record.

use super::headers::Facts;
use super::model::{CurveId, Setup, Side};
use crate::analysis::input::{InputRow, ReadSet};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Rows of one side: curve -> size -> rows.
pub type Grouped<'a> = BTreeMap<CurveId, BTreeMap<u64, Vec<&'a InputRow>>>;

/// The curve a row belongs to (unknown collective `unknown`, unknown rank count 0).
pub fn curve_of(row: &InputRow) -> CurveId {
    CurveId {
        collective: row.collective.clone().unwrap_or_else(|| "unknown".into()),
        dtype: row.dtype.clone(),
        op: row.op.clone(),
        root: row.root,
        nranks: row.nranks.unwrap_or(0),
        placement: row.placement.name().into(),
    }
}

/// True when a row's time can be compared (a ratio needs a positive time).
pub fn usable(row: &InputRow) -> bool {
    row.time_us.is_finite() && row.time_us > 0.0
}

/// The usable rows of `set`, grouped.
pub fn group(set: &ReadSet) -> Grouped<'_> {
    let mut g: Grouped = BTreeMap::new();
    for row in set.rows.iter().filter(|r| usable(r)) {
        g.entry(curve_of(row))
            .or_default()
            .entry(row.bytes)
            .or_default()
            .push(row);
    }
    g
}

/// The summary of a side: paths, counts, and the setup (rank counts, collectives and types
/// from the rows; the rest from the files' headers).
pub fn summary(paths: &[PathBuf], set: &ReadSet, facts: Facts) -> Side {
    let unusable = set.rows.iter().filter(|r| !usable(r)).count();
    let nranks: BTreeSet<usize> = set.rows.iter().filter_map(|r| r.nranks).collect();
    let collectives: BTreeSet<String> = set
        .rows
        .iter()
        .map(|r| r.collective.clone().unwrap_or_else(|| "unknown".into()))
        .collect();
    let dtypes: BTreeSet<String> = set.rows.iter().map(|r| r.dtype.clone()).collect();
    Side {
        files: paths.iter().map(|p| p.display().to_string()).collect(),
        rows_read: set.rows.len(),
        rows_skipped: set.skipped.len() + unusable,
        setup: Setup {
            nranks: nranks.into_iter().collect(),
            gpus: facts.gpus.into_iter().collect(),
            layouts: facts.layouts.into_iter().collect(),
            nccl_versions: facts.nccl_versions.into_iter().collect(),
            backends: facts.backends.into_iter().collect(),
            collectives: collectives.into_iter().collect(),
            dtypes: dtypes.into_iter().collect(),
        },
    }
}
