//! The `--tuning` parts of the JSON document: NCCL's decision fields in each placement object
//! (`algo`, `proto`, `channels`, `nccl_model_time_us`, `decision`, and `decisions` listing
//! every distinct one with its call count), and the join report in the `ncclbench` object.

use super::value::J;
use crate::result::tuning::{Tuning, TuningReport};

/// A text field, `null` when empty.
fn text(s: String) -> J {
    if s.is_empty() {
        J::Null
    } else {
        J::Str(s)
    }
}

/// The fields added to a placement object.
pub(crate) fn placement_fields(t: &Tuning) -> Vec<(&'static str, J)> {
    let decisions = t
        .decisions
        .iter()
        .map(|d| {
            J::Obj(vec![
                ("algo", text(d.algo.clone())),
                ("proto", text(d.proto.clone())),
                ("channels", text(d.channels_text())),
                (
                    "nccl_model_time_us",
                    d.model_time_us.map_or(J::Null, J::Num),
                ),
                ("calls", J::uint(d.calls)),
            ])
        })
        .collect();
    let model = match t.decisions.as_slice() {
        [d] => d.model_time_us.map_or(J::Null, J::Num),
        _ => text(t.model_time_text()),
    };
    vec![
        ("algo", text(t.algo_text())),
        ("proto", text(t.proto_text())),
        ("channels", text(t.channels_text())),
        ("nccl_model_time_us", model),
        ("decision", text(t.kind().to_string())),
        ("decisions", J::Arr(decisions)),
        ("calls", J::uint(t.calls)),
        ("calls_without_decision", J::uint(t.unmatched_calls)),
    ]
}

/// The join report.
pub(crate) fn report(r: &TuningReport) -> J {
    J::Obj(vec![
        ("log", J::str(&r.log)),
        (
            "nccl_version",
            r.nccl_version.clone().map_or(J::Null, J::Str),
        ),
        ("calls", J::uint(r.calls)),
        ("decision_lines", J::uint(r.decisions)),
        ("joined", J::uint(r.joined)),
        ("coll_lines_matched", J::uint(r.coll_matched)),
        ("coll_lines_mismatched", J::uint(r.coll_mismatched)),
        ("op_count", text(r.op_count.clone())),
        ("notes", J::Arr(r.notes.iter().map(J::str).collect())),
    ])
}
