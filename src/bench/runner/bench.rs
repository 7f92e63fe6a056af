//! One measurement (nccl-tests' `BenchTime`): fill, one untimed launch, the timed loop of `-n`
//! iterations of `-m` grouped launches (optionally captured into a graph and replayed `-G`
//! times, optionally blocking per `-z`), per-iteration events for `-I`, the cross-rank time
//! reduction of `-a`, and `-c` verification runs (under `-G` each one a captured graph
//! replayed once, so the check covers what graphs compute). The timed section's two shapes,
//! stream and graph, are in `timed`.

use super::groups::{self, Share};
use super::timed::IterEvents;
use super::{Phase, Runner};
use crate::bench::plan::Sweep;
use crate::bench::verify::{self, CheckCase};
use crate::core::collective::Shape;
use crate::core::error::Error;
use crate::core::stats::{iter_stats, IterStats};
use crate::result::{GroupMeasurement, Measurement, Placement};
use std::time::Duration;

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
        self.untimed(sweep, shape, placement)?;
        self.range_push(sweep, shape, placement, Phase::Timed);
        let timed = if cfg.graph > 0 {
            self.timed_graph(sweep, shape, placement)?
        } else {
            self.timed_stream(sweep, shape, placement)?
        };
        self.range_pop();
        let per_op_us = |d: Duration| d.as_secs_f64() * 1e6 / timed.launches as f64;
        let local_us = per_op_us(timed.elapsed);
        let time_us = self.boot.reduce_time(local_us, cfg.average)?;
        let iter = match &timed.events {
            Some(events) => self.iteration_stats(events)?,
            None => None,
        };

        let coll = self.plan.collective;
        let algbw = coll.algbw_bytes(shape, sweep.dtype, self.plan.nranks) / (time_us * 1e-6) / 1e9;
        let busbw = algbw * coll.busbw_factor(self.plan.nranks);
        self.boot.barrier()?;
        let (local_wrong, wrong) = if checked {
            let (local, all) = self.verify(sweep, shape, placement)?;
            (Some(local), Some(all))
        } else {
            (None, None)
        };
        let groups = self.group_figures(sweep, shape, local_us, local_wrong)?;
        Ok(Measurement {
            time_us,
            cputime_us: timed.enqueue.as_secs_f64() * 1e6 / timed.cpu_launches as f64,
            algbw_gbs: algbw,
            busbw_gbs: busbw,
            wrong,
            iter,
            tuning: None,
            groups,
        })
    }

    /// `--per-group`: every split group's figures, on the root (elsewhere, and without the
    /// flag, empty). Collective over the world.
    fn group_figures(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        local_us: f64,
        local_wrong: Option<u64>,
    ) -> Result<Vec<GroupMeasurement>, Error> {
        let Some(color) = self.group else {
            return Ok(Vec::new());
        };
        let share = Share {
            color,
            ranks: self.backend.info().local_ranks,
            time_us: local_us,
            wrong: local_wrong,
        };
        let lines = self.boot.gather_lines(&[share.line()])?;
        if !self.boot.is_root() {
            return Ok(Vec::new());
        }
        let shares = lines
            .iter()
            .map(|l| Share::parse(l))
            .collect::<Result<Vec<_>, _>>()?;
        let coll = self.plan.collective;
        Ok(groups::reduce(&shares, self.cfg.average, |n, t| {
            let algbw = coll.algbw_bytes(shape, sweep.dtype, n) / (t * 1e-6) / 1e9;
            (algbw, algbw * coll.busbw_factor(n))
        }))
    }

    /// The `-c` fill and one untimed launch ahead of the timed section, then a barrier so that
    /// every rank starts timing together.
    fn untimed(&mut self, sweep: &Sweep, shape: &Shape, placement: Placement) -> Result<(), Error> {
        if self.cfg.check > 0 {
            let case = self.check_case(sweep, shape, placement);
            verify::prepare(self.backend, &case)?;
        }
        self.range_push(sweep, shape, placement, Phase::Untimed);
        self.start_coll(sweep, shape, placement, 0, Phase::Untimed)?;
        self.complete_coll(sweep, shape, placement, "untimed launch")?;
        self.range_pop();
        self.boot.barrier()
    }

    /// `-I`: each iteration's time per launch from its events, then per iteration the slowest
    /// process's, reduced to statistics past the first `-K` iterations.
    fn iteration_stats(&mut self, events: &IterEvents) -> Result<Option<IterStats>, Error> {
        let m = f64::from(self.cfg.agg_iters);
        let mut times = Vec::with_capacity(events.starts.len());
        for (&s, &e) in events.starts.iter().zip(&events.ends) {
            let d = self.backend.event_elapsed(s, e)?;
            times.push(d.as_secs_f64() * 1e6 / m);
        }
        self.backend.release_events()?;
        // Every process's own times on rank 0 (nccl-tests' per-process rows), then per
        // iteration the slowest process.
        let per_process = self.per_process_times(&times)?;
        let times = self.boot.max_f64s(&times)?;
        Ok(iter_stats(&times, self.cfg.per_iter_skip).map(|mut s| {
            s.per_process_max_times_us = per_process;
            s
        }))
    }

    /// Each process's per-iteration times, in world-rank order, on rank 0 (elsewhere, and in a
    /// single process, empty). Sent as the exact bits, so their maximum is `times_us` exactly.
    fn per_process_times(&mut self, times: &[f64]) -> Result<Vec<Vec<f64>>, Error> {
        if self.boot.world_size() < 2 {
            return Ok(Vec::new());
        }
        let line: Vec<String> = times.iter().map(|t| format!("{:x}", t.to_bits())).collect();
        let lines = self.boot.gather_lines(&[line.join(" ")])?;
        lines
            .iter()
            .map(|l| {
                l.split_whitespace()
                    .map(|w| u64::from_str_radix(w, 16).map(f64::from_bits))
                    .collect::<Result<Vec<f64>, _>>()
                    .map_err(|_| Error::Backend(format!("a process sent bad -I times: {l:?}")))
            })
            .collect()
    }

    /// `-c` verification runs: fill, one launch at the unrotated offset (under `-G` captured
    /// and replayed once, as nccl-tests does), wait, count wrong elements over all ranks;
    /// stops at the first run with errors. Returns this process's count of the last run and
    /// the job's.
    fn verify(
        &mut self,
        sweep: &Sweep,
        shape: &Shape,
        placement: Placement,
    ) -> Result<(u64, u64), Error> {
        let mut wrong = 0;
        let mut mine = 0;
        for _ in 0..self.cfg.check {
            let case = self.check_case(sweep, shape, placement);
            verify::prepare(self.backend, &case)?;
            self.range_push(sweep, shape, placement, Phase::Verify);
            if self.cfg.graph > 0 {
                self.begin_capture()?;
                self.start_coll(sweep, shape, placement, 0, Phase::Verify)?;
                let g = self.end_capture()?;
                self.backend.launch_graph(g)?;
                // A replay is never waited for by its launch, whatever -z says.
                self.wait(sweep, shape, placement, "verification")?;
                self.backend.destroy_graphs()?;
            } else {
                self.start_coll(sweep, shape, placement, 0, Phase::Verify)?;
                self.complete_coll(sweep, shape, placement, "verification")?;
            }
            self.range_pop();
            mine = verify::check(self.backend, &case)?;
            wrong = self.boot.sum_u64(mine)?;
            if wrong > 0 {
                break;
            }
        }
        Ok((mine, wrong))
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
            traffic: self.plan.traffic.clone(),
            nranks: self.plan.nranks,
            first_rank: info.first_rank,
            local_ranks: info.local_ranks,
            base: self.base_offset(shape, sweep.dtype, 0),
            placement,
            seed,
        }
    }
}
