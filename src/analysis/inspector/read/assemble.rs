//! A record put together from its parts: the operation, the timing source and the source
//! that [`json::build`](super::json::build) reads from an object, or that the records read
//! along one shape share ([`Shared`]), and the perf section's numbers, which are each
//! record's own. Both paths end here, so a record read along a shape is built by the same
//! code as one read field by field.

use super::convention::{apply, size_rule, with_peer};
use super::json::{Parsed, Perf};
use super::tally::Tally;
use crate::analysis::inspector::record::{Op, Parts, Record, Size, SizeRule, Source, Timing};
use crate::analysis::inspector::Arena;

/// What the records read along one shape share: all but the numbers of their perf section.
#[derive(Debug, Clone)]
pub(super) struct Shared<'a> {
    pub(super) source: &'a Source,
    /// The section is `p2p_perf`.
    pub(super) p2p: bool,
    /// The operation the function name stands for (a send or receive's peer is each record's).
    pub(super) op: Op<'a>,
    /// The first record read along the shape: the others are it with their own numbers.
    pub(super) first: Record<'a>,
}

/// Adds to `tally` the record of a perf section whose fields but the numbers are those of
/// `shared`'s records (what [`build`](super::json::build) gives for it), or gives why there
/// is none (a [`Parsed::Skip`]'s reason): the fast path's, for a record read along a shape
/// (which never carries a verbose trace).
pub(super) fn along<'a>(
    shared: &Shared<'a>,
    perf: &Perf<'_>,
    dump_ts: Option<u64>,
    tally: &mut Tally<'a>,
) -> Result<(), String> {
    let op = if shared.p2p {
        with_peer(&shared.op, perf.p2p_peer)
    } else {
        shared.op
    };
    let n = numbers(&op, perf, shared.p2p, shared.source.nranks)?;
    let (Size::Exact(size) | Size::Bucket { lo: size, .. }) = n.size;
    tally.record_with(shared.source, || {
        shared.first.with_numbers(
            perf.p2p_peer,
            size,
            n.rule,
            perf.coll_sn,
            n.time_us,
            perf.coll_busbw_gbs,
            dump_ts,
        )
    });
    Ok(())
}

/// The section's and its fields' prefix in reasons.
pub(super) fn names(p2p: bool) -> (&'static str, &'static str) {
    if p2p {
        ("p2p_perf", "p2p")
    } else {
        ("coll_perf", "coll")
    }
}

/// What a record takes from its perf section's numbers but as written.
struct Numbers {
    time_us: f64,
    rule: SizeRule,
    size: Size,
}

/// The numbers of a record of `op` with `nranks` ranks, or why there is none.
fn numbers(op: &Op<'_>, perf: &Perf<'_>, p2p: bool, nranks: u32) -> Result<Numbers, String> {
    let missing = |what: &str| {
        let (section, prefix) = names(p2p);
        format!("missing {section}.{prefix}_{what}")
    };
    let bytes = perf
        .coll_msg_size_bytes
        .ok_or_else(|| missing("msg_size_bytes"))?;
    let time_us = perf
        .coll_exec_time_us
        .ok_or_else(|| missing("exec_time_us"))?;
    let rule = size_rule(op, bytes, nranks, time_us, perf.coll_algobw_gbs);
    let size = apply(rule, Size::Exact(bytes), nranks)
        .ok_or_else(|| format!("{bytes} bytes times {nranks} ranks overflows"))?;
    Ok(Numbers {
        time_us,
        rule,
        size,
    })
}

/// What a record of `op` takes from its perf section and `n`.
fn parts<'a>(
    source: &'a Source,
    op: Op<'a>,
    timing: Option<Timing<'a>>,
    perf: &Perf<'_>,
    n: Numbers,
    dump_ts: Option<u64>,
) -> Parts<'a> {
    let trace_start = perf.event_trace_ts.as_ref().and_then(|t| t.coll_start_ts);
    Parts {
        source,
        op,
        seq: perf.coll_sn,
        size: n.size,
        size_rule: n.rule,
        time_us: n.time_us,
        timing,
        busbw_gbs: perf.coll_busbw_gbs,
        timestamp_us: trace_start.or(dump_ts),
    }
}

/// The record of `op` from the perf section's numbers, or why there is none.
#[allow(clippy::too_many_arguments)]
pub(super) fn assemble<'a>(
    op: Op<'a>,
    timing: Option<Timing<'a>>,
    perf: &Perf<'_>,
    p2p: bool,
    dump_ts: Option<u64>,
    nranks: u32,
    source: impl FnOnce() -> &'a Source,
    arena: &'a Arena,
) -> Parsed<'a> {
    let n = match numbers(&op, perf, p2p, nranks) {
        Ok(n) => n,
        Err(reason) => return Parsed::Skip(reason),
    };
    let verbose = perf.event_trace_sn.is_some() || perf.event_trace_ts.is_some();
    let parts = parts(source(), op, timing, perf, n, dump_ts);
    Parsed::Record(Record::new(parts, arena), verbose)
}
