//! NCCL's per-call decisions printed into the table itself: nccl-tests run with
//! `NCCL_DEBUG=INFO` (and the TUNING subsystem) writes NCCL's lines to the same stdout as the
//! table, so a row's calls print their decision lines between its first fields and its last.
//! nccl-tests prints a row's size, count, type, op and root before timing it, its out-of-place
//! fields after the out-of-place calls and its in-place fields after the in-place calls; a
//! decision line that arrives while a row is open belongs to the placement whose fields have
//! not been printed yet. Warm-up calls run before the row opens and annotate nothing.
//!
//! The lines are parsed by the log parser ([`crate::logs::LineParser`]); a decision joins a
//! row when its collective is the table's (any, while the table's is unknown) and its bytes
//! are the row's size (nccl-tests prints the total for all_gather and reduce_scatter, as NCCL
//! does before 2.24; from 2.24 NCCL prints their per-rank size, the row's size divided by the
//! rank count). Only the communicator's rank 0 prints decisions.
//! A placement's distinct decisions are listed as `--tuning` output lists them: aligned
//! values joined by `|`.

use crate::analysis::input::Tuning;
use crate::logs::{Decision, Event, Func, LineParser, NcclVersion};
use crate::result::tuning::Tuning as Calls;

/// The log parser over the file's lines and what it has learned.
#[derive(Default)]
pub(super) struct Inline {
    parser: LineParser,
    version: Option<NcclVersion>,
}

/// The row a decision may join.
pub(super) struct OpenRow<'a> {
    pub collective: Option<&'a str>,
    pub nranks: Option<usize>,
    pub bytes: u64,
}

/// The decisions found for one row's two placements.
#[derive(Default)]
pub(super) struct RowDecisions {
    placements: [Calls; 2],
}

impl RowDecisions {
    /// The annotation of placement `i` (0 out of place, 1 in place), when it got decisions.
    pub fn tuning(&self, i: usize) -> Option<Tuning> {
        let calls = &self.placements[i];
        if calls.decisions.is_empty() {
            return None;
        }
        let model = match calls.decisions.as_slice() {
            [one] => one.model_time_us,
            _ => None,
        };
        Some(Tuning {
            algo: calls.algo_text(),
            proto: calls.proto_text(),
            channels: calls.channels_text(),
            model_time_us: model,
        })
    }
}

impl Inline {
    /// Parses one physical line; each decision it holds that fits `row` is added to
    /// `found[placement]`, where `placement(...)` says which placement is still open.
    pub fn line(
        &mut self,
        raw: &str,
        row: Option<(OpenRow<'_>, usize)>,
        found: Option<&mut RowDecisions>,
    ) {
        if !raw.contains("NCCL") {
            return;
        }
        let mut decisions = Vec::new();
        let version = &mut self.version;
        self.parser.line(raw.as_bytes(), &mut |r| match r.event {
            Event::Version {
                version: Some(v), ..
            } => *version = Some(v),
            Event::Decision(d) if d.rank.is_none_or(|r| r == 0) => decisions.push(d),
            _ => {}
        });
        let (Some((row, placement)), Some(found)) = (row, found) else {
            return;
        };
        for d in decisions.iter().filter(|d| fits(d, &row, self.version)) {
            found.placements[placement.min(1)].add(d.annotation());
        }
    }
}

/// Whether decision `d` can be one of `row`'s calls.
fn fits(d: &Decision, row: &OpenRow<'_>, version: Option<NcclVersion>) -> bool {
    let name = d.collective.and_then(collective_of);
    if let (Some(table), Some(name)) = (row.collective, name) {
        if table != name {
            return false;
        }
    }
    let split = matches!(d.collective, Some(Func::AllGather | Func::ReduceScatter));
    let per_rank = row
        .nranks
        .and_then(|n| d.bytes.checked_mul(n as u64))
        .is_some_and(|b| b == row.bytes);
    match version {
        _ if !split => d.bytes == row.bytes,
        Some(v) if (v.major, v.minor) >= (2, 24) => per_rank,
        Some(_) => d.bytes == row.bytes,
        None => d.bytes == row.bytes || per_rank,
    }
}

/// Our collective name of an NCCL function (grouped send/recv have no table of their own).
fn collective_of(f: Func) -> Option<&'static str> {
    Some(match f {
        Func::AllReduce => "all_reduce",
        Func::AllGather => "all_gather",
        Func::ReduceScatter => "reduce_scatter",
        Func::Broadcast => "broadcast",
        Func::Reduce => "reduce",
        Func::AlltoAll => "alltoall",
        Func::Gather => "gather",
        Func::Scatter => "scatter",
        Func::SendRecv => "sendrecv",
        _ => return None,
    })
}
