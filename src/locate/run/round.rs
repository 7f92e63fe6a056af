//! One round on every process: measure its groups, report the samples to rank 0, and learn
//! which ranks stopped answering.

use super::super::measure::measure;
use super::super::sample::{Outcome, Sample};
use super::{num, stopped_answering, Run};
use crate::bench::job::coord::{Coordinator, Wait};
use crate::core::error::Error;
use std::time::{Duration, Instant};

impl Run<'_> {
    /// How rank 0 waits for a round's samples, once its own are measured: a process whose
    /// partner stopped answering reports within `-T` of its last completed call, so `-T` after
    /// rank 0's own end (at least twice `-T` after the round's start) plus a margin, then on
    /// while a missing process still makes progress (a slow group), but never past the
    /// longest a round can take (every call of every group of a process taking `-T`). A
    /// process still missing then has stopped answering.
    fn report_wait(&self, start: Instant) -> Wait {
        let t = self.opts.spec.timeout;
        let margin = Duration::from_secs(2);
        let calls = (self.opts.spec.warmup + self.opts.spec.iters) as u32;
        let most = self.procs.iter().map(|p| p.1).max().unwrap_or(1) as u32;
        Wait {
            until: (Instant::now() + t).max(start + 2 * t) + margin,
            patience: t + margin,
            at_most: start + t * calls.saturating_mul(most) + t + margin,
        }
    }

    /// Processes that still answer.
    pub(super) fn alive(&self) -> Vec<bool> {
        self.procs
            .iter()
            .map(|&(first, n)| !(first..first + n).any(|r| self.silent.contains_key(&r)))
            .collect()
    }

    /// Round `ri` on every process (`again`: its confirmation): measure, report, learn who is
    /// out.
    pub(super) fn measure_round(
        &mut self,
        coord: &mut dyn Coordinator,
        ri: usize,
        again: bool,
        say: &mut dyn FnMut(&str),
    ) -> Result<(), Error> {
        let t0 = Instant::now();
        let mut lines = Vec::new();
        let mut split = std::mem::take(&mut self.made[ri]);
        for (color, b) in split.iter_mut() {
            let group = &self.rounds[ri].groups[*color];
            if group.members.iter().any(|r| self.silent.contains_key(r)) {
                continue;
            }
            let mine: Vec<usize> = group
                .members
                .iter()
                .copied()
                .filter(|r| self.mine().contains(r))
                .collect();
            let slow = self.switches.factor(&self.layout, &group.members, &mine);
            let outcome = measure(b.as_mut(), &self.opts.spec, slow);
            if matches!(outcome, Outcome::Timed(_)) {
                // The buffers go back until the confirmation needs them again.
                if let Err(e) = b.allocate(4, 4) {
                    lines.push(format!("N	round {} group {color}: {e}", ri + 1));
                }
            }
            for rank in mine {
                let s = Sample {
                    round: ri,
                    group: *color,
                    rank,
                    outcome: outcome.clone(),
                };
                lines.push(format!("S	{}", s.to_line()));
            }
        }
        self.made[ri] = split;
        let step = self.step;
        self.step += 1;
        let alive = self.alive();
        let wait = self.report_wait(t0);
        let got = coord.gather(step, &lines.join("\n"), &alive, wait)?;
        let decision = if coord.rank() == 0 {
            self.take_reports(ri, &got, &alive)
        } else {
            String::new()
        };
        let timeout = self.opts.spec.timeout;
        let msg = coord
            .broadcast(step, &decision, &alive, wait.at_most + timeout + timeout)?
            .ok_or_else(|| stopped_answering("its decision after a round"))?;
        for r in msg.split(',').filter(|s| !s.is_empty()) {
            self.silent.entry(num(r)?).or_insert(ri);
        }
        if coord.rank() == 0 {
            let n = self.rounds[ri].groups.len();
            let what = if again {
                format!("{n} groups measured again (a group was slow)")
            } else {
                format!("{n} groups")
            };
            say(&format!(
                "# round {} {}: {what}, {:.1} s",
                ri + 1,
                self.rounds[ri].kind.name(),
                t0.elapsed().as_secs_f64()
            ));
        }
        Ok(())
    }

    /// Rank 0: keeps the samples of a round (the faster of two measurements of one group),
    /// marks the processes that did not report, and returns the decision (every silent rank
    /// so far, comma-separated).
    fn take_reports(&mut self, ri: usize, got: &[Option<String>], alive: &[bool]) -> String {
        for (p, entry) in got.iter().enumerate() {
            if !alive.get(p).copied().unwrap_or(false) {
                continue;
            }
            match entry {
                Some(text) => {
                    for line in text.lines() {
                        if let Some(s) = line.strip_prefix("S\t").and_then(Sample::from_line) {
                            let key = (s.round, s.group, s.rank);
                            let keep = match (self.samples.get(&key), &s.outcome) {
                                (Some(Outcome::Timed(old)), Outcome::Timed(new)) => new < old,
                                (Some(Outcome::Timed(_)), _) => false,
                                _ => true,
                            };
                            if keep {
                                self.samples.insert(key, s.outcome);
                            }
                        } else if let Some(n) = line.strip_prefix("N\t") {
                            self.notes.push(n.to_string());
                        }
                    }
                }
                None => {
                    let (first, n) = self.procs[p];
                    for r in first..first + n {
                        self.silent.insert(r, ri);
                    }
                }
            }
        }
        let v: Vec<String> = self.silent.keys().map(usize::to_string).collect();
        v.join(",")
    }
}
