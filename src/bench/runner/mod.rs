//! The benchmark loop with nccl-tests' timing semantics, independent of any backend: per sweep a
//! barrier and a doubling warm-up, then per size an out-of-place and an in-place measurement
//! ([`bench`]), each reported to the sinks the moment it exists.

mod bench;
mod timed;

use crate::bench::backend::{Backend, Call, RankArgs};
use crate::bench::job::bootstrap::Bootstrap;
use crate::bench::observe::{Observer, OpKey, Phase};
use crate::bench::output::Sink;
use crate::bench::plan::{Plan, Sweep};
use crate::config::RunConfig;
use crate::core::collective::Shape;
use crate::core::error::Error;
use crate::result::{Placement, Row, RowKey, Summary};
use std::time::Instant;

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
        }
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
        let result = self.run_cycles();
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
        self.sinks.finish(&summary)?;
        result?;
        Ok(Outcome {
            summary,
            rows: self.rows,
        })
    }

    fn run_cycles(&mut self) -> Result<(), Error> {
        self.backend
            .allocate(self.plan.alloc_bytes, self.plan.alloc_bytes)?;
        let mut cycle = 0u32;
        while self.cfg.cycles.is_none_or(|n| cycle < n) {
            for sweep in &self.plan.sweeps {
                self.sweep(cycle, sweep)?;
            }
            cycle = cycle.wrapping_add(1);
        }
        Ok(())
    }

    /// One sweep (a dtype, op and root): a barrier, the warm-up, then a row per size.
    fn sweep(&mut self, cycle: u32, sweep: &Sweep) -> Result<(), Error> {
        self.boot.barrier()?;
        self.warm_up(sweep)?;
        for &size in &self.plan.sizes {
            self.row(cycle, sweep, size)?;
        }
        Ok(())
    }

    /// `-w` untimed launches at each warm-up size, out of place, waited for per size.
    fn warm_up(&mut self, sweep: &Sweep) -> Result<(), Error> {
        for &size in &self.plan.warmup_sizes {
            let shape = self.shape(size, sweep);
            self.range_push(sweep, &shape, Placement::OutOfPlace, Phase::Warmup);
            for _ in 0..self.cfg.warmup_iters {
                self.launch(sweep, &shape, Placement::OutOfPlace, 0, Phase::Warmup)?;
            }
            self.wait(sweep, &shape, Placement::OutOfPlace, "warm-up")?;
            self.range_pop();
        }
        Ok(())
    }

    /// One size: both placements measured, each given to the sinks and counted in the
    /// footer's totals the moment it exists, then the row.
    fn row(&mut self, cycle: u32, sweep: &Sweep, size: u64) -> Result<(), Error> {
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
        self.plan
            .collective
            .shape(size as usize, sweep.dtype, self.plan.nranks)
    }

    /// Byte offset of launch `k` of a measurement: buffer rotation over `-e` in steps of the
    /// call's footprint (nccl-tests, against cache effects), plus the `-u` misalignment.
    fn base_offset(&self, shape: &Shape, dtype: crate::core::dtype::DataType, k: u64) -> usize {
        let unalign = self.cfg.unalign * dtype.size();
        if shape.bytes == 0 {
            return unalign;
        }
        let slots = (self.cfg.max_bytes / shape.bytes as u64).max(1);
        (k % slots) as usize * shape.bytes + unalign
    }

    fn call(&self, sweep: &Sweep, shape: &Shape, placement: Placement, k: u64) -> Call {
        let info = self.backend.info();
        let base = self.base_offset(shape, sweep.dtype, k);
        let ranks: Vec<RankArgs> = (0..info.local_ranks)
            .map(|i| {
                crate::bench::backend::rank_args(
                    self.plan.collective,
                    shape,
                    sweep.dtype,
                    info.first_rank + i,
                    placement,
                    base,
                )
            })
            .collect();
        Call {
            coll: self.plan.collective,
            dtype: sweep.dtype,
            op: sweep.op,
            root: sweep.root.unwrap_or(0),
            count: shape.count,
            ranks,
        }
    }

    fn launch(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
        k: u64,
        phase: Phase,
    ) -> Result<(), Error> {
        let call = self.call(sweep, shape, placement, k);
        self.backend.launch(&call)?;
        if !self.grouped {
            self.groups += 1;
        }
        if let Some(o) = self.observer.as_mut() {
            o.call(&OpKey {
                collective: call.coll,
                dtype: call.dtype,
                op: call.op,
                root: call.root,
                count: call.count as u64,
                bytes: (call.count * call.dtype.size()) as u64,
                placement,
                phase,
                seq: self.seq,
                group: self.groups - 1,
            });
        }
        self.seq += 1;
        Ok(())
    }

    /// Opens an `-m` aggregation group.
    fn group_start(&mut self) -> Result<(), Error> {
        self.backend.group_start()?;
        self.grouped = true;
        self.groups += 1;
        Ok(())
    }

    /// Closes the `-m` aggregation group.
    fn group_end(&mut self) -> Result<(), Error> {
        self.grouped = false;
        self.backend.group_end()
    }

    /// Tells the observer that a phase of one size and placement starts.
    fn range_push(&mut self, sweep: &Sweep, shape: &Shape, placement: Placement, phase: Phase) {
        if let Some(o) = self.observer.as_mut() {
            let name = format!(
                "{} {} {} {} B {} {}",
                self.plan.collective,
                sweep.dtype,
                sweep.op,
                shape.bytes,
                placement.name(),
                phase.name()
            );
            o.range_push(&name);
        }
    }

    /// Tells the observer that the phase ended.
    fn range_pop(&mut self) {
        if let Some(o) = self.observer.as_mut() {
            o.range_pop();
        }
    }

    /// Waits for every local queue under the `-T` deadline, naming the case on timeout.
    /// The backend's own detail (which ranks were stuck) is kept after the case.
    fn wait(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
        phase: &str,
    ) -> Result<(), Error> {
        let deadline = self.cfg.timeout.map(|t| Instant::now() + t);
        self.backend.wait(deadline).map_err(|e| match e {
            Error::Timeout { seconds, what } => Error::Timeout {
                seconds: self.cfg.timeout.map_or(seconds, |t| t.as_secs()),
                what: format!(
                    "{} {} {}{} B {} ({phase}){}{what}",
                    self.plan.collective,
                    sweep.dtype,
                    if self.plan.collective.iterates_ops() {
                        format!("{} ", sweep.op)
                    } else {
                        String::new()
                    },
                    shape.bytes,
                    placement.name(),
                    if what.is_empty() { "" } else { ": " },
                ),
            },
            other => other,
        })
    }
}
