//! Rank 0's decisions between phases, sent to every process: which rounds to measure again,
//! and which nodes get GPU-pair rounds.

use super::super::groups::Status;
use super::{num, stopped_answering, Run};
use crate::bench::job::coord::Coordinator;
use crate::core::error::Error;
use std::collections::BTreeSet;
use std::time::Instant;

impl Run<'_> {
    /// Measures again, whole, every round from `from` on with a group judged slow on a time
    /// (not timed out): the whole round, so that the second time meets the same concurrency
    /// (and contention) as the groups it is held against. Rank 0 decides which rounds.
    pub(super) fn confirm(
        &mut self,
        coord: &mut dyn Coordinator,
        from: usize,
        say: &mut dyn FnMut(&str),
    ) -> Result<(), Error> {
        let msg = if coord.rank() == 0 {
            let v = self.verdict();
            let rounds: BTreeSet<usize> = v
                .groups
                .iter()
                .filter(|g| g.round >= from && g.slow && g.status == Status::Ok)
                .map(|g| g.round)
                .collect();
            rounds
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        } else {
            String::new()
        };
        let step = self.step;
        self.step += 1;
        let alive = self.alive();
        let msg = coord
            .broadcast(
                step,
                &msg,
                &alive,
                Instant::now() + 4 * self.opts.spec.timeout,
            )?
            .ok_or_else(|| stopped_answering("the rounds to measure again"))?;
        for item in msg.split(',').filter(|s| !s.is_empty()) {
            let ri = num(item)?;
            if ri >= self.rounds.len() {
                return Err(Error::Backend(format!("locate: no round {ri}")));
            }
            self.measure_round(coord, ri, true, say)?;
            if self.left_out() {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The nodes that get pair rounds, agreed from rank 0 (none once a rank stopped
    /// answering: a split needs every rank).
    pub(super) fn pair_nodes(&mut self, coord: &mut dyn Coordinator) -> Result<Vec<usize>, Error> {
        let msg = if coord.rank() == 0 {
            let slow = self.verdict().slow_intra_nodes();
            if !self.silent.is_empty() && !slow.is_empty() {
                self.notes.push(
                    "intra-node pair rounds skipped: a rank stopped answering, and making their \
                     sub-communicators needs every rank"
                        .into(),
                );
            }
            if self.silent.is_empty() {
                slow.iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            } else {
                String::new()
            }
        } else {
            String::new()
        };
        let step = self.step;
        self.step += 1;
        let alive = self.alive();
        let got = coord
            .broadcast(
                step,
                &msg,
                &alive,
                Instant::now() + 4 * self.opts.spec.timeout,
            )?
            .ok_or_else(|| stopped_answering("the pair rounds"))?;
        got.split(',').filter(|s| !s.is_empty()).map(num).collect()
    }
}
