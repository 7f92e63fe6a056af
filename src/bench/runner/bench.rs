//! One measurement (nccl-tests' `BenchTime`): fill, one untimed launch, the timed loop of `-n`
//! iterations of `-m` grouped launches (optionally captured into a graph and replayed `-G`
//! times, optionally blocking per `-z`), per-iteration events for `-I`, the cross-rank time
//! reduction of `-a`, and `-c` verification runs.

use super::{Phase, Runner};
use crate::bench::backend::EventId;
use crate::bench::plan::Sweep;
use crate::bench::verify::{self, CheckCase};
use crate::config::Timer;
use crate::core::collective::Shape;
use crate::core::error::Error;
use crate::core::stats::iter_stats;
use crate::result::{Measurement, Placement};
use std::time::{Duration, Instant};

impl Runner<'_> {
    /// Measures one placement of one size.
    pub(super) fn bench(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
    ) -> Result<Measurement, Error> {
        let cfg = self.cfg;
        let checked = cfg.check > 0
            && (placement == Placement::OutOfPlace || self.plan.collective.checks_in_place());
        if cfg.check > 0 {
            let case = self.check_case(sweep, shape, placement);
            verify::prepare(self.backend, &case)?;
        }
        self.range_push(sweep, shape, placement, Phase::Untimed);
        self.launch(sweep, shape, placement, 0, Phase::Untimed)?;
        self.wait(sweep, shape, placement, "untimed launch")?;
        self.range_pop();
        self.boot.barrier()?;

        let (n, m) = (u64::from(cfg.iters), u64::from(cfg.agg_iters));
        let graph = cfg.graph > 0;
        let per_iter = cfg.per_iter && !graph;
        let z3 = cfg.blocking == 3 && !graph;
        let per_launch_wait = matches!(cfg.blocking, 1 | 2) && m == 1 && !graph;
        self.range_push(sweep, shape, placement, Phase::Timed);
        if graph {
            self.backend.begin_capture()?;
        }
        let mut starts = Vec::new();
        let mut ends = Vec::new();
        let mut z3_total = Duration::ZERO;
        // --timer device: the loop queues behind a gate and is timed by events around it.
        let device_timer = cfg.timer == Timer::Device;
        let mut window = None;
        if device_timer && !graph {
            window = Some(self.hold_and_mark()?);
        }
        let mut t0 = Instant::now();
        for iter in 0..n {
            let it_start = Instant::now();
            if per_iter {
                starts.push(self.backend.record_event()?);
            }
            if m > 1 {
                self.group_start()?;
            }
            for a in 0..m {
                self.launch(sweep, shape, placement, iter * m + a, Phase::Timed)?;
                if per_launch_wait {
                    self.wait(sweep, shape, placement, "blocking launch")?;
                    if cfg.blocking == 1 {
                        self.boot.barrier()?;
                    }
                }
            }
            if m > 1 {
                self.group_end()?;
            }
            if z3 {
                self.wait(sweep, shape, placement, "blocking iteration")?;
                if per_iter {
                    ends.push(self.backend.record_event()?);
                }
                z3_total += it_start.elapsed();
                self.boot.barrier()?;
            }
        }
        if per_iter && !z3 {
            ends.extend(starts.iter().skip(1).copied());
            ends.push(self.backend.record_event()?);
        }
        let mut launches = n * m;
        if graph {
            let g = self.backend.end_capture()?;
            self.boot.barrier()?;
            if device_timer {
                window = Some(self.hold_and_mark()?);
            }
            t0 = Instant::now();
            for _ in 0..cfg.graph {
                self.backend.launch_graph(g)?;
            }
            launches *= u64::from(cfg.graph);
        }
        let enqueue = if z3 { z3_total } else { t0.elapsed() };
        let mut device_window = None;
        if let Some(start) = window {
            let end = self.backend.record_event()?;
            if !self.backend.release()? && !self.hold_expired_noted {
                self.hold_expired_noted = true;
                self.sinks.notice(&format!(
                    "# --timer device: enqueueing the timed loop took longer than {} s, so the \
                     gate opened early and the device time includes part of the launch cost",
                    crate::bench::backend::HOLD_LIMIT.as_secs()
                ))?;
            }
            device_window = Some((start, end));
        }
        if graph || !(cfg.blocking != 0 && m <= 1) {
            self.wait(sweep, shape, placement, "timed loop")?;
        }
        let mut elapsed = if z3 { z3_total } else { t0.elapsed() };
        if let Some((start, end)) = device_window {
            elapsed = self.backend.event_elapsed(start, end)?;
            if !per_iter {
                self.backend.release_events()?;
            }
        }
        if per_iter {
            // The last events may still be queued (blocking modes skip the final wait).
            self.wait(sweep, shape, placement, "per-iteration events")?;
        }
        if graph {
            self.backend.destroy_graphs()?;
        }
        self.range_pop();
        let per_op_us = |d: Duration| d.as_secs_f64() * 1e6 / launches as f64;
        let local_us = per_op_us(elapsed);
        let time_us = self.boot.reduce_time(local_us, cfg.average)?;
        let iter = if per_iter {
            let mut times = Vec::with_capacity(starts.len());
            for (&s, &e) in starts.iter().zip(&ends) {
                let d = self.backend.event_elapsed(s, e)?;
                times.push(d.as_secs_f64() * 1e6 / m as f64);
            }
            self.backend.release_events()?;
            // Per iteration, the slowest process (nccl-tests gathers them to rank 0).
            let times = self.boot.max_f64s(&times)?;
            iter_stats(&times, cfg.per_iter_skip)
        } else {
            None
        };

        let coll = self.plan.collective;
        let algbw = coll.algbw_bytes(shape, sweep.dtype, self.plan.nranks) / (time_us * 1e-6) / 1e9;
        let busbw = algbw * coll.busbw_factor(self.plan.nranks);
        self.boot.barrier()?;
        let wrong = if checked {
            Some(self.verify(sweep, shape, placement)?)
        } else {
            None
        };
        Ok(Measurement {
            time_us,
            cputime_us: per_op_us(enqueue),
            algbw_gbs: algbw,
            busbw_gbs: busbw,
            wrong,
            iter,
            tuning: None,
        })
    }

    /// `--timer device`: closes the gate on every queue and records the window's start event.
    fn hold_and_mark(&mut self) -> Result<EventId, Error> {
        self.backend.hold()?;
        self.backend.record_event()
    }

    /// `-c` verification runs: fill, one launch at the unrotated offset, wait, count wrong
    /// elements over all ranks; stops at the first run with errors.
    fn verify(&mut self, sweep: &Sweep, shape: &Shape, placement: Placement) -> Result<u64, Error> {
        let mut wrong = 0;
        for _ in 0..self.cfg.check {
            let case = self.check_case(sweep, shape, placement);
            verify::prepare(self.backend, &case)?;
            self.range_push(sweep, shape, placement, Phase::Verify);
            self.launch(sweep, shape, placement, 0, Phase::Verify)?;
            self.wait(sweep, shape, placement, "verification")?;
            self.range_pop();
            let local = verify::check(self.backend, &case)?;
            wrong = self.boot.sum_u64(local)?;
            if wrong > 0 {
                break;
            }
        }
        Ok(wrong)
    }

    fn check_case(&mut self, sweep: &Sweep, shape: &Shape, placement: Placement) -> CheckCase {
        let seed = self.next_seed;
        self.next_seed += 1;
        let info = self.backend.info();
        CheckCase {
            coll: self.plan.collective,
            dtype: sweep.dtype,
            op: sweep.op,
            root: sweep.root.unwrap_or(0),
            shape: *shape,
            nranks: self.plan.nranks,
            first_rank: info.first_rank,
            local_ranks: info.local_ranks,
            base: self.base_offset(shape, sweep.dtype, 0),
            placement,
            seed,
        }
    }
}
