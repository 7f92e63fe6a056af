//! The text output's fixed parts: the run header above the table, the three-line column
//! header, and the footer below it, in nccl-tests 2.19.6 layout.

use crate::bench::output::format::c_g;
use crate::result::{BackendKind, RunMeta, Step, Summary};

/// Which optional columns the table has; fixed at `begin`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Columns {
    /// `-I 1`: four per-iteration columns after each placement.
    pub per_iter: bool,
    /// `-C 1`: the time column shows host enqueue time (`cputime`).
    pub cputime: bool,
    /// `-S 1`: a timestamp column at the end of each row.
    pub timestamps: bool,
    /// `--show-algo`: NCCL's decision per placement after the standard columns.
    pub show_algo: bool,
}

impl Columns {
    /// The columns a run with `meta` prints.
    pub fn of(meta: &RunMeta) -> Columns {
        Columns {
            per_iter: meta.per_iter,
            cputime: meta.report_cputime,
            timestamps: meta.report_timestamps,
            show_algo: meta.show_algo,
        }
    }
}

/// Everything printed before the column header: version, parameters, option notes, backend
/// lines, devices and the optional maxBytes reduction, each line ending in `\n`.
pub(crate) fn run_header(meta: &RunMeta) -> String {
    let mut s = format!("# ncclbench version {}", meta.version);
    if let Some(h) = meta.nccl_headers {
        s += &format!(" nccl-headers={h}");
    }
    if let Some(l) = meta.nccl_library {
        s += &format!(" nccl-library={l}");
    }
    s += &format!("\n# Collective test starting: {}\n", meta.program);
    let (step, unit) = match meta.step {
        Step::Factor(f) => (f, "factor"),
        Step::Bytes(b) => (b, "bytes"),
    };
    s += &format!(
        "# nThread {} nGpus {} minBytes {} maxBytes {} step: {step}({unit}) warmup iters: {} \
         iters: {} agg iters: {} validation: {} graph: {} unalign: {}\n",
        meta.nthreads,
        meta.ngpus,
        meta.min_bytes,
        meta.max_bytes,
        meta.warmup_iters,
        meta.iters,
        meta.agg_iters,
        meta.check,
        meta.graph,
        meta.unalign,
    );
    s += match meta.blocking {
        0 => "",
        1 => "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n",
        2 => "# Blocking Enabled: wait after each inner iteration (-m), no barrier \n",
        _ => "# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier \n",
    };
    if meta.per_iter {
        // Only the NCCL backend times iterations with CUDA events; the host and MPI backends'
        // events are host clock readings taken when their queues reach them.
        let timing = if meta.backend == BackendKind::Nccl {
            "CUDA event timing"
        } else {
            "host clock timing (no CUDA events on this backend)"
        };
        s += &format!("# Per-Iteration Report: {timing}; i_* uses max over process rows");
        if meta.per_iter_skip > 0 {
            s += &format!("; summary skips first {} iterations", meta.per_iter_skip);
        }
        s += " \n";
    }
    if meta.parallel_init {
        s += "# Parallel Init Enabled: threads call into NcclInitRank concurrently \n";
    }
    for line in &meta.backend_lines {
        s += line;
        s += "\n";
    }
    s += "#\n# Using devices\n";
    for d in &meta.devices {
        let (domain, bus, dev) = d.pci;
        s += &format!(
            "#  Rank {:>2} Group {:>2} Pid {:>6} on {:>10} device {:>2} [{domain:04x}:{bus:02x}:{dev:02x}] {}\n",
            d.rank, d.group, d.pid, d.hostname, d.device, d.name
        );
    }
    if let Some(v) = meta.reduced_max_bytes {
        s += &format!("#\n# Reducing maxBytes to {v} due to memory limitation\n");
    }
    s
}

/// Appends one header row: the five key columns, then each placement's columns, then the
/// timestamp column (`" %*s"`, width 0 when off, so the line ends in one space).
fn header_row(
    cols: Columns,
    key: [&str; 5],
    measured: [&str; 4],
    iter: [&str; 4],
    ts: &str,
    algo: [&str; 2],
) -> String {
    let mut s = format!(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}",
        key[0], key[1], key[2], key[3], key[4]
    );
    for _ in 0..2 {
        s += &format!(
            "  {:>7}  {:>6}  {:>6}  {:>6}",
            measured[0], measured[1], measured[2], measured[3]
        );
        if cols.per_iter {
            s += &format!(
                "  {:>7}  {:>7}  {:>7}  {:>7}",
                iter[0], iter[1], iter[2], iter[3]
            );
        }
    }
    let (width, ts) = if cols.timestamps { (19, ts) } else { (0, "") };
    s += &format!(" {ts:>width$}");
    if cols.show_algo {
        s += &format!(" {:>18}  {:>18}", algo[0], algo[1]);
    }
    s + "\n"
}

/// The `#` line and the three-line column header.
pub(crate) fn column_header(cols: Columns) -> String {
    let mut s = format!(
        "#\n# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}",
        "", "", "", "", ""
    );
    s += if cols.per_iter {
        "              out-of-place (+ per-iteration)                                in-place (+ per-iteration)\n"
    } else {
        "           out-of-place                       in-place          \n"
    };
    let time = if cols.cputime { "cputime" } else { "time" };
    s += &header_row(
        cols,
        ["size", "count", "type", "redop", "root"],
        [time, "algbw", "busbw", "#wrong"],
        ["i_min", "i_max", "i_p99", "i_cv%"],
        "timestamp",
        ["nccl out-of-place", "nccl in-place"],
    );
    s += &header_row(
        cols,
        ["(B)", "(elements)", "", "", ""],
        ["(us)", "(GB/s)", "(GB/s)", ""],
        ["(us)", "(us)", "(us)", "(%)"],
        "%Y-%m-%d %H:%M:%S",
        ["(algo/proto/chan)", "(algo/proto/chan)"],
    );
    s
}

/// Everything after the last row: totals, the concluding lines, optional memory line, and the
/// error line (or an empty line).
pub(crate) fn footer(summary: &Summary, program: &str) -> String {
    // A run that stopped on an error checked only what it measured: not "OK".
    let oob = if summary.out_of_bounds > 0 {
        "FAILED"
    } else if summary.error.is_some() {
        "INCOMPLETE"
    } else {
        "OK"
    };
    let bw = match summary.bandwidth_ok() {
        Some(true) => "OK",
        Some(false) => "FAILED",
        None => "",
    };
    let mut s = format!(
        "# {:<20} : {} {oob}\n",
        "Out of bounds values", summary.out_of_bounds
    );
    s += &format!(
        "# {:<20} : {} {bw}\n",
        "Avg bus bandwidth",
        c_g(summary.avg_busbw)
    );
    let ended = if summary.error.is_some() {
        "failed"
    } else {
        "concluded"
    };
    s += &format!("#\n# Collective test {ended}: {program}\n");
    if let Some(memory) = &summary.memory {
        s += &format!("# {:<20} : {memory}\n", "GPU memory usage");
    }
    s += "#\n";
    match &summary.error {
        Some(e) => s += &format!("# error: {e}\n"),
        None => s += "\n",
    }
    s
}
