//! From the plugin's names and sizes to ncclbench's: the operation a function name stands for,
//! the timing source, and the size in nccl-tests' convention.
//!
//! The plugin records `coll_msg_size_bytes` as the datatype size times the `count` NCCL's
//! profiler interface reports for the call, which is the count the user passed: the whole
//! buffer for AllReduce, Broadcast and Reduce, but one rank's part for AllGather (the send
//! count) and ReduceScatter (the receive count). Its bandwidth uses a traffic size per
//! function: the message size for AllReduce, Broadcast, Reduce and point-to-point, the message
//! size times the rank count for AllGather, AllGatherV and ReduceScatter, and zero (so both
//! bandwidths are written as 0) for every other function, AllToAll included. That traffic size
//! is exactly nccl-tests' size column for the same call (nccl-tests' all_gather and
//! reduce_scatter sizes are the whole gathered or scattered buffer), so the rule is:
//!
//! 1. When the record carries a positive algorithm bandwidth and time, the size the plugin
//!    used is `algbw * time`; if that is the written size or the written size times the rank
//!    count (within 1%: bandwidths are printed with six decimals), that decides the rule. An
//!    AllReduce record of 17179869184 bytes in 61974 us at 277.21 GB/s gives the written size;
//!    a ReduceScatter of 2147483648 bytes in 41057 us at 418.44 GB/s on 8 ranks, eight times it.
//! 2. Otherwise the function's rule above decides (Prometheus records have no algorithm
//!    bandwidth, and their size bucket is of the written size, so both bucket ends scale).
//! 3. Otherwise (AllToAll, Gather, Scatter, unknown names) the size is kept as written and
//!    marked [`SizeRule::Unknown`].

use crate::analysis::inspector::record::{Op, Size, SizeRule, Timing};
use crate::analysis::inspector::Arena;
use crate::core::collective::Collective;

/// The operation a collective function name (`coll`, Prometheus `collective`) stands for.
/// NCCL writes `All2All` for AllToAll; `AllToAll` is taken too. Other names are kept in
/// `arena`.
pub(super) fn collective_op<'a>(name: &str, arena: &'a Arena) -> Op<'a> {
    let c = match name {
        "AllReduce" => Collective::AllReduce,
        "AllGather" => Collective::AllGather,
        "ReduceScatter" => Collective::ReduceScatter,
        "Broadcast" => Collective::Broadcast,
        "Reduce" => Collective::Reduce,
        "All2All" | "AllToAll" => Collective::AllToAll,
        "Gather" => Collective::Gather,
        "Scatter" => Collective::Scatter,
        other => return Op::Other(arena.name(other)),
    };
    Op::Collective(c)
}

/// The operation a point-to-point function name (`p2p`, Prometheus `p2p_operation`) stands
/// for; names other than Send and Recv (NCCL also has SendRecv) are kept as written.
pub(super) fn p2p_op<'a>(name: &str, peer: Option<u32>, arena: &'a Arena) -> Op<'a> {
    match name {
        "Send" => Op::Send { peer },
        "Recv" => Op::Recv { peer },
        other => Op::Other(arena.name(other)),
    }
}

/// `op` (a point-to-point operation, as [`p2p_op`] gives it) with `peer` as its peer:
/// `p2p_op(name, peer)` is `with_peer(&p2p_op(name, p), peer)` for any `p`.
pub(super) fn with_peer<'a>(op: &Op<'a>, peer: Option<u32>) -> Op<'a> {
    match op {
        Op::Send { .. } => Op::Send { peer },
        Op::Recv { .. } => Op::Recv { peer },
        other => *other,
    }
}

/// The timing source a `coll_timing_source` value names.
pub(super) fn timing<'a>(name: &str, arena: &'a Arena) -> Timing<'a> {
    match name {
        "kernel_gpu" => Timing::KernelGpu,
        "kernel_cpu" => Timing::KernelCpu,
        "collective_cpu" => Timing::CollectiveCpu,
        other => Timing::Other(arena.name(other)),
    }
}

/// The rule the function's bandwidth formula in the plugin implies (step 2 of the module doc).
fn function_rule(op: &Op) -> SizeRule {
    match op {
        Op::Collective(Collective::AllReduce | Collective::Broadcast | Collective::Reduce) => {
            SizeRule::AsWritten
        }
        Op::Collective(Collective::AllGather | Collective::ReduceScatter) => SizeRule::TimesRanks,
        Op::Other(name) if **name == "AllGatherV" => SizeRule::TimesRanks,
        Op::Send { .. } | Op::Recv { .. } => SizeRule::AsWritten,
        Op::Other(name) if **name == "SendRecv" => SizeRule::AsWritten,
        _ => SizeRule::Unknown,
    }
}

/// The rule the record's own bandwidth shows (step 1), if it shows one.
fn evidence_rule(raw: u64, nranks: u32, time_us: f64, algbw_gbs: Option<f64>) -> Option<SizeRule> {
    let algbw = algbw_gbs.filter(|b| b.is_finite() && *b > 0.0)?;
    if !(time_us.is_finite() && time_us > 0.0) || raw == 0 {
        return None;
    }
    // GB/s times microseconds is kilobytes.
    let traffic = algbw * time_us * 1e3;
    let near = |want: f64| (traffic - want).abs() <= 0.01 * want;
    if near(raw as f64) {
        Some(SizeRule::AsWritten)
    } else if near(raw as f64 * f64::from(nranks)) {
        Some(SizeRule::TimesRanks)
    } else {
        None
    }
}

/// The rule for a record (the module doc's three steps).
pub(super) fn size_rule(
    op: &Op,
    raw: u64,
    nranks: u32,
    time_us: f64,
    algbw_gbs: Option<f64>,
) -> SizeRule {
    evidence_rule(raw, nranks, time_us, algbw_gbs).unwrap_or_else(|| function_rule(op))
}

/// The rule for a Prometheus record (no algorithm bandwidth is written there).
pub(super) fn bucket_rule(op: &Op) -> SizeRule {
    function_rule(op)
}

/// `raw` under `rule`, or `None` when the product overflows (a record no job can have
/// written: it is skipped, not wrapped).
pub(super) fn apply(rule: SizeRule, raw: Size, nranks: u32) -> Option<Size> {
    let n = u64::from(nranks);
    match (rule, raw) {
        (SizeRule::TimesRanks, Size::Exact(b)) => b.checked_mul(n).map(Size::Exact),
        (SizeRule::TimesRanks, Size::Bucket { lo, hi }) => Some(Size::Bucket {
            lo: lo.checked_mul(n)?,
            hi: hi.checked_mul(n)?,
        }),
        _ => Some(raw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local!(static ARENA: &'static Arena = Box::leak(Box::default()));

    fn collective_op(name: &str) -> Op<'static> {
        super::collective_op(name, ARENA.with(|a| *a))
    }

    fn p2p_op(name: &str, peer: Option<u32>) -> Op<'static> {
        super::p2p_op(name, peer, ARENA.with(|a| *a))
    }

    fn timing(name: &str) -> Timing<'static> {
        super::timing(name, ARENA.with(|a| *a))
    }

    #[test]
    fn published_example_records_decide_their_rules_by_their_own_bandwidth() {
        let ar = collective_op("AllReduce");
        let rs = collective_op("ReduceScatter");
        assert_eq!(
            size_rule(&ar, 17179869184, 8, 61974.0, Some(277.210914)),
            SizeRule::AsWritten
        );
        assert_eq!(
            size_rule(&rs, 2147483648, 8, 41057.0, Some(418.439467)),
            SizeRule::TimesRanks
        );
        // A record whose bandwidth contradicts its function's formula follows the bandwidth.
        assert_eq!(
            size_rule(&ar, 1000, 4, 1.0, Some(4.0)),
            SizeRule::TimesRanks
        );
        // AllToAll's zero bandwidth says nothing; no formula either.
        let a2a = collective_op("All2All");
        assert_eq!(a2a, Op::Collective(Collective::AllToAll));
        assert_eq!(size_rule(&a2a, 8192, 8, 10.0, Some(0.0)), SizeRule::Unknown);
        // A bandwidth matching neither falls back to the formula.
        assert_eq!(
            size_rule(&rs, 1000, 8, 1.0, Some(3.0)),
            SizeRule::TimesRanks
        );
        assert_eq!(
            size_rule(&Op::Send { peer: Some(1) }, 1 << 20, 2, 0.0, None),
            SizeRule::AsWritten
        );
        assert_eq!(
            size_rule(&collective_op("AllGatherV"), 4096, 2, 0.0, None),
            SizeRule::TimesRanks
        );
    }

    #[test]
    fn a_point_to_point_operation_takes_any_peer_as_its_name_would() {
        for name in ["Send", "Recv", "SendRecv", "send"] {
            for (first, peer) in [(None, Some(3)), (Some(1), None), (Some(2), Some(2))] {
                assert_eq!(with_peer(&p2p_op(name, first), peer), p2p_op(name, peer));
            }
        }
    }

    #[test]
    fn sizes_scale_by_the_rule_and_never_wrap() {
        let b = Size::Bucket { lo: 10, hi: 20 };
        assert_eq!(
            apply(SizeRule::TimesRanks, b, 4),
            Some(Size::Bucket { lo: 40, hi: 80 })
        );
        assert_eq!(apply(SizeRule::Unknown, b, 4), Some(b));
        assert_eq!(
            apply(SizeRule::AsWritten, Size::Exact(7), 4),
            Some(Size::Exact(7))
        );
        assert_eq!(apply(SizeRule::TimesRanks, Size::Exact(u64::MAX), 2), None);
        assert_eq!(timing("kernel_gpu"), Timing::KernelGpu);
        assert_eq!(timing("unknown"), Timing::Other(&"unknown".into()));
        assert_eq!(p2p_op("SendRecv", None), Op::Other(&"SendRecv".into()));
    }
}
