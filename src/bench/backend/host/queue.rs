//! The rank workers: one thread per rank, each draining an in-order queue like a CUDA stream.
//!
//! Enqueueing never blocks. A shared counter of unfinished tasks (with a condition variable)
//! lets the backend wait for all queues to drain; event markers store when each worker reached
//! them; the first failure of any worker is kept for the next wait to return.

use super::arena::Arena;
use super::barrier::Barrier;
use super::exec::{self, Scratch};
use crate::bench::backend::Call;
use crate::core::error::Error;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One entry of a rank's queue.
pub(super) enum Task {
    /// Run the rank's part of a call on these buffers.
    Run(Arc<Call>, Arc<Arena>),
    /// Store the time this rank reaches the marker in event `.0`.
    Mark(usize),
    /// Block this worker until the gate opens (`--timer device`; tests keep work queued).
    Hold(Arc<super::gate::Gate>),
}

/// State shared by the backend and its workers.
struct Shared {
    nranks: usize,
    /// Tasks enqueued and not yet finished, over all queues.
    pending: Mutex<usize>,
    idle: Condvar,
    /// The first failure since the last wait.
    error: Mutex<Option<Error>>,
    /// Per event, per rank: when the worker reached the marker.
    events: Mutex<Vec<Vec<Option<Instant>>>>,
    barrier: Barrier,
    /// Set on drop: workers skip what is left.
    stop: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No critical section here can panic halfway, so a poisoned value is still consistent.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn fail(&self, e: Error) {
        lock(&self.error).get_or_insert(e);
    }

    fn finish(&self, tasks: usize) {
        let mut p = lock(&self.pending);
        *p -= tasks;
        if *p == 0 {
            self.idle.notify_all();
        }
    }
}

/// The workers and the sending ends of their queues.
pub(super) struct Queues {
    shared: Arc<Shared>,
    senders: Vec<Sender<Task>>,
    threads: Vec<JoinHandle<()>>,
    /// Events handed out since the last `release_events`; those past it are kept for reuse.
    events_used: usize,
}

impl Queues {
    /// Starts one worker thread per rank.
    pub(super) fn start(nranks: usize) -> Result<Queues, Error> {
        let shared = Arc::new(Shared {
            nranks,
            pending: Mutex::new(0),
            idle: Condvar::new(),
            error: Mutex::new(None),
            events: Mutex::new(Vec::new()),
            barrier: Barrier::new(nranks),
            stop: AtomicBool::new(false),
        });
        let mut queues = Queues {
            shared,
            senders: Vec::new(),
            threads: Vec::new(),
            events_used: 0,
        };
        for rank in 0..nranks {
            let (tx, rx) = channel();
            let shared = queues.shared.clone();
            let thread = std::thread::Builder::new()
                .name(format!("host-rank-{rank}"))
                .spawn(move || {
                    let mut scratch = Scratch::default();
                    while let Ok(task) = rx.recv() {
                        // The task (and its hold on the buffers) is gone before it counts
                        // as finished, so an idle backend owns its buffers alone.
                        if shared.stop.load(Ordering::Relaxed) {
                            drop(task);
                        } else {
                            work(rank, &shared, task, &mut scratch);
                        }
                        shared.finish(1);
                    }
                })
                .map_err(|e| Error::Backend(format!("host backend: cannot start a thread: {e}")))?;
            queues.senders.push(tx);
            queues.threads.push(thread);
        }
        Ok(queues)
    }

    /// Puts a `task()` at the end of every rank's queue.
    pub(super) fn push_all(&self, task: impl Fn() -> Task) {
        *lock(&self.shared.pending) += self.senders.len();
        for tx in &self.senders {
            if tx.send(task()).is_err() {
                self.shared.finish(1);
                self.shared.fail(Error::Backend(
                    "host backend: a worker thread is gone".into(),
                ));
            }
        }
    }

    /// Blocks until every queue is empty, or until `deadline`; then returns the first worker
    /// failure, if any.
    pub(super) fn wait(&self, deadline: Option<Instant>) -> Result<(), Error> {
        let entered = Instant::now();
        let mut p = lock(&self.shared.pending);
        while *p > 0 {
            match deadline {
                None => p = self.shared.idle.wait(p).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        let limit = d.saturating_duration_since(entered).as_secs_f64();
                        return Err(Error::Timeout {
                            seconds: limit.round() as u64,
                            what: "the host backend's rank queues".into(),
                        });
                    }
                    p = self
                        .shared
                        .idle
                        .wait_timeout(p, d - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
        drop(p);
        match lock(&self.shared.error).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Makes the next `n` events exist, so that handing them out allocates nothing.
    pub(super) fn reserve_events(&self, n: usize) {
        let mut ev = lock(&self.shared.events);
        let want = self.events_used + n;
        if ev.len() < want {
            ev.resize(want, vec![None; self.shared.nranks]);
        }
    }

    /// The next event, not yet reached by any rank (a reserved one when left).
    pub(super) fn new_event(&mut self) -> usize {
        self.reserve_events(1);
        let id = self.events_used;
        lock(&self.shared.events)[id].fill(None);
        self.events_used += 1;
        id
    }

    /// Every event handed out may be handed out again (its marks are stale by then: the
    /// caller waited for the queues and read what it needed).
    pub(super) fn release_events(&mut self) {
        self.events_used = 0;
    }

    /// The largest per-rank time from event `a` to event `b`.
    pub(super) fn elapsed(&self, a: usize, b: usize) -> Result<Duration, Error> {
        let ev = lock(&self.shared.events);
        let ev = &ev[..self.events_used.min(ev.len())];
        let (Some(ta), Some(tb)) = (ev.get(a), ev.get(b)) else {
            return Err(Error::Backend("host backend: unknown event".into()));
        };
        ta.iter()
            .zip(tb)
            .map(|(x, y)| match (x, y) {
                (Some(x), Some(y)) => Ok(y.saturating_duration_since(*x)),
                _ => Err(Error::Backend(
                    "host backend: event timing asked before both events completed".into(),
                )),
            })
            .try_fold(Duration::ZERO, |m, d| Ok(m.max(d?)))
    }
}

/// Runs one task on `rank`'s worker; a panic (a bug) becomes an error and stops the others.
fn work(rank: usize, shared: &Shared, task: Task, scratch: &mut Scratch) {
    match task {
        Task::Run(call, arena) => {
            let run = || exec::run(rank, shared.nranks, &call, &arena, &shared.barrier, scratch);
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => shared.fail(e),
                Err(_) => {
                    shared.barrier.break_all();
                    shared.fail(Error::Backend(format!(
                        "host backend: rank {rank}'s worker failed running {}",
                        call.coll
                    )));
                }
            }
        }
        Task::Mark(id) => {
            if let Some(slot) = lock(&shared.events)
                .get_mut(id)
                .and_then(|e| e.get_mut(rank))
            {
                *slot = Some(Instant::now());
            }
        }
        Task::Hold(gate) => gate.pass(),
    }
}

impl Drop for Queues {
    /// Skips what is still queued, releases any worker waiting at a barrier, and joins all.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.barrier.break_all();
        self.senders.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
