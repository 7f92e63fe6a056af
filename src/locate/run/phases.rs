//! The order of a run's phases, and what a run knows of itself: its ranks, its
//! sub-communicators, and rank 0's judgement so far.

use super::super::sample::Sample;
use super::super::schedule::{self, Round};
use super::super::verdict::Verdict;
use super::Run;
use crate::bench::backend::{Backend, Split};
use crate::bench::job::coord::Coordinator;
use crate::core::error::Error;

impl Run<'_> {
    /// Intra-node and rail rounds, their confirmation, then pairs and theirs.
    pub(super) fn phases(
        &mut self,
        backend: &mut dyn Backend,
        coord: &mut dyn Coordinator,
        say: &mut dyn FnMut(&str),
    ) -> Result<(), Error> {
        let mut first = vec![schedule::intra(&self.layout)];
        first.extend(schedule::rails(&self.layout, self.opts.rounds));
        first.retain(|r| !r.groups.is_empty());
        let made = self.split_all(backend, &first)?;
        for (round, split) in first.into_iter().zip(made) {
            self.rounds.push(round);
            self.made.push(split);
            self.measure_round(coord, self.rounds.len() - 1, false, say)?;
            if self.left_out() {
                return Ok(());
            }
        }
        self.confirm(coord, 0, say)?;
        if self.left_out() {
            return Ok(());
        }
        let pairs = self.pair_nodes(coord)?;
        if pairs.is_empty() {
            return Ok(());
        }
        let from = self.rounds.len();
        let rounds = schedule::pairs(&self.layout, &pairs, self.opts.pair_rounds);
        let made = self.split_all(backend, &rounds)?;
        for (round, split) in rounds.into_iter().zip(made) {
            self.rounds.push(round);
            self.made.push(split);
            self.measure_round(coord, self.rounds.len() - 1, false, say)?;
            if self.left_out() {
                return Ok(());
            }
        }
        self.confirm(coord, from, say)
    }

    /// Whether rank 0 counted this process as silent (it reported too late).
    pub(super) fn left_out(&self) -> bool {
        self.mine().any(|r| self.silent.contains_key(&r))
    }

    /// This process's global ranks.
    pub(super) fn mine(&self) -> std::ops::Range<usize> {
        self.info.first_rank..self.info.first_rank + self.info.local_ranks
    }

    /// The sub-communicators of every round, made up front.
    fn split_all(&self, backend: &mut dyn Backend, rounds: &[Round]) -> Result<Vec<Split>, Error> {
        rounds
            .iter()
            .map(|r| {
                let colors: Vec<Option<usize>> = self.mine().map(|g| r.color_of(g)).collect();
                let mut split = backend.split(&colors)?;
                split.sort_by_key(|(c, _)| *c);
                Ok(split)
            })
            .collect()
    }

    /// Rank 0's judgement of everything so far.
    pub(super) fn verdict(&self) -> Verdict {
        let (bytes, coll) = (self.opts.spec.bytes as f64, self.opts.spec.coll);
        let busbw = move |t_us: f64, n: usize| bytes / t_us / 1e3 * coll.busbw_factor(n);
        let samples: Vec<Sample> = self
            .samples
            .iter()
            .map(|(&(round, group, rank), o)| Sample {
                round,
                group,
                rank,
                outcome: o.clone(),
            })
            .collect();
        Verdict::new(
            &self.layout,
            &self.rounds,
            &samples,
            &self.silent,
            &busbw,
            self.opts.floors,
        )
    }
}
