//! `--per-group` in the JSON document: each `results` entry gains `groups` (per split group its
//! colour, rank count and both placements' figures, keyed as the entry's own), and the
//! `ncclbench` object gains `groups` (per colour its job-wide ranks and hosts). Neither key is
//! written without the flag, so nccl-tests' layout is unchanged for its readers.

use super::value::J;
use crate::result::{GroupInfo, GroupMeasurement, Row};

/// One placement's figures, with nccl-tests' measurement keys.
fn figures(g: &GroupMeasurement) -> J {
    J::Obj(vec![
        ("time", J::Num(g.time_us)),
        ("alg_bw", J::Num(g.algbw_gbs)),
        ("bus_bw", J::Num(g.busbw_gbs)),
        ("nwrong", g.wrong.map_or(J::Null, |w| J::Num(w as f64))),
    ])
}

/// The `groups` of a `results` entry, or `None` when the row has none.
pub(super) fn result_groups(row: &Row) -> Option<J> {
    if row.out_of_place.groups.is_empty() {
        return None;
    }
    let entries = row
        .out_of_place
        .groups
        .iter()
        .map(|g| {
            let ip = row.in_place.groups.iter().find(|i| i.group == g.group);
            J::Obj(vec![
                ("group", J::uint(g.group as u64)),
                ("nranks", J::uint(g.nranks as u64)),
                ("out_of_place", figures(g)),
                ("in_place", ip.map_or(J::Null, figures)),
            ])
        })
        .collect();
    Some(J::Arr(entries))
}

/// The `groups` of the `ncclbench` object, or `None` without `--per-group`.
pub(super) fn membership(groups: &[GroupInfo]) -> Option<J> {
    if groups.is_empty() {
        return None;
    }
    let entries = groups
        .iter()
        .map(|g| {
            J::Obj(vec![
                ("group", J::uint(g.group as u64)),
                (
                    "ranks",
                    J::Arr(g.ranks.iter().map(|&r| J::uint(r as u64)).collect()),
                ),
                ("hosts", J::Arr(g.hosts.iter().map(J::str).collect())),
            ])
        })
        .collect();
    Some(J::Arr(entries))
}
