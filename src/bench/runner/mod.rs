//! The benchmark loop with nccl-tests' timing semantics, independent of any backend: per sweep (a
//! type, op and root) a barrier and a doubling warm-up, then the `-N` cycles, each per size an
//! out-of-place and an in-place measurement ([`bench`]), each reported to the sinks the moment
//! it exists.

mod bench;
mod groups;
mod launch;
mod timed;

use crate::bench::backend::{Backend, Call};
use crate::bench::job::bootstrap::Bootstrap;
use crate::bench::observe::{Observer, Phase};
use crate::bench::output::Sink;
use crate::bench::plan::{Plan, Sweep};
use crate::config::RunConfig;
use crate::core::collective::Shape;
use crate::core::error::Error;
use crate::result::{Placement, Row, RowKey, Summary};

/// What a finished (or failed) run adds up to.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Footer totals.
    pub summary: Summary,
    /// Every completed row, in order.
    pub rows: Vec<Row>,
}

impl Outcome {
    /// Exit status per nccl-tests: 7 when any checked case had wrong elements or the average
    /// bus bandwidth fell below 90% of `NCCL_TESTS_MIN_BW`, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.summary.out_of_bounds > 0 || self.summary.bandwidth_ok() == Some(false) {
            crate::core::error::exit::RESULTS
        } else {
            crate::core::error::exit::OK
        }
    }
}

/// Local time as nccl-tests prints it.
pub fn local_time() -> String {
    chrono::Local::now().format("%Y-%m-%d %H:%M:%S").to_string()
}

/// Drives one run. Build it with [`Runner::new`] and call [`Runner::run`].
pub struct Runner<'a> {
    cfg: &'a RunConfig,
    plan: &'a Plan,
    backend: &'a mut dyn Backend,
    boot: &'a mut dyn Bootstrap,
    sinks: &'a mut dyn Sink,
    /// Seed of the next verification fill; every fill gets a fresh one.
    next_seed: u64,
    busbw_sum: f64,
    busbw_n: u64,
    out_of_bounds: u64,
    rows: Vec<Row>,
    /// Whether the "gate opened early" notice was given.
    hold_expired_noted: bool,
    /// Watches every call (`--tuning`, `--nvtx`).
    observer: Option<&'a mut dyn Observer>,
    /// Calls made on the communicator so far.
    seq: u64,
    /// Launch groups opened so far (a call outside a group is its own).
    groups: u64,
    /// Whether an `-m` group is open.
    grouped: bool,
    /// Whether a graph capture is open (nothing runs, so nothing is waited for).
    capturing: bool,
    /// The last launch's call, rebuilt in place for the next one (no allocation per launch).
    scratch: Option<Call>,
    /// `--per-group`: this process's split colour.
    group: Option<usize>,
}

impl<'a> Runner<'a> {
    /// A runner over an allocated-nothing-yet backend.
    pub fn new(
        cfg: &'a RunConfig,
        plan: &'a Plan,
        backend: &'a mut dyn Backend,
        boot: &'a mut dyn Bootstrap,
        sinks: &'a mut dyn Sink,
    ) -> Self {
        Runner {
            cfg,
            plan,
            backend,
            boot,
            sinks,
            next_seed: 99,
            busbw_sum: 0.0,
            busbw_n: 0,
            out_of_bounds: 0,
            rows: Vec::new(),
            hold_expired_noted: false,
            observer: None,
            seq: 0,
            groups: 0,
            grouped: false,
            capturing: false,
            scratch: None,
            group: None,
        }
    }

    /// `--per-group`: reports each split group's figures beside the aggregate; `color` is this
    /// process's group. Every process of the job must ask for it, or none.
    pub fn with_per_group(mut self, color: usize) -> Self {
        self.group = Some(color);
        self
    }

    /// Lets `observer` watch every call and annotate every measurement.
    pub fn with_observer(mut self, observer: &'a mut dyn Observer) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Runs every cycle of the plan. The sinks' `begin` must already have been called; `finish`
    /// is called here, also when the run fails (then with the error text), so every output
    /// stays complete and valid. `min_bw` is `NCCL_TESTS_MIN_BW`.
    pub fn run(mut self, min_bw: Option<f64>, memory: Option<String>) -> Result<Outcome, Error> {
        let result = self.run_sweeps();
        let memory = match (memory, self.cfg.memory_report) {
            (Some(m), _) => Some(m),
            (None, true) => self.backend.memory_report().ok().flatten(),
            (None, false) => None,
        };
        let summary = Summary {
            out_of_bounds: self.out_of_bounds,
            avg_busbw: if self.busbw_n == 0 {
                f64::NAN
            } else {
                self.busbw_sum / self.busbw_n as f64
            },
            min_bw,
            memory,
            error: result.as_ref().err().map(|e| e.to_string()),
            end_time: local_time(),
            tuning: self.observer.as_mut().and_then(|o| o.report()),
        };
        // The failure that stopped the run is the one to report, not a later one of `finish`
        // (a full disk fails both).
        let finished = self.sinks.finish(&summary);
        result?;
        finished?;
        Ok(Outcome {
            summary,
            rows: self.rows,
        })
    }

    fn run_sweeps(&mut self) -> Result<(), Error> {
        self.backend
            .allocate(self.plan.alloc_bytes, self.plan.alloc_bytes)?;
        for sweep in &self.plan.sweeps {
            self.sweep(sweep)?;
        }
        Ok(())
    }

    /// One sweep (a dtype, op and root), as nccl-tests' `TimeTest`: a barrier, the warm-up,
    /// then the `-N` cycles, each a row per size. The cycles are inside the sweep, so the
    /// warm-up runs once per sweep and `-N 0` repeats the first sweep until interrupted.
    fn sweep(&mut self, sweep: &Sweep) -> Result<(), Error> {
        self.boot.barrier()?;
        self.warm_up(sweep)?;
        let mut cycle = 0u32;
        while self.cfg.cycles.is_none_or(|n| cycle < n) {
            for &size in &self.plan.sizes {
                self.row(cycle, sweep, size)?;
            }
            cycle = cycle.wrapping_add(1);
        }
        Ok(())
    }

    /// `-w` untimed launches at each warm-up size, out of place (rotated as the timed loop's,
    /// blocking per `-z`), waited for per size.
    fn warm_up(&mut self, sweep: &Sweep) -> Result<(), Error> {
        for &size in &self.plan.warmup_sizes {
            let shape = self.shape(size, sweep);
            let p = Placement::OutOfPlace;
            self.range_push(sweep, &shape, p, Phase::Warmup);
            for iter in 0..u64::from(self.cfg.warmup_iters) {
                self.start_coll(sweep, &shape, p, iter, Phase::Warmup)?;
            }
            self.complete_coll(sweep, &shape, p, "warm-up")?;
            self.range_pop();
        }
        Ok(())
    }

    /// One size: both placements measured, each given to the sinks and counted in the
    /// footer's totals the moment it exists, then the row.
    fn row(&mut self, cycle: u32, sweep: &Sweep, size: u64) -> Result<(), Error> {
        // A command that catches SIGINT/SIGTERM (accept) stops here, between two rows.
        if let Some(sig) = crate::core::interrupt::pending() {
            return Err(Error::Interrupted(sig));
        }
        let shape = self.shape(size, sweep);
        let key = RowKey {
            cycle,
            collective: self.plan.collective,
            dtype: sweep.dtype,
            op: sweep.op,
            root: sweep.root,
            nranks: self.plan.nranks,
            bytes: shape.bytes as u64,
            count: shape.count as u64,
        };
        self.sinks.row_started(&key)?;
        let mut done = Vec::with_capacity(2);
        for placement in Placement::BOTH {
            let mut m = self.bench(sweep, &shape, placement)?;
            if let Some(o) = self.observer.as_mut() {
                m.tuning = o.measured(&key, placement);
            }
            self.busbw_sum += m.busbw_gbs;
            self.busbw_n += 1;
            if m.wrong.is_some_and(|w| w > 0) {
                self.out_of_bounds += 1;
            }
            self.sinks.placement_done(&key, placement, &m)?;
            done.push(m);
        }
        let in_place = done.pop().expect("two placements");
        let out_of_place = done.pop().expect("two placements");
        let row = Row {
            key,
            out_of_place,
            in_place,
            timestamp: local_time(),
        };
        self.sinks.row_done(&row)?;
        self.rows.push(row);
        Ok(())
    }

    fn shape(&self, size: u64, sweep: &Sweep) -> Shape {
        // Sizes never exceed -e, which the plan proved fits in usize.
        self.plan.collective.shape(
            &self.plan.traffic,
            size as usize,
            sweep.dtype,
            self.plan.nranks,
        )
    }
}
