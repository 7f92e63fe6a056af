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
use crate::core::collective::Collective;

/// The collective a function name (`coll`, Prometheus `collective`) stands for, if it is one
/// ncclbench knows (other names are kept as written, [`Op::Other`]). NCCL writes `All2All` for
/// AllToAll; `AllToAll` is taken too.
pub(super) fn collective(name: &str) -> Option<Collective> {
    Some(match name {
        "AllReduce" => Collective::AllReduce,
        "AllGather" => Collective::AllGather,
        "ReduceScatter" => Collective::ReduceScatter,
        "Broadcast" => Collective::Broadcast,
        "Reduce" => Collective::Reduce,
        "All2All" | "AllToAll" => Collective::AllToAll,
        "Gather" => Collective::Gather,
        "Scatter" => Collective::Scatter,
        _ => return None,
    })
}

/// The operation a point-to-point function name (`p2p`, Prometheus `p2p_operation`) stands
/// for, if it is Send or Recv (NCCL also has SendRecv, kept as written).
pub(super) fn p2p(name: &str, peer: Option<u32>) -> Option<Op> {
    match name {
        "Send" => Some(Op::Send { peer }),
        "Recv" => Some(Op::Recv { peer }),
        _ => None,
    }
}

/// The timing source a `coll_timing_source` value names, if it is a known one.
pub(super) fn timing(name: &str) -> Option<Timing> {
    match name {
        "kernel_gpu" => Some(Timing::KernelGpu),
        "kernel_cpu" => Some(Timing::KernelCpu),
        "collective_cpu" => Some(Timing::CollectiveCpu),
        _ => None,
    }
}

/// The rule the function's bandwidth formula in the plugin implies (step 2 of the module doc).
fn function_rule(op: &Op) -> SizeRule {
    match op {
        Op::Collective(Collective::AllReduce | Collective::Broadcast | Collective::Reduce) => {
            SizeRule::AsWritten
        }
        Op::Collective(Collective::AllGather | Collective::ReduceScatter) => SizeRule::TimesRanks,
        Op::Other(name) if &**name == "AllGatherV" => SizeRule::TimesRanks,
        Op::Send { .. } | Op::Recv { .. } => SizeRule::AsWritten,
        Op::Other(name) if &**name == "SendRecv" => SizeRule::AsWritten,
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

    fn collective_op(name: &str) -> Op {
        collective(name).map_or_else(|| Op::Other(name.into()), Op::Collective)
    }

    fn p2p_op(name: &str, peer: Option<u32>) -> Op {
        p2p(name, peer).unwrap_or_else(|| Op::Other(name.into()))
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
        assert_eq!(timing("kernel_gpu"), Some(Timing::KernelGpu));
        assert_eq!(timing("unknown"), None);
        assert_eq!(p2p_op("SendRecv", None), Op::Other("SendRecv".into()));
    }
}
