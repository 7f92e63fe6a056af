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

mod decisions;
mod layout_exchange;
mod phases;
mod round;

use super::inject::Switches;
use super::layout::Layout;
use super::measure::Spec;
use super::sample::Outcome;
use super::schedule::Round;
use super::verdict::{Floors, Verdict};
use crate::bench::backend::{Backend, BackendInfo, Split};
use crate::bench::job::coord::Coordinator;
use crate::core::error::Error;
use layout_exchange::agree_layout;
use std::collections::BTreeMap;
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

fn num(s: &str) -> Result<usize, Error> {
    s.parse()
        .map_err(|_| Error::Backend(format!("locate: bad number {s:?} in a message")))
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
