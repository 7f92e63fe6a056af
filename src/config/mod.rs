//! The validated run configuration: what the CLI turns the command line into, and the only
//! form of the options the planner and runner see (they never touch clap types).

pub mod accept;
pub mod compare;
pub mod locate;
pub mod logs;
pub mod stage;

use crate::core::collective::{Collective, Traffic};
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::result::{BackendKind, Step};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// `--backend`: which backend runs the collectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    /// NCCL when a CUDA driver and a GPU are present, else host (mpi in a multi-process job).
    Auto,
    /// This one.
    Use(BackendKind),
}

impl BackendChoice {
    /// The `--backend` value that asks for it.
    pub fn name(self) -> &'static str {
        match self {
            BackendChoice::Auto => "auto",
            BackendChoice::Use(k) => k.name(),
        }
    }
}

/// What the time column measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// nccl-tests' method: host steady clock around the launch loop plus completion.
    Host,
    /// CUDA events around a loop queued behind a host-released stream wait.
    Device,
}

/// `--verify`: where `-c` fills and checks the buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// On the device when the backend's kernels load, else on the host.
    Auto,
    /// On the device, or not at all (exit 2).
    Device,
    /// On the host.
    Host,
}

/// `-r`: one root, or every root in turn (`-r -1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootChoice {
    /// This root.
    One(usize),
    /// Every rank as root, each a full sweep.
    All,
}

/// `-a`: how the per-rank times combine into the printed time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeReduce {
    /// Rank 0's time (0).
    Rank0,
    /// Mean over ranks (1, the default).
    Mean,
    /// Minimum (2).
    Min,
    /// Maximum (3).
    Max,
}

/// NCCL's own evidence during a run (`crate::bench::tuning`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TuningOptions {
    /// `--tuning`: capture NCCL's debug log and join its decisions to the results.
    pub capture: bool,
    /// `--show-algo`: the decisions in the text table too (implies `capture`).
    pub show_algo: bool,
    /// `--nvtx`: NVTX ranges around every size, placement and phase.
    pub nvtx: bool,
}

/// A validated benchmark configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// The collective.
    pub collective: Collective,
    /// `-t` threads per process.
    pub nthreads: usize,
    /// `-g` GPUs per thread.
    pub ngpus: usize,
    /// `-b`.
    pub min_bytes: u64,
    /// `-e`.
    pub max_bytes: u64,
    /// `-f` (factor > 1) or `-i` (bytes).
    pub step: Step,
    /// `-n` timed iterations (>= 1).
    pub iters: u32,
    /// `-m` operations per iteration (>= 1).
    pub agg_iters: u32,
    /// `-w` warm-up launches per warm-up size.
    pub warmup_iters: u32,
    /// `-N` cycles; `None` = forever (`-N 0`).
    pub cycles: Option<u32>,
    /// `-p`.
    pub parallel_init: bool,
    /// `-c` verification runs (0 = off).
    pub check: u32,
    /// `-d` types in iteration order.
    pub dtypes: Vec<DataType>,
    /// `-o` operators in iteration order.
    pub ops: Vec<RedOp>,
    /// `-r`.
    pub root: RootChoice,
    /// `-z` 0..=3.
    pub blocking: u8,
    /// `-y`.
    pub stream_null: bool,
    /// `-T` per-wait timeout.
    pub timeout: Option<Duration>,
    /// `-G` graph launches (0 = no graph).
    pub graph: u32,
    /// `-C`.
    pub report_cputime: bool,
    /// `-S`.
    pub report_timestamps: bool,
    /// `-a`.
    pub average: TimeReduce,
    /// `-R` 0..=2.
    pub local_register: u8,
    /// `-x` CTA policy.
    pub cta_policy: Option<i32>,
    /// `-V` CTAs of a device-API kernel (1..=128; unused until ncclbench has such kernels).
    pub device_cta_count: u32,
    /// `-M`.
    pub memory_report: bool,
    /// `-u` elements of misalignment.
    pub unalign: usize,
    /// `-I`.
    pub per_iter: bool,
    /// `-K`.
    pub per_iter_skip: u32,
    /// `--backend`.
    pub backend: BackendChoice,
    /// `--csv`.
    pub csv: Option<PathBuf>,
    /// `-J` / `--json` (nccl-tests only writes paths ending in `.json`; we write any path).
    pub json: Option<PathBuf>,
    /// `--prom`: a Prometheus textfile rewritten after every row.
    pub prom: Option<PathBuf>,
    /// `--nccl-lib`: the libnccl to load (else the environment, then the soname search).
    pub nccl_lib: Option<PathBuf>,
    /// `--devices`: the CUDA ordinal of each local rank.
    pub devices: Option<Vec<usize>>,
    /// `--timer`.
    pub timer: Timer,
    /// `--verify`.
    pub verify: Verify,
    /// `--redact`: mask identifying text in every output.
    pub redact: bool,
    /// `--per-group`: each split group's rows beside the aggregate.
    pub per_group: bool,
    /// `--tuning`, `--show-algo`, `--nvtx`.
    pub tuning: TuningOptions,
    /// alltoallv's traffic and summary switch (the defaults for the other collectives).
    pub alltoallv: Alltoallv,
    /// The command line as given.
    pub argv: Vec<String>,
}

/// alltoallv's settings, from nccl-tests' `NCCL_TESTS_ALLTOALLV_*` variables.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Alltoallv {
    /// Each pair's byte count, handed to every spec function of the run.
    pub traffic: Arc<Traffic>,
    /// Whether each result row is followed by the per-rank summary (`_PRINT_SUMMARY`).
    pub print_summary: bool,
}

impl RunConfig {
    /// Program name as nccl-tests prints it.
    pub fn program(&self) -> String {
        self.collective.perf_name()
    }

    /// Ranks this process drives: `-t` x `-g`.
    pub fn local_ranks(&self) -> usize {
        self.nthreads * self.ngpus
    }

    /// The requested sizes of the sweep, in order. Terminates for every validated config
    /// (min > 0 with a factor, step > 0 otherwise).
    pub fn sizes(&self) -> Vec<u64> {
        let mut out = Vec::new();
        let mut size = self.min_bytes;
        while size <= self.max_bytes {
            out.push(size);
            let next = match self.step {
                Step::Factor(f) => size.saturating_mul(f),
                Step::Bytes(b) => size.saturating_add(b),
            };
            if next <= size {
                break;
            }
            size = next;
        }
        out
    }

    /// Warm-up sizes: doubling from `-b` up to `-e`, whatever the step (nccl-tests).
    pub fn warmup_sizes(&self) -> Vec<u64> {
        let mut out = Vec::new();
        let mut size = self.min_bytes.max(1);
        while size <= self.max_bytes {
            out.push(size);
            size = size.saturating_mul(2);
            if size == u64::MAX {
                break;
            }
        }
        out
    }
}

/// What `analyze` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// Terminal table.
    Text,
    /// Markdown.
    Markdown,
    /// JSON document.
    Json,
}

/// A validated `ncclbench analyze` command.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyzeConfig {
    /// Input files and directories.
    pub files: Vec<PathBuf>,
    /// `--out DIR`: where to write the full report and plots.
    pub out: Option<PathBuf>,
    /// `--peak-gbs`.
    pub peak_gbs: Option<f64>,
    /// `--format`.
    pub format: ReportFormat,
    /// `--nccl-log FILE`: NCCL debug logs whose findings are reported next to the curves.
    pub nccl_logs: Vec<PathBuf>,
    /// `--pool-setups`: pool curves of files whose setups differ.
    pub pool_setups: bool,
    /// `--baseline FILE`: benchmark results that NCCL Inspector inputs are held against.
    pub baseline: Vec<PathBuf>,
}
