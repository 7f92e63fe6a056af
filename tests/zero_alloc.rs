//! The timed loop allocates nothing per launch: a counting global allocator (this test binary's
//! own, so no other test's allocations count) is switched on for the runner's thread from the
//! moment the runner enters a timed section to the moment it leaves it (the observer's
//! `timed` range), and the runner then drives NCCL on fake-nccl and the host backend.
//!
//! fake-nccl is a separate shared library with its own allocator, so only ncclbench's side of
//! each call is counted: the runner, the backend's launch path and its completion wait. The
//! loader reads `LD_LIBRARY_PATH` once, at start, so the binary re-runs itself with the fake's
//! directory on it.

use ncclbench::bench::backend::forward::Forward;
use ncclbench::bench::backend::host::HostBackend;
use ncclbench::bench::backend::nccl::{self, DeviceChoice, NcclOptions};
use ncclbench::bench::backend::{Backend, Call};
use ncclbench::bench::job::bootstrap::SingleProcess;
use ncclbench::bench::observe::Observer;
use ncclbench::bench::output::Sink;
use ncclbench::bench::plan;
use ncclbench::bench::runner::Runner;
use ncclbench::cli::{self, Command};
use ncclbench::config::{RunConfig, Verify};
use ncclbench::core::error::Error;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::OsString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

#[allow(dead_code)]
mod support {
    pub mod bin;
    pub mod fake_nccl;
}

/// Counts the allocations of a thread that switched counting on.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn note() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting touches only an
// atomic and a const-initialised thread-local, neither of which allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Counts while the runner is inside a timed section; remembers each section's count.
#[derive(Default)]
struct TimedSections {
    depth: usize,
    /// Depth of the open timed range, if any.
    timed_at: Option<usize>,
    /// Allocations per finished timed section.
    counts: Vec<u64>,
}

impl Observer for TimedSections {
    fn range_push(&mut self, name: &str) {
        self.depth += 1;
        if name.ends_with(" timed") {
            self.timed_at = Some(self.depth);
            ALLOCATIONS.store(0, Ordering::Relaxed);
            COUNTING.with(|c| c.set(true));
        }
    }
    fn range_pop(&mut self) {
        if self.timed_at == Some(self.depth) {
            COUNTING.with(|c| c.set(false));
            self.timed_at = None;
            let n = ALLOCATIONS.load(Ordering::Relaxed);
            // Grown outside the count, as the section has ended.
            self.counts.push(n);
        }
        self.depth -= 1;
    }
}

/// Leaves the host backend's own enqueue and wait out of the count: it hands each call to its
/// worker threads in a shared copy by design; what is measured there is the runner's part.
struct RunnerOnly(HostBackend);

fn uncounted<T>(f: impl FnOnce() -> T) -> T {
    let was = COUNTING.with(|c| c.replace(false));
    let out = f();
    COUNTING.with(|c| c.set(was));
    out
}

impl Forward for RunnerOnly {
    fn inner(&self) -> &dyn Backend {
        &self.0
    }
    fn inner_mut(&mut self) -> &mut dyn Backend {
        &mut self.0
    }
    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        uncounted(|| self.0.launch(call))
    }
    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        uncounted(|| self.0.wait(deadline))
    }
}

struct Discard;
impl Sink for Discard {}

fn config(args: &str) -> RunConfig {
    let argv: Vec<OsString> = std::iter::once("ncclbench")
        .chain(args.split_whitespace())
        .map(OsString::from)
        .collect();
    match cli::parse(&argv).unwrap_or_else(|e| panic!("{args}: {e}")) {
        Command::Run(cfg) => cfg,
        _ => panic!("{args}: not a run"),
    }
}

/// Runs `args` on `backend` and returns the allocations of each timed section.
fn timed_allocations(args: &str, backend: &mut dyn Backend) -> Vec<u64> {
    let cfg = config(args);
    let info = backend.info().clone();
    let (plan, _) = plan::build(&cfg, &info, |d, o| backend.supports(d, o)).expect("valid plan");
    let mut observer = TimedSections::default();
    let (mut boot, mut sink) = (SingleProcess, Discard);
    Runner::new(&cfg, &plan, backend, &mut boot, &mut sink)
        .with_observer(&mut observer)
        .run(None, None)
        .unwrap_or_else(|e| panic!("{args}: {e}"));
    assert!(!observer.counts.is_empty(), "{args}: no timed section seen");
    observer.counts
}

/// The NCCL backend on the fake for `args`' collective and `-g`.
fn nccl_backend(cfg: &RunConfig) -> Box<dyn Backend> {
    let ranks = cfg.local_ranks();
    let opts = NcclOptions {
        lib: std::env::var_os("NCCLBENCH_NCCL_LIB").map(Into::into),
        devices: DeviceChoice::ByLocalRank,
        local_process: 0,
        nranks: ranks,
        first_rank: 0,
        local_ranks: ranks,
        group: 0,
        stream_null: false,
        device_timer: false,
        cta_policy: None,
        register: 0,
        collective: cfg.collective,
        verify: Verify::Host,
        check: false,
        timeout: None,
    };
    let probe = nccl::probe(&opts).unwrap_or_else(|e| panic!("probe the fake: {e}"));
    Box::new(
        probe
            .init(nccl::single_process_id)
            .unwrap_or_else(|e| panic!("init on the fake: {e}")),
    )
}

/// Each case's timed sections, all of which must have allocated nothing.
fn check(name: &str, counts: &[u64], failures: &mut Vec<String>) {
    let total: u64 = counts.iter().sum();
    println!(
        "{name}: {} timed sections, {total} allocations",
        counts.len()
    );
    if total > 0 {
        failures.push(format!("{name}: allocations per timed section {counts:?}"));
    }
}

/// The cases, in the child that has the fake on its library path.
fn cases() -> Vec<String> {
    let mut failures = Vec::new();
    let common = "-b 8 -e 64K -f 8 -w 1 -c 0 -n 50";
    for args in [
        format!("all_reduce -g 1 {common}"),
        format!("all_reduce -g 2 {common}"),
        format!("all_reduce -g 2 {common} -m 4"),
        format!("all_reduce -g 2 {common} -z 1"),
        format!("all_reduce -g 2 {common} -o mulsum"),
        format!("reduce -g 2 {common}"),
        format!("all_gather -g 2 {common}"),
        format!("sendrecv -g 2 {common}"),
        format!("alltoall -g 2 {common}"),
        format!("hypercube -g 2 {common}"),
    ] {
        let cfg = config(&args);
        let mut backend = nccl_backend(&cfg);
        let counts = timed_allocations(&args, backend.as_mut());
        check(&format!("nccl (fake) {args}"), &counts, &mut failures);
    }
    for args in [
        format!("all_reduce -g 4 {common}"),
        format!("all_reduce -g 4 {common} -m 4"),
        format!("alltoall -g 4 {common} -z 1"),
    ] {
        let cfg = config(&args);
        let mut backend = RunnerOnly(HostBackend::new(cfg.local_ranks()).expect("host backend"));
        let counts = timed_allocations(&args, &mut backend);
        check(
            &format!("host (runner's part) {args}"),
            &counts,
            &mut failures,
        );
    }
    failures
}

const CHILD: &str = "NCCLBENCH_ZERO_ALLOC_CHILD";

fn main() {
    if std::env::var_os(CHILD).is_some() {
        let failures = cases();
        if failures.is_empty() {
            println!("zero_alloc: every timed section allocated nothing");
            return;
        }
        for f in &failures {
            eprintln!("FAILED {f}");
        }
        std::process::exit(1);
    }
    // The fake's directory first on the loader's path, for libcuda.so.1 and libnccl.so.2.
    let exe = std::env::current_exe().expect("this test's path");
    let mut cmd = std::process::Command::new(exe);
    support::fake_nccl::fake_env(&mut cmd);
    for k in ["NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"] {
        cmd.env_remove(k);
    }
    let status = cmd
        .env(CHILD, "1")
        .status()
        .expect("re-run this test with the fake on the library path");
    assert!(status.success(), "zero_alloc failed: {status}");
}
