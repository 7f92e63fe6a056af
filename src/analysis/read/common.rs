//! Helpers every reader shares: number and name parsing as the result files spell them,
//! structural errors naming file and line, and the `-N` cycle numbering of formats that do not
//! carry it.

use crate::analysis::input::{InputRow, Tuning};
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::error::Error;
use std::collections::HashMap;

/// A structural error: `NAME:LINE: what`.
pub(crate) fn fail(name: &str, line: usize, what: impl std::fmt::Display) -> Error {
    Error::usage(format!("{name}:{line}: {what}"))
}

/// A number as nccl-tests and our writers print it: decimal, exponent form, or the
/// `nan`/`-nan`/`inf` spellings of printf and Rust.
pub(crate) fn num(text: &str) -> Option<f64> {
    let t = text.trim();
    // Rust accepts "infinity" and friends too; refuse hex and empty strings.
    if t.is_empty() || t.contains(['x', 'X']) {
        return None;
    }
    t.parse().ok()
}

/// A non-negative integer (sizes, counts).
pub(crate) fn uint(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// A signed integer (roots, cycles).
pub(crate) fn int(text: &str) -> Option<i64> {
    text.trim().parse().ok()
}

/// True when `text` names an nccl-tests element type.
pub(crate) fn known_dtype(text: &str) -> bool {
    DataType::parse(text).is_some()
}

/// The collective named by a program or collective name: `./build/all_reduce_perf`,
/// `broadcast_perf_mpi` and `all_reduce` all give `all_reduce`-style names. Names outside our
/// collective table (`alltoallv`) are kept, stripped of directory and suffixes.
pub(crate) fn collective_name(text: &str) -> Option<String> {
    let base = text.trim().rsplit(['/', '\\']).next().unwrap_or("");
    let base = base.strip_suffix("_mpi").unwrap_or(base);
    let base = base.strip_suffix("_perf").unwrap_or(base);
    if base.is_empty() {
        return None;
    }
    Some(match Collective::parse(base) {
        Some(c) => c.name().to_string(),
        None => base.to_string(),
    })
}

/// [`tuning`] with NCCL's model time (`nccl_model_time_us`), when given and a number.
pub(crate) fn tuning_with_model(
    algo: &str,
    proto: &str,
    channels: &str,
    model: &str,
) -> Option<Tuning> {
    let mut t = tuning(algo, proto, channels)?;
    t.model_time_us = model
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0);
    Some(t)
}

/// Tuning annotations, when any of the three is non-empty.
pub(crate) fn tuning(algo: &str, proto: &str, channels: &str) -> Option<Tuning> {
    if algo.is_empty() && proto.is_empty() && channels.is_empty() {
        return None;
    }
    Some(Tuning {
        algo: algo.to_string(),
        proto: proto.to_string(),
        channels: channels.to_string(),
        model_time_us: None,
    })
}

/// Numbers the `-N` cycles of rows whose format does not say: within each group (a table of a
/// run), rows of one (dtype, op, root, placement) form a sequence, and a size smaller than the
/// previous one starts the next cycle. An equal size starts one only when every row of the
/// sequence has that size (a one-size sweep); otherwise it is a repeat produced by rounding
/// (`-b 1` of `float` prints size 0 twice) and stays in the cycle.
pub(crate) fn assign_cycles(rows: &mut [InputRow], groups: &[usize]) {
    type Key<'a> = (usize, &'a str, &'a str, i64, &'static str);
    let mut sequences: HashMap<Key, Vec<usize>> = HashMap::new();
    for (i, (row, group)) in rows.iter().zip(groups).enumerate() {
        let key = (
            *group,
            row.dtype.as_str(),
            row.op.as_str(),
            row.root,
            row.placement.name(),
        );
        sequences.entry(key).or_default().push(i);
    }
    let mut cycles = vec![0u32; rows.len()];
    for indices in sequences.values() {
        let first = rows[indices[0]].bytes;
        let one_size = indices.iter().all(|&i| rows[i].bytes == first);
        let mut cycle = 0u32;
        for pair in indices.windows(2) {
            let (prev, cur) = (rows[pair[0]].bytes, rows[pair[1]].bytes);
            if cur < prev || (cur == prev && one_size) {
                cycle = cycle.saturating_add(1);
            }
            cycles[pair[1]] = cycle;
        }
    }
    for (row, cycle) in rows.iter_mut().zip(cycles) {
        row.cycle = cycle;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::input::SourceRef;
    use crate::result::Placement;

    fn row(bytes: u64, dtype: &str) -> InputRow {
        InputRow {
            source: SourceRef {
                file: "t".into(),
                line: 1,
            },
            collective: None,
            dtype: dtype.into(),
            op: "sum".into(),
            root: -1,
            nranks: None,
            placement: Placement::OutOfPlace,
            cycle: 9,
            run: 0,
            bytes,
            count: 0,
            time_us: 1.0,
            algbw_gbs: 0.0,
            busbw_gbs: 0.0,
            wrong: None,
            tuning: None,
        }
    }

    fn cycles_of(sizes: &[(u64, &str)]) -> Vec<u32> {
        let mut rows: Vec<InputRow> = sizes.iter().map(|&(b, t)| row(b, t)).collect();
        let groups = vec![0; rows.len()];
        assign_cycles(&mut rows, &groups);
        rows.iter().map(|r| r.cycle).collect()
    }

    #[test]
    fn smaller_size_starts_a_cycle_per_type() {
        let c = cycles_of(&[
            (8, "float"),
            (16, "float"),
            (8, "half"),
            (16, "half"),
            (8, "float"),
            (16, "float"),
            (8, "half"),
        ]);
        assert_eq!(c, vec![0, 0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn rounding_repeats_stay_but_one_size_sweeps_count() {
        assert_eq!(
            cycles_of(&[(0, "float"), (0, "float"), (4, "float"), (0, "float")]),
            vec![0, 0, 0, 1]
        );
        assert_eq!(
            cycles_of(&[(64, "float"), (64, "float"), (64, "float")]),
            vec![0, 1, 2]
        );
    }

    #[test]
    fn names_are_normalised() {
        assert_eq!(
            collective_name("./build/all_reduce_perf").as_deref(),
            Some("all_reduce")
        );
        assert_eq!(
            collective_name("broadcast_perf_mpi").as_deref(),
            Some("broadcast")
        );
        assert_eq!(
            collective_name("alltoallv_perf").as_deref(),
            Some("alltoallv")
        );
        assert_eq!(collective_name(" "), None);
        assert_eq!(num("-nan").map(f64::is_nan), Some(true));
        assert_eq!(num("1e+06"), Some(1e6));
        assert_eq!(num("0x10"), None);
        assert_eq!(num("N/A"), None);
    }
}
