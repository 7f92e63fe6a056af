//! The protocol every process of a locate run follows, with rank 0 as the judge:
//!
//! 1. Rank 0 gathers each process's host and ranks and sends every process the layout (after
//!    the test switch `NCCLBENCH_TEST_HOSTNAMES`), so all derive the same rounds.
//! 2. Every process makes the sub-communicators of all rounds up front (a split is collective
//!    over the job: done before anything is measured, so a rank that stops answering later
//!    cannot hang one).
//! 3. Round by round, each process measures its groups and sends its samples to rank 0, which
//!    waits for them until the round's deadline. A process that did not report by then has
//!    stopped answering: it is left out of every later group, and rank 0's decision after
//!    each round tells every process which ranks are out.
//! 4. Every round with a group judged slow is measured again, whole, on its sub-communicators
//!    (kept for this), and each group keeps the faster of its two times: a fault is slow both
//!    times, a burst of noise (another job, a descheduled process) rarely hits one group
//!    twice. The whole round, so that the second times meet the same concurrency.
//! 5. After the rail rounds, nodes whose intra-node group was slow get GPU-pair rounds (when
//!    no rank stopped answering: their sub-communicators need every rank), confirmed alike.
//! 6. Rank 0 judges everything ([`Verdict`]); the caller reports and ends the job
//!    ([`finish`]).

use super::groups::Status;
use super::inject::Switches;
use super::layout::{hosts_with_test_names, Layout};
use super::measure::{measure, Spec};
use super::sample::{Outcome, Sample};
use super::schedule::{self, Round};
use super::verdict::{Floors, Verdict};
use crate::bench::backend::{Backend, BackendInfo, Split};
use crate::bench::job::coord::{Coordinator, Wait};
use crate::core::error::Error;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// What a locate run measures and how it judges.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Each group's measurement.
    pub spec: Spec,
    /// Rail rounds (partners each node meets).
    pub rounds: usize,
    /// Intra-node pair rounds on slow nodes.
    pub pair_rounds: usize,
    /// Profile floors.
    pub floors: Floors,
}

/// Rank 0's result of a run.
#[derive(Debug, Clone)]
pub struct Finding {
    /// Where every rank is.
    pub layout: Layout,
    /// Every round measured, in order.
    pub rounds: Vec<Round>,
    /// The judgement.
    pub verdict: Verdict,
    /// Ranks that stopped answering, and the round they went silent in.
    pub silent: BTreeMap<usize, usize>,
    /// Remarks for the report (pair rounds skipped, sub-communicators not closed cleanly).
    pub notes: Vec<String>,
}

/// One process's ranks: the first global rank and how many.
type Procs = Vec<(usize, usize)>;

/// How the run ended on this process.
#[derive(Debug)]
pub enum Role {
    /// Rank 0, with the judgement.
    Judge(Box<Finding>),
    /// Another process that took part to the end.
    Member {
        /// Whether some rank stopped answering (then the job cannot shut down together).
        anyone_silent: bool,
    },
    /// A process rank 0 left out (it reported too late): it takes no further part and waits
    /// for rank 0 to end the job.
    LeftOut,
}

/// The exchange number of [`finish`] (after every round's).
const FINAL_STEP: u32 = 4000;

/// The whole run on this process. `say` prints rank 0's progress lines.
pub fn run(
    opts: &Options,
    backend: &mut dyn Backend,
    coord: &mut dyn Coordinator,
    switches: &Switches,
    say: &mut dyn FnMut(&str),
) -> Result<Role, Error> {
    let info = backend.info().clone();
    let (layout, procs) = agree_layout(&info, coord, opts.spec.timeout)?;
    let mut run = Run {
        opts,
        info,
        layout,
        procs,
        switches,
        rounds: Vec::new(),
        made: Vec::new(),
        samples: BTreeMap::new(),
        silent: BTreeMap::new(),
        notes: Vec::new(),
        step: 1,
    };
    let result = run.phases(backend, coord, say);
    // A sub-communicator with a rank that stopped answering may never close: only a job whose
    // every rank answered shuts them down (rank 0 notes its own closing errors).
    let made = std::mem::take(&mut run.made);
    if run.silent.is_empty() {
        for (color, mut b) in made.into_iter().flatten() {
            if let Err(e) = b.close() {
                run.notes.push(format!(
                    "closing the sub-communicator of group {color}: {e}"
                ));
            }
        }
    } else {
        std::mem::forget(made);
    }
    result?;
    if run.left_out() {
        return Ok(Role::LeftOut);
    }
    if coord.rank() != 0 {
        return Ok(Role::Member {
            anyone_silent: !run.silent.is_empty(),
        });
    }
    let verdict = run.verdict();
    Ok(Role::Judge(Box::new(Finding {
        layout: run.layout,
        rounds: run.rounds,
        verdict,
        silent: run.silent,
        notes: run.notes,
    })))
}

/// Rank 0 tells every process that still answers the exit status, and every process returns
/// it; when some process stopped answering, rank 0 ends the whole job with it instead
/// (`end_all`), since such a job cannot shut down together.
pub fn finish(
    coord: &mut dyn Coordinator,
    status: u8,
    anyone_silent: bool,
    timeout: Duration,
) -> Result<u8, Error> {
    let all = vec![true; coord.size()];
    let got = coord.broadcast(
        FINAL_STEP,
        &status.to_string(),
        &all,
        Instant::now() + timeout,
    )?;
    if coord.rank() == 0 && anyone_silent {
        coord.end_all(status);
    }
    got.and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| stopped_answering("the final status"))
}

fn stopped_answering(what: &str) -> Error {
    Error::Timeout {
        seconds: 0,
        what: format!("rank 0 to send {what} (rank 0 stopped answering)"),
    }
}

/// Step 1 of the protocol: the layout every process derives the rounds from.
fn agree_layout(
    info: &BackendInfo,
    coord: &mut dyn Coordinator,
    timeout: Duration,
) -> Result<(Layout, Procs), Error> {
    let all = vec![true; coord.size()];
    let mine = format!(
        "{}\t{}\t{}",
        crate::core::host::short_hostname(),
        info.first_rank,
        info.local_ranks
    );
    let got = coord.gather(0, &mine, &all, Wait::until(Instant::now() + timeout))?;
    let msg = if coord.rank() == 0 {
        layout_message(info.nranks, &got)?
    } else {
        String::new()
    };
    let msg = coord
        .broadcast(0, &msg, &all, Instant::now() + 2 * timeout)?
        .ok_or_else(|| stopped_answering("the layout"))?;
    let (mut hosts, mut procs) = (Vec::new(), Vec::new());
    for line in msg.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        match f.as_slice() {
            ["P", a, b] => procs.push((num(a)?, num(b)?)),
            ["H", h] => hosts.push(h.to_string()),
            _ => return Err(Error::Backend(format!("locate: bad layout line {line:?}"))),
        }
    }
    Ok((Layout::new(&hosts), procs))
}

fn num(s: &str) -> Result<usize, Error> {
    s.parse()
        .map_err(|_| Error::Backend(format!("locate: bad number {s:?} in a message")))
}

/// Rank 0's layout message: a `P first count` line per process, an `H host` line per rank.
fn layout_message(nranks: usize, got: &[Option<String>]) -> Result<String, Error> {
    let mut hosts = vec![String::new(); nranks];
    let mut lines = Vec::new();
    for (p, entry) in got.iter().enumerate() {
        let entry = entry.as_deref().ok_or_else(|| Error::Timeout {
            seconds: 0,
            what: format!("process {p} to say where it runs (locate's first exchange)"),
        })?;
        let f: Vec<&str> = entry.split('\t').collect();
        let (host, first, count) = match f.as_slice() {
            [h, a, b] => (*h, num(a)?, num(b)?),
            _ => return Err(Error::Backend(format!("locate: bad entry {entry:?}"))),
        };
        for r in first..first + count {
            if let Some(slot) = hosts.get_mut(r) {
                *slot = host.to_string();
            }
        }
        lines.push(format!("P\t{first}\t{count}"));
    }
    if let Some(r) = hosts.iter().position(String::is_empty) {
        return Err(Error::Backend(format!(
            "locate: no process drives rank {r}"
        )));
    }
    let switch = std::env::var("NCCLBENCH_TEST_HOSTNAMES").ok();
    let hosts = hosts_with_test_names(hosts, switch.as_deref()).map_err(Error::Usage)?;
    lines.extend(hosts.iter().map(|h| format!("H\t{h}")));
    Ok(lines.join("\n"))
}

/// The state of a run in progress.
struct Run<'a> {
    opts: &'a Options,
    info: BackendInfo,
    layout: Layout,
    procs: Procs,
    switches: &'a Switches,
    /// Rounds measured so far (a sample's `round` indexes this).
    rounds: Vec<Round>,
    /// This process's sub-communicators of each round, kept for the confirmation.
    made: Vec<Split>,
    /// Every sample so far (rank 0), the faster of a group's two measurements.
    samples: BTreeMap<(usize, usize, usize), Outcome>,
    /// Ranks that stopped answering, with their round.
    silent: BTreeMap<usize, usize>,
    notes: Vec<String>,
    /// The next exchange's number.
    step: u32,
}

impl Run<'_> {
    /// Intra-node and rail rounds, their confirmation, then pairs and theirs.
    fn phases(
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
    fn left_out(&self) -> bool {
        self.mine().any(|r| self.silent.contains_key(&r))
    }

    /// This process's global ranks.
    fn mine(&self) -> std::ops::Range<usize> {
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
    fn alive(&self) -> Vec<bool> {
        self.procs
            .iter()
            .map(|&(first, n)| !(first..first + n).any(|r| self.silent.contains_key(&r)))
            .collect()
    }

    /// Round `ri` on every process (`again`: its confirmation): measure, report, learn who is
    /// out.
    fn measure_round(
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

    /// Measures again, whole, every round from `from` on with a group judged slow on a time
    /// (not timed out): the whole round, so that the second time meets the same concurrency
    /// (and contention) as the groups it is held against. Rank 0 decides which rounds.
    fn confirm(
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
    fn pair_nodes(&mut self, coord: &mut dyn Coordinator) -> Result<Vec<usize>, Error> {
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

    /// Rank 0's judgement of everything so far.
    fn verdict(&self) -> Verdict {
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
