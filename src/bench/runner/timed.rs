//! The timed section of one measurement, in its two shapes: the stream loop (`-n` iterations of
//! `-m` grouped launches, blocking per `-z`, with per-iteration events for `-I`) and graph mode
//! (the same loop captured once and replayed `-G` times). Either shape is timed by the host
//! clock or, under `--timer device`, by events around a gate that holds every queue until the
//! section is enqueued.

use super::{Phase, Runner};
use crate::bench::backend::EventId;
use crate::bench::plan::Sweep;
use crate::config::Timer;
use crate::core::collective::Shape;
use crate::core::error::Error;
use crate::result::Placement;
use std::time::{Duration, Instant};

/// What a timed section measured on this process, before the cross-rank reduction.
pub(super) struct Timed {
    /// The section's time: the host clock, the summed iterations of `-z 3`, or the device
    /// window.
    pub(super) elapsed: Duration,
    /// Host time spent enqueueing (the `cputime` column).
    pub(super) enqueue: Duration,
    /// Collective calls the time covers; per-call times divide by it.
    pub(super) launches: u64,
    /// What the enqueue time is divided by: `-n` x `-m`, also under `-G` (nccl-tests divides
    /// only the time column by the replays too).
    pub(super) cpu_launches: u64,
    /// `-I`: the iterations' events, not yet read.
    pub(super) events: Option<IterEvents>,
}

/// `-I`: each iteration's start and end event, in iteration order.
pub(super) struct IterEvents {
    pub(super) starts: Vec<EventId>,
    pub(super) ends: Vec<EventId>,
}

/// What the iterations leave for the section's timing.
struct Iterations {
    /// Empty unless `-I`.
    events: IterEvents,
    /// `-z 3`: host time of the iterations, each up to its wait, the barriers after them left
    /// out.
    blocked: Duration,
}

/// The clocks a timed section runs on.
struct Clock {
    /// The host clock's start.
    t0: Instant,
    /// `--timer device`: the window's start event, queued behind the closed gate.
    gate: Option<EventId>,
}

impl Runner<'_> {
    /// Stream mode: the iterations run on the queues as they are enqueued.
    pub(super) fn timed_stream(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
    ) -> Result<Timed, Error> {
        let cfg = self.cfg;
        let (n, m) = (u64::from(cfg.iters), u64::from(cfg.agg_iters));
        let z3 = cfg.blocking == 3;
        // Every event the section records exists before its clock starts (nccl-tests creates
        // them ahead of the loop too): -I's, one per iteration boundary (a start and a stop per
        // iteration under -z 3), and the device timer's two.
        let per_iter_events = match (cfg.per_iter, z3) {
            (false, _) => 0,
            (true, true) => 2 * n,
            (true, false) => n + 1,
        };
        self.backend
            .reserve_events(self.clock_events() + per_iter_events as usize)?;
        let clock = self.start_clock()?;
        let iters = self.iterations(sweep, shape, placement, cfg.per_iter)?;
        let enqueue = if z3 {
            iters.blocked
        } else {
            clock.t0.elapsed()
        };
        let window = self.close_gate(clock.gate)?;
        self.complete_coll(sweep, shape, placement, "timed loop")?;
        let mut elapsed = if z3 {
            iters.blocked
        } else {
            clock.t0.elapsed()
        };
        if let Some(window) = window {
            // `-I` still reads its events, and releases them after.
            elapsed = self.device_time(window, !cfg.per_iter)?;
        }
        if cfg.per_iter {
            // The last events may still be queued (blocking modes skip the final wait).
            self.wait(sweep, shape, placement, "per-iteration events")?;
        }
        Ok(Timed {
            elapsed,
            enqueue,
            launches: n * m,
            cpu_launches: n * m,
            events: cfg.per_iter.then_some(iters.events),
        })
    }

    /// Graph mode (`-G`): the iterations are captured once, then the graph is replayed `-G`
    /// times. The capture takes no `-z` waits and no `-I` events: nothing runs while it is
    /// captured, so there is nothing to wait for or to time per iteration. The replays are
    /// always waited for.
    pub(super) fn timed_graph(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
    ) -> Result<Timed, Error> {
        let cfg = self.cfg;
        let (n, m) = (u64::from(cfg.iters), u64::from(cfg.agg_iters));
        self.backend.reserve_events(self.clock_events())?;
        self.begin_capture()?;
        self.iterations(sweep, shape, placement, false)?;
        let g = self.end_capture()?;
        self.boot.barrier()?;
        let clock = self.start_clock()?;
        for _ in 0..cfg.graph {
            self.backend.launch_graph(g)?;
        }
        let enqueue = clock.t0.elapsed();
        let window = self.close_gate(clock.gate)?;
        self.wait(sweep, shape, placement, "timed loop")?;
        let mut elapsed = clock.t0.elapsed();
        if let Some(window) = window {
            elapsed = self.device_time(window, true)?;
        }
        self.backend.destroy_graphs()?;
        Ok(Timed {
            elapsed,
            enqueue,
            launches: n * m * u64::from(cfg.graph),
            cpu_launches: n * m,
            events: None,
        })
    }

    /// The `-n` iterations of `-m` launches, grouped when `-m` > 1. Each launch blocks per
    /// `-z` ([`Runner::start_coll`]); `-z 3` also waits and barriers after each iteration.
    /// `per_iter` (`-I`) records an event at each iteration's start and end, into events
    /// reserved before.
    fn iterations(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
        per_iter: bool,
    ) -> Result<Iterations, Error> {
        let (n, m) = (u64::from(self.cfg.iters), u64::from(self.cfg.agg_iters));
        // Nothing runs under capture, so there is no iteration to wait for.
        let z3 = self.cfg.blocking == 3 && !self.capturing;
        let slots = if per_iter { n as usize + 1 } else { 0 };
        let mut starts = Vec::with_capacity(slots);
        let mut ends = Vec::with_capacity(slots);
        let mut blocked = Duration::ZERO;
        for iter in 0..n {
            // Only -z 3 times single iterations; a clock read per iteration costs the others.
            let it_start = z3.then(Instant::now);
            if per_iter {
                starts.push(self.backend.record_event()?);
            }
            if m > 1 {
                self.group_start()?;
            }
            for a in 0..m {
                self.start_coll(sweep, shape, placement, iter * m + a, Phase::Timed)?;
            }
            if m > 1 {
                self.group_end()?;
            }
            if z3 {
                self.wait(sweep, shape, placement, "blocking iteration")?;
                if per_iter {
                    ends.push(self.backend.record_event()?);
                }
                blocked += it_start.map_or(Duration::ZERO, |t| t.elapsed());
                self.boot.barrier()?;
            }
        }
        if per_iter && !z3 {
            // Back to back on the queue, an iteration ends where the next one starts.
            ends.extend(starts.iter().skip(1).copied());
            ends.push(self.backend.record_event()?);
        }
        Ok(Iterations {
            events: IterEvents { starts, ends },
            blocked,
        })
    }

    /// Events the section's clocks record: the device window's two.
    fn clock_events(&self) -> usize {
        if self.cfg.timer == Timer::Device {
            2
        } else {
            0
        }
    }

    /// Starts a section's clocks. `--timer device` closes the gate on every queue first, so
    /// the section queues behind it and the window's start event does not wait for the host.
    fn start_clock(&mut self) -> Result<Clock, Error> {
        let gate = if self.cfg.timer == Timer::Device {
            self.backend.hold()?;
            Some(self.backend.record_event()?)
        } else {
            None
        };
        Ok(Clock {
            t0: Instant::now(),
            gate,
        })
    }

    /// `--timer device`: records the window's end event and opens the gate; the window is
    /// (start, end). Says once per run when the gate had opened on its own, since the device
    /// time then includes launch cost.
    fn close_gate(&mut self, gate: Option<EventId>) -> Result<Option<(EventId, EventId)>, Error> {
        let Some(start) = gate else {
            return Ok(None);
        };
        let end = self.backend.record_event()?;
        // Across processes the gates open together, after every process has enqueued: a
        // gate opened alone would start this process's window while its peers still enqueue,
        // and its time would include that wait (the host timer's start is aligned by the
        // barrier before it the same way).
        if self.boot.world_size() > 1 {
            self.boot.barrier()?;
        }
        if !self.backend.release()? && !self.hold_expired_noted {
            self.hold_expired_noted = true;
            self.sinks.notice(&format!(
                "# --timer device: enqueueing the timed loop took longer than {} s, so the \
                 gate opened early and the device time includes part of the launch cost",
                crate::bench::backend::HOLD_LIMIT.as_secs()
            ))?;
        }
        Ok(Some((start, end)))
    }

    /// `--timer device`: the window's time, read after the section's wait; `release` frees
    /// the events, which `-I` keeps until it has read its own.
    fn device_time(
        &mut self,
        (start, end): (EventId, EventId),
        release: bool,
    ) -> Result<Duration, Error> {
        let elapsed = self.backend.event_elapsed(start, end)?;
        if release {
            self.backend.release_events()?;
        }
        Ok(elapsed)
    }
}
