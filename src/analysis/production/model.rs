//! The production report as plain data: what the job's Inspector records add up to per
//! (communicator, collective, size, ranks), per rank and per host, how each group compares with
//! the benchmark curve of the same collective and rank count, and the causes found. These
//! structs are the JSON interface `ncclbench-production/1`; field names are stable.

use serde::{Deserialize, Serialize};

/// p5, p50 and p95 of a quantity over a group's records (nearest rank, see `aggregate`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// 5th percentile.
    pub p5: f64,
    /// Median (50th percentile, nearest rank).
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

/// How many of a group's records carry one value (a timing source, an algorithm/protocol).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// The value as written (`kernel_gpu`, `unknown` when absent; `Ring_ll`).
    pub value: String,
    /// Records carrying it.
    pub count: usize,
}

/// The benchmark's view of one group's size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Versus {
    /// The benchmark curve used (`all_reduce float sum, 8 ranks, out_of_place`).
    pub curve: String,
    /// `fitted` (the fitted regime spanning the size), else `measured` (a size the benchmark
    /// ran) or `interpolated` (between two of them, where no regime spans the size).
    pub source: String,
    /// The benchmark's bus bandwidth at the group's size, GB/s.
    pub busbw_gbs: f64,
    /// The benchmark's time for one call at that size, microseconds.
    pub time_us: f64,
    /// Job median busbw / benchmark busbw.
    pub ratio: f64,
    /// Job time minus benchmark time, summed over the group's records, microseconds (negative
    /// when the job ran faster than the benchmark).
    pub lost_us: f64,
}

/// One (communicator, collective, size, ranks) of the job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// Communicator hash (`header.id`).
    pub comm_id: String,
    /// `comm_name`, where the records carry it.
    pub comm_name: Option<String>,
    /// `all_reduce`, ... (ncclbench's names), `send`/`recv`, or NCCL's name when unknown.
    pub collective: String,
    /// Size in nccl-tests' convention (a benchmark row's size column), bytes; for a
    /// Prometheus bucket its lower bound.
    pub bytes: u64,
    /// A Prometheus bucket's upper bound (exclusive); `None` for an exact size.
    pub bytes_hi: Option<u64>,
    /// Ranks of the communicator.
    pub nranks: u32,
    /// Records in the group.
    pub count: usize,
    /// Bus bandwidth over the records, GB/s.
    pub busbw_gbs: Spread,
    /// Time per call over the records, microseconds.
    pub time_us: Spread,
    /// Sum of the records' times, microseconds.
    pub total_time_us: f64,
    /// `total_time_us` over the sum of every record's time (all groups), 0..1.
    pub time_share: f64,
    /// Timing sources (`kernel_gpu`, `kernel_cpu`, `collective_cpu`, `unknown`), by count.
    pub timing: Vec<Tally>,
    /// NCCL's algorithm/protocol as the records carry it, by count (empty when none does).
    pub algo_proto: Vec<Tally>,
    /// The benchmark at this size; `None` without a baseline or when it has no number here.
    pub baseline: Option<Versus>,
    /// Why `baseline` is `None` when a baseline was given (`size 1G is above the benchmark's
    /// largest size 64M: not extrapolated`).
    pub baseline_note: Option<String>,
}

/// One rank of one communicator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    /// Communicator hash.
    pub comm_id: String,
    /// `comm_name`, where present.
    pub comm_name: Option<String>,
    /// Rank in the communicator.
    pub rank: u32,
    /// Host of the rank, where written.
    pub host: Option<String>,
    /// Records of the rank in this communicator.
    pub count: usize,
    /// Median over the rank's records of busbw / its group's median busbw (1 = typical),
    /// each record weighted by its group's median time (see `aggregate`).
    pub rel_busbw_p50: f64,
    /// Sum of the rank's times in this communicator, microseconds.
    pub total_time_us: f64,
}

/// One host, over every communicator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostRow {
    /// Host name (`unknown` when records do not say).
    pub host: String,
    /// Distinct ranks (communicator, rank) seen on it.
    pub ranks: usize,
    /// Records on it.
    pub count: usize,
    /// Median over its records of busbw / the group's median busbw, weighted as a rank's.
    pub rel_busbw_p50: f64,
    /// Sum of its records' times, microseconds.
    pub total_time_us: f64,
}

/// A cause of lost time, with the rule that found it and the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    /// `small_size`, `contention`, `slow_rank`, `slow_host` or `algo_proto`.
    pub kind: String,
    /// Communicator hash.
    pub comm_id: String,
    /// `comm_name`, where present.
    pub comm_name: Option<String>,
    /// The collective concerned.
    pub collective: Option<String>,
    /// The size concerned (nccl-tests' convention), where one.
    pub bytes: Option<u64>,
    /// The rank concerned (slow_rank).
    pub rank: Option<u32>,
    /// The host concerned (slow_rank where written, slow_host).
    pub host: Option<String>,
    /// The rule that fired, in one line.
    pub rule: String,
    /// The numbers that made it fire, in one line.
    pub evidence: String,
    /// What to change, where the cause suggests it.
    pub advice: Option<String>,
    /// Job time minus benchmark time over the records concerned, microseconds, where a
    /// baseline gives it.
    pub lost_us: Option<f64>,
}

/// What was read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Inputs {
    /// The Inspector inputs as given (files or dump directories).
    pub paths: Vec<String>,
    /// Inspector files read.
    pub files: usize,
    /// Records aggregated.
    pub records: usize,
    /// Records or lines the readers could not use, one line each.
    pub skipped: Vec<String>,
    /// Benchmark result files of the baseline (empty without `--baseline`).
    pub baseline_files: Vec<String>,
    /// Benchmark curves the baseline gave.
    pub baseline_curves: usize,
}

/// The whole production report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// What was read.
    pub inputs: Inputs,
    /// Sum of every record's time, microseconds.
    pub total_time_us: f64,
    /// Sum of the groups' positive `lost_us`, microseconds (`None` without a baseline).
    pub total_lost_us: Option<f64>,
    /// Every group, the ones losing most time against the benchmark first (then by share).
    pub groups: Vec<Group>,
    /// Per rank of each communicator.
    pub ranks: Vec<RankRow>,
    /// Per host.
    pub hosts: Vec<HostRow>,
    /// Causes found, by lost time.
    pub causes: Vec<Cause>,
    /// What the reader must know (no baseline, CPU timing, bucketed sizes, curves missing).
    pub notes: Vec<String>,
}
