//! The clap definition: one subcommand per collective (made from the collective specs by
//! [`super::command`]), all sharing [`BenchArgs`], whose flags are nccl-tests' (same short and
//! long names, same defaults), and one per tool.
//!
//! Values are only checked for syntax here (numbers, sizes, names); ranges and combinations
//! are checked in [`super::validate`], which turns [`BenchArgs`] into a `RunConfig`. A new
//! subcommand (`analyze`, `logs`, ...) is one more [`Sub`] variant with its own args struct.

use super::accept::AcceptArgs;
use super::compare::CompareArgs;
use super::locate::LocateArgs;
use crate::config::{BackendChoice, Verify};
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::core::units::{parse_int, parse_size};
use crate::result::BackendKind;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// The whole command line of `ncclbench`.
#[derive(Debug, Parser)]
#[command(
    name = "ncclbench",
    version,
    about = "Collective-communication benchmarks in the nccl-tests mould, with exact verification",
    after_help = "Each collective also runs as `<collective>_perf [flags]` (a copy or symlink of \
                  the binary under that name), like the nccl-tests binaries."
)]
pub(crate) struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Sub,
}

/// The tools' subcommands. The collectives' subcommands are not listed here: [`super::command`]
/// adds one per collective spec, each with [`BenchArgs`], so a new collective needs no edit here.
#[derive(Debug, Subcommand)]
pub(crate) enum Sub {
    /// Fit each curve of result files (ncclbench CSV/JSON, nccl-tests text/JSON) and report
    /// latency floor, plateau, knee and regimes; or hold a training job's NCCL Inspector
    /// records against benchmark results (--baseline): where the job loses time, and why
    #[command(name = "analyze")]
    Analyze(AnalyzeArgs),
    /// What a run would use: NCCL library and version, CUDA driver, GPUs, launcher
    #[command(name = "env")]
    Env(EnvArgs),
    /// Compare two sets of result files size by size (noise-aware: a change is called only
    /// when significant and beyond --threshold); exit 1 when anything got slower
    #[command(name = "compare")]
    Compare(CompareArgs),
    /// Read NCCL debug logs (NCCL_DEBUG=INFO): version, env, interfaces, transports,
    /// decisions per size, tuning tables, and rule-based findings
    #[command(name = "logs")]
    Logs(LogsArgs),
    /// Acceptance suite: every collective checked for correctness, swept for performance,
    /// and judged against a profile; PASS/FAIL table, JSON and JUnit XML; exit 0 PASS,
    /// 1 performance, 2 setup, 3 NCCL failure, 4 hang, 7 wrong data
    #[command(name = "accept")]
    Accept(AcceptArgs),
    /// Find the slow node, GPU or link of this job: node groups, rail pairings and GPU pairs
    /// measured concurrently on sub-communicators, judged against the job's own median;
    /// exit 0 no suspect, 1 suspects
    #[command(name = "locate")]
    Locate(LocateArgs),
}

/// `ncclbench env` flags.
#[derive(Debug, Args)]
pub(crate) struct EnvArgs {
    /// Print JSON (schema ncclbench-env/1) instead of text
    #[arg(long)]
    pub json: bool,
    /// The libnccl to inspect (default: $NCCLBENCH_NCCL_LIB, then the loader's libnccl.so.2)
    #[arg(long = "nccl-lib", value_name = "PATH")]
    pub nccl_lib: Option<PathBuf>,
    /// Mask host names, IPs, user names in paths and secret-looking variables
    #[arg(long = "redact")]
    pub redact: bool,
}

/// A parsed subcommand, split by kind. One value per process: the size difference between
/// the variants costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Request {
    /// Benchmark this collective with these flags.
    Bench((Collective, BenchArgs)),
    /// `analyze`.
    Analyze(AnalyzeArgs),
    /// `env`.
    Env(EnvArgs),
    /// `compare`.
    Compare(CompareArgs),
    /// `logs`.
    Logs(LogsArgs),
    /// `accept`.
    Accept(AcceptArgs),
    /// `locate`.
    Locate(LocateArgs),
}

/// Output format of `analyze` on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FormatArg {
    /// A terminal table.
    Text,
    /// Markdown tables.
    Markdown,
    /// The JSON document (schema ncclbench-analysis/1 from analyze, ncclbench-production/1
    /// from its production report, ncclbench-compare/1 from compare).
    Json,
}

/// Flags of `ncclbench analyze`.
#[derive(Debug, Args)]
pub(crate) struct AnalyzeArgs {
    /// Result files or directories (every recognised file in a directory), or a training
    /// job's NCCL Inspector output (JSON records or Prometheus textfiles, plain or gzip;
    /// dump directories read recursively) for the production report
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write the report, plots (SVG and PNG), HTML and JSON into this directory
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Hardware peak bus bandwidth in GB/s, for efficiency figures
    #[arg(long = "peak-gbs", value_name = "GBS", allow_negative_numbers = true)]
    pub peak_gbs: Option<f64>,
    /// What to print on stdout
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
    /// An NCCL debug log of the same run (repeatable): its rule-based findings are reported
    /// after the curves
    #[arg(long = "nccl-log", value_name = "FILE")]
    pub nccl_log: Vec<PathBuf>,
    /// Pool curves of files whose setups (GPU model, host/process layout, NCCL version) differ;
    /// without it such files' curves are kept apart and the report says why
    #[arg(long = "pool-setups")]
    pub pool_setups: bool,
    /// Benchmark results of the same machine (file or directory, repeatable) that NCCL
    /// Inspector inputs are held against: where the job loses time, and why
    #[arg(long = "baseline", value_name = "FILE")]
    pub baseline: Vec<PathBuf>,
}

/// Flags of `ncclbench logs`.
#[derive(Debug, Args)]
pub(crate) struct LogsArgs {
    /// NCCL debug logs (stdout captures or NCCL_DEBUG_FILE files); `-` reads stdin
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print the JSON document (schema ncclbench-logs/1) instead of text
    #[arg(long)]
    pub json: bool,
    /// Replace hostnames, IPs, PIDs, pointers, bus ids and user names in all output
    #[arg(long)]
    pub redact: bool,
}

impl Sub {
    /// What the subcommand asks for.
    pub fn into_request(self) -> Request {
        match self {
            Sub::Analyze(a) => Request::Analyze(a),
            Sub::Env(a) => Request::Env(a),
            Sub::Compare(a) => Request::Compare(a),
            Sub::Logs(a) => Request::Logs(a),
            Sub::Accept(a) => Request::Accept(a),
            Sub::Locate(a) => Request::Locate(a),
        }
    }
}

/// The flags of a benchmark run, as typed on the command line (syntax checked, ranges not).
///
/// As with getopt: every flag takes a value, which may start with `-` (`-r -1`); a repeated
/// flag overrides the earlier one; a long flag may be abbreviated while unambiguous.
#[derive(Debug, Clone, Args)]
#[command(args_override_self = true, infer_long_args = true)]
pub(crate) struct BenchArgs {
    /// Threads per process; each thread drives -g GPUs
    #[arg(short = 't', long = "nthreads", value_name = "N")]
    #[arg(default_value = "1", value_parser = parse_int, allow_hyphen_values = true)]
    pub nthreads: i64,
    /// GPUs per thread
    #[arg(short = 'g', long = "ngpus", value_name = "N")]
    #[arg(default_value = "1", value_parser = parse_int, allow_hyphen_values = true)]
    pub ngpus: i64,
    /// First size of the sweep, bytes (K/M/G suffixes are 1024-based: 8, 1K, 0.5M, 1GB)
    #[arg(short = 'b', long = "minbytes", value_name = "SIZE")]
    #[arg(default_value = "32M", value_parser = parse_size, allow_hyphen_values = true)]
    pub minbytes: u64,
    /// Last size of the sweep (inclusive), bytes
    #[arg(short = 'e', long = "maxbytes", value_name = "SIZE")]
    #[arg(default_value = "32M", value_parser = parse_size, allow_hyphen_values = true)]
    pub maxbytes: u64,
    /// Additive step between sizes, used when -f is 1
    #[arg(short = 'i', long = "stepbytes", value_name = "SIZE")]
    #[arg(default_value = "1M", value_parser = parse_size, allow_hyphen_values = true)]
    pub stepbytes: u64,
    /// Multiplicative step between sizes, an integer (1 = add -i instead)
    #[arg(short = 'f', long = "stepfactor", value_name = "N")]
    #[arg(default_value = "1", value_parser = parse_factor, allow_hyphen_values = true)]
    pub stepfactor: i64,
    /// Timed iterations per size
    #[arg(short = 'n', long = "iters", value_name = "N")]
    #[arg(default_value = "20", value_parser = parse_int, allow_hyphen_values = true)]
    pub iters: i64,
    /// Operations per iteration, grouped into one launch
    #[arg(short = 'm', long = "agg_iters", value_name = "N")]
    #[arg(default_value = "1", value_parser = parse_int, allow_hyphen_values = true)]
    pub agg_iters: i64,
    /// Warm-up iterations
    #[arg(short = 'w', long = "warmup_iters", value_name = "N")]
    #[arg(default_value = "1", value_parser = parse_int, allow_hyphen_values = true)]
    pub warmup_iters: i64,
    /// Times to repeat the whole sweep (0 = forever)
    #[arg(short = 'N', long = "run_cycles", value_name = "N")]
    #[arg(default_value = "1", value_parser = parse_int, allow_hyphen_values = true)]
    pub run_cycles: i64,
    /// 1 = each thread sets up its own communicators and buffers
    #[arg(short = 'p', long = "parallel_init", value_name = "0/1")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub parallel_init: i64,
    /// Verification runs after timing (0 = no check)
    #[arg(short = 'c', long = "check", value_name = "N")]
    #[arg(default_value = "1", value_parser = parse_int, allow_hyphen_values = true)]
    pub check: i64,
    /// Reduction operator: sum, prod, max, min, avg, mulsum, or all
    #[arg(short = 'o', long = "op", value_name = "OP")]
    #[arg(default_value = "sum", value_parser = parse_ops, allow_hyphen_values = true)]
    pub op: Names<RedOp>,
    /// Data type: int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16,
    /// f8e4m3, f8e5m2, or all
    #[arg(short = 'd', long = "datatype", value_name = "TYPE")]
    #[arg(default_value = "float", value_parser = parse_dtypes, allow_hyphen_values = true)]
    pub datatype: Names<DataType>,
    /// Root rank of rooted collectives (-1 = every root in turn)
    #[arg(short = 'r', long = "root", value_name = "RANK")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub root: i64,
    /// Blocking: 0 none, 1 wait and barrier after each op, 2 wait after each op, 3 like 2 plus an
    /// untimed barrier per iteration
    #[arg(short = 'z', long = "blocking", value_name = "0..3")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub blocking: i64,
    /// 1 = use the default (NULL) stream
    #[arg(short = 'y', long = "stream_null", value_name = "0/1")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub stream_null: i64,
    /// Per-wait timeout in seconds (0 = none)
    #[arg(short = 'T', long = "timeout", value_name = "SECONDS")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub timeout: i64,
    /// Capture the timed loop in a CUDA graph launched N times (0 = no graph)
    #[arg(short = 'G', long = "cudagraph", value_name = "N")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub cudagraph: i64,
    /// 1 = the time column shows host launch time
    #[arg(short = 'C', long = "report_cputime", value_name = "0/1")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub report_cputime: i64,
    /// 1 = append a timestamp to each row
    #[arg(short = 'S', long = "report_timestamps", value_name = "0/1")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub report_timestamps: i64,
    /// Write the results as JSON to this file
    #[arg(
        short = 'J',
        long = "output_file",
        value_name = "FILE",
        allow_hyphen_values = true
    )]
    pub output_file: Option<PathBuf>,
    /// Time across ranks: 0 rank 0, 1 mean, 2 min, 3 max
    #[arg(short = 'a', long = "average", value_name = "0..3")]
    #[arg(default_value = "1", value_parser = parse_int, allow_hyphen_values = true)]
    pub average: i64,
    /// Buffer registration: 0 none, 1 local, 2 symmetric window
    #[arg(short = 'R', long = "local_register", value_name = "0..2")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub local_register: i64,
    /// NCCL CTA policy (default: unset, NCCL decides; -1 = unset)
    #[arg(short = 'x', long = "cta_policy", value_name = "N")]
    #[arg(value_parser = parse_int, allow_hyphen_values = true)]
    pub cta_policy: Option<i64>,
    /// Device-API implementation: 0 = NCCL's own collectives (the only one ncclbench has)
    #[arg(short = 'D', long = "device_implementation", value_name = "N")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub device_implementation: i64,
    /// CTAs for a device-API implementation (1..128)
    #[arg(short = 'V', long = "device_cta_count", value_name = "N")]
    #[arg(default_value = "16", value_parser = parse_int, allow_hyphen_values = true)]
    pub device_cta_count: i64,
    /// 1 = report GPU memory usage at the end
    #[arg(short = 'M', long = "memory", value_name = "0/1")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub memory: i64,
    /// Shift send and receive buffers by this many elements
    #[arg(short = 'u', long = "unalign", value_name = "N")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub unalign: i64,
    /// 1 = time every iteration (extra columns)
    #[arg(short = 'I', long = "per_iter_timing", value_name = "0/1")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub per_iter_timing: i64,
    /// Leading iterations left out of the -I statistics
    #[arg(short = 'K', long = "per_iter_skip", value_name = "N")]
    #[arg(default_value = "0", value_parser = parse_int, allow_hyphen_values = true)]
    pub per_iter_skip: i64,
    /// Backend: nccl on GPUs, host (threads, host memory), mpi (one rank per MPI process, host
    /// memory; needs the `mpi` build), auto = nccl if a GPU is usable
    #[arg(long = "backend", value_name = "BACKEND")]
    #[arg(default_value = "auto")]
    pub backend: BackendChoice,
    /// Write the results as CSV to this file
    #[arg(long = "csv", value_name = "FILE")]
    #[arg(allow_hyphen_values = true)]
    pub csv: Option<PathBuf>,
    /// Write the results as JSON to this file (same as -J)
    #[arg(long = "json", value_name = "FILE")]
    #[arg(allow_hyphen_values = true)]
    pub json: Option<PathBuf>,
    /// Keep a Prometheus textfile of the latest results (ncclbench_bus_bandwidth_gbs, ...),
    /// rewritten atomically after every row, for the node exporter's textfile collector
    #[arg(long = "prom", value_name = "FILE")]
    #[arg(allow_hyphen_values = true)]
    pub prom: Option<PathBuf>,
    /// The libnccl to load (default: $NCCLBENCH_NCCL_LIB, then the loader's libnccl.so.2)
    #[arg(long = "nccl-lib", value_name = "PATH")]
    #[arg(allow_hyphen_values = true)]
    pub nccl_lib: Option<PathBuf>,
    /// CUDA device of each local rank, e.g. 0,1,2,3 or 0,0 (default: by local rank, as
    /// nccl-tests; NCCL_TESTS_DEVICE shifts the first)
    #[arg(long = "devices", value_name = "LIST", value_parser = parse_devices)]
    pub devices: Option<DeviceList>,
    /// Clock of the time column: host (nccl-tests' wall clock) or device (CUDA events around a
    /// loop queued behind a host-released flag, launch overhead excluded)
    #[arg(long = "timer", value_name = "TIMER", default_value = "host")]
    pub timer: TimerArg,
    /// Where -c fills and checks the buffers: auto (on the GPU when the verification kernels
    /// load, else on the host; the header says which), device (GPU kernels, or exit 2), host
    #[arg(long = "verify", value_name = "WHERE", default_value = "auto")]
    pub verify: Verify,
    /// Mask host names, PIDs, IPs, pointers, user names in paths and secret-looking variables
    /// in every output (stdout, CSV and its .env.json, JSON)
    #[arg(long = "redact")]
    pub redact: bool,
    /// Under NCCL_TESTS_SPLIT or NCCL_TESTS_SPLIT_MASK, report each group's rows (its ranks and
    /// hosts, time, bandwidths, wrong elements) beside the aggregate nccl-tests prints
    #[arg(long = "per-group")]
    pub per_group: bool,
    /// Capture NCCL's debug log (INFO; INIT,ENV,GRAPH,TUNING,COLL) in the output directory and
    /// join its per-call decisions to the results (algo, proto, channels columns)
    #[arg(long = "tuning")]
    pub tuning: bool,
    /// Print NCCL's decision after each row of the text table (implies --tuning)
    #[arg(long = "show-algo")]
    pub show_algo: bool,
    /// NVTX ranges around each size, placement and phase (libnvToolsExt at run time; a no-op
    /// without it)
    #[arg(long = "nvtx")]
    pub nvtx: bool,
}

// `--verify` values are the configuration's own: its type stays free of clap.
impl ValueEnum for Verify {
    fn value_variants<'a>() -> &'a [Self] {
        &[Verify::Auto, Verify::Device, Verify::Host]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        // No help text per value: documented values would switch clap's long help to a
        // one-paragraph-per-flag layout.
        Some(clap::builder::PossibleValue::new(match self {
            Verify::Auto => "auto",
            Verify::Device => "device",
            Verify::Host => "host",
        }))
    }
}

/// `--timer` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TimerArg {
    // Plain comments, not docs (see the --verify values above).
    Host,
    Device,
}

/// A `--devices` value: CUDA ordinals, one per local rank, repeats allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeviceList(pub Vec<usize>);

pub(crate) fn parse_devices(text: &str) -> Result<DeviceList, String> {
    let list: Result<Vec<usize>, String> = text
        .split(',')
        .map(|item| {
            let item = item.trim();
            item.parse::<usize>()
                .ok()
                .filter(|&d| d <= i32::MAX as usize)
                .ok_or_else(|| {
                    format!("'{item}' is not a CUDA device number (expected e.g. 0,1 or 0,0)")
                })
        })
        .collect();
    list.map(DeviceList)
}

// `--backend` values are the configuration's own, in this order: auto, nccl, host, mpi.
impl ValueEnum for BackendChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            BackendChoice::Auto,
            BackendChoice::Use(BackendKind::Nccl),
            BackendChoice::Use(BackendKind::Host),
            BackendChoice::Use(BackendKind::Mpi),
        ]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        // No help text per value (see Verify).
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}

/// A `-o`/`-d` value: one name, or every name for `all`, in nccl-tests' order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Names<T>(pub Vec<T>);

/// `-f`: an integer; a fraction gets its own message since nccl-tests would truncate it.
fn parse_factor(text: &str) -> Result<i64, String> {
    parse_int(text).map_err(|e| match text.trim().parse::<f64>() {
        Ok(_) => {
            "the step factor must be an integer (nccl-tests would silently truncate it)".into()
        }
        Err(_) => e,
    })
}

fn parse_ops(text: &str) -> Result<Names<RedOp>, String> {
    let names = RedOp::ALL.map(RedOp::name);
    parse_names(text, &RedOp::ALL, RedOp::parse, "operator", &names)
}

fn parse_dtypes(text: &str) -> Result<Names<DataType>, String> {
    let names = DataType::ALL.map(DataType::name);
    parse_names(text, &DataType::ALL, DataType::parse, "data type", &names)
}

fn parse_names<T: Copy>(
    text: &str,
    all: &[T],
    parse: fn(&str) -> Option<T>,
    what: &str,
    names: &[&str],
) -> Result<Names<T>, String> {
    if text == "all" {
        return Ok(Names(all.to_vec()));
    }
    match parse(text) {
        Some(one) => Ok(Names(vec![one])),
        None => Err(format!("unknown {what} (valid: {}, all)", names.join(", "))),
    }
}
