//! Legacy nccl-tests tables (2.11 and older), one per collective column set, written here from
//! those releases' format strings: every collective printed only its own columns before the
//! placements (`%12li  %12li  %8s`, then `  %6s` op and/or `  %6i` root), the body
//! `  %7s  %6.2f  %6.2f  %5.0le` (or `  %5s` of `N/A`) per placement, and a header naming the
//! same columns. alltoall's header names `redop` but its rows print an empty op.

use super::*;
use crate::analysis::read::read_str;

/// Which columns a legacy collective prints before the placements, and their row values.
pub(super) struct Legacy {
    pub program: &'static str,
    /// `Some(op)` when the header has `redop` (the op may be empty: alltoall).
    pub redop: Option<&'static str>,
    /// `Some(root)` when the header has `root`.
    pub root: Option<i64>,
    /// busbw / algbw of this collective at the file's rank count.
    pub factor: f64,
}

/// Every legacy column set at 8 ranks.
pub(super) const LEGACY: [Legacy; 9] = [
    Legacy {
        program: "all_reduce",
        redop: Some("sum"),
        root: None,
        factor: 1.75,
    },
    Legacy {
        program: "reduce_scatter",
        redop: Some("sum"),
        root: None,
        factor: 0.875,
    },
    Legacy {
        program: "alltoall",
        redop: Some(""),
        root: None,
        factor: 0.875,
    },
    Legacy {
        program: "all_gather",
        redop: None,
        root: None,
        factor: 0.875,
    },
    Legacy {
        program: "sendrecv",
        redop: None,
        root: None,
        factor: 1.0,
    },
    Legacy {
        program: "broadcast",
        redop: None,
        root: Some(0),
        factor: 1.0,
    },
    Legacy {
        program: "gather",
        redop: None,
        root: Some(0),
        factor: 0.875,
    },
    Legacy {
        program: "scatter",
        redop: None,
        root: Some(0),
        factor: 0.875,
    },
    Legacy {
        program: "reduce",
        redop: Some("sum"),
        root: Some(0),
        factor: 1.0,
    },
];

/// A legacy run of `l` on 8 GPUs of one process, sizes 1 KiB .. 64 MiB by 4 (or the first
/// `sizes` of them), `-c 1` errors as `%5.0le` (those versions printed the deviation in place
/// too, reported or not). No `Collective test starting` line (it did not exist).
pub(super) fn legacy_text(l: &Legacy, sizes: usize) -> String {
    let mut s = String::from(
        "# nThread 1 nGpus 8 minBytes 1024 maxBytes 67108864 step: 4(factor) warmup iters: 5 iters: 20 validation: 1 \n#\n# Using devices\n",
    );
    for r in 0..8 {
        s += &format!(
            "#   Rank {r:2} Pid  41234 on      node1 device {r:2} [0x{:02x}] A100-SXM4-40GB\n",
            7 + r
        );
    }
    let mut head = format!("# {:>10}  {:>12}  {:>8}", "size", "count", "type");
    if l.redop.is_some() {
        head += &format!("  {:>6}", "redop");
    }
    if l.root.is_some() {
        head += &format!("  {:>6}", "root");
    }
    s += "#\n#                                                     out-of-place                       in-place\n";
    s += &format!(
        "{head}  {:>7}  {:>6}  {:>6}  {:>5}  {:>7}  {:>6}  {:>6}  {:>5}\n",
        "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"
    );
    for (i, bytes) in (0..sizes).map(|i| (i, 1024u64 << (2 * i))) {
        let time = 20.0 + bytes as f64 / 200e3; // 200 GB/s algbw, 20 us latency
        let mut row = format!("{bytes:>12}  {:>12}  {:>8}", bytes / 4, "float");
        if let Some(op) = l.redop {
            row += &format!("  {op:>6}");
        }
        if let Some(root) = l.root {
            row += &format!("  {root:>6}");
        }
        let body = |t: f64, err: &str| {
            format!(
                "  {:>7}  {:>6.2}  {:>6.2}  {err:>5}",
                time_str(t),
                bytes as f64 / t / 1e3,
                bytes as f64 / t / 1e3 * l.factor
            )
        };
        row += &body(time, "0e+00");
        row += &body(time * (1.0 + 0.01 * i as f64), "0e+00");
        s += &row;
        s += "\n";
    }
    s += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 12.5 \n#\n\n";
    s
}

/// The legacy time format: `%7.0f` from 10 ms, `%7.1f` from 100 us, else `%7.2f`.
fn time_str(t: f64) -> String {
    if t >= 10000.0 {
        format!("{t:.0}")
    } else if t >= 100.0 {
        format!("{t:.1}")
    } else {
        format!("{t:.2}")
    }
}

#[test]
fn every_legacy_column_set_is_read_completely() {
    for l in &LEGACY {
        let set = read_str(l.program, &legacy_text(l, 6))
            .unwrap_or_else(|e| panic!("{}: {e}", l.program));
        assert_eq!(skips(&set), Vec::<String>::new(), "{}", l.program);
        assert_eq!(set.rows.len(), 12, "{}", l.program);
        for r in &set.rows {
            assert_eq!(r.op, l.redop.unwrap_or(""), "{}", l.program);
            assert_eq!(r.root, l.root.unwrap_or(-1), "{}", l.program);
            assert_eq!(
                (r.nranks, r.dtype.as_str()),
                (Some(8), "float"),
                "{}",
                l.program
            );
        }
        let last = &set.rows[10];
        assert_eq!(
            (last.bytes, last.count),
            (1 << 20, 1 << 18),
            "{}",
            l.program
        );
        assert!(
            (last.time_us - 25.2).abs() < 0.06,
            "{}: {}",
            l.program,
            last.time_us
        );
    }
}

#[test]
fn legacy_alltoall_with_empty_op_reads_with_the_row_split_by_a_log_line() {
    let l = &LEGACY[2];
    let text = legacy_text(l, 3);
    // NCCL printed while the row was being written: the row arrives in two fragments.
    let text = text.replacen(
        "float  ",
        "       float\nnode1:41234:41240 [0] NCCL INFO Launch mode Parallel\n  ",
        1,
    );
    let set = read_str("a2a", &text).unwrap();
    assert_eq!(
        (set.rows.len(), set.skipped.len()),
        (6, 0),
        "{:?}",
        skips(&set)
    );
    assert!(set.rows.iter().all(|r| r.op.is_empty()));
}
