//! The out-of-band channel of the hang diagnosis: one TCP connection from every rank to rank 0,
//! set up at start (rank 0's address is broadcast with MPI) and served by threads that never
//! touch MPI, so they answer while a main thread is stuck inside an MPI call or stalled.
//!
//! Rank 0's threads keep each rank's latest progress. When any rank times out (or a connection
//! drops before the run finished: a rank died), rank 0 asks every live rank for its progress,
//! waits up to 2 s, prints the table and verdict of [`crate::bench::job::hang::report`] to stderr,
//! tells every rank to exit 4 and exits 4 itself: within the deadline plus a few seconds,
//! whichever rank is stuck. A rank that loses rank 0 exits 4 by itself.
//!
//! The address: 127.0.0.1 when every rank runs on one host, else the first IPv4 address of
//! rank 0's host name; `NCCLBENCH_OOB_ADDR` overrides it (the interface to listen on).

use super::track::Tracker;
use crate::bench::job::hang::{self, Progress};
use crate::core::error::Error;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a rank waits for the verdict before exiting on its own.
const GRACE: Duration = Duration::from_secs(8);

struct Shared {
    rank: usize,
    seconds: u64,
    tracker: Arc<Tracker>,
    finished: AtomicBool,
    triggered: AtomicBool,
    /// Root: each member's write half, latest report and whether it is gone.
    members: Mutex<Vec<Option<TcpStream>>>,
    reports: Mutex<Vec<Option<Progress>>>,
    lost: Mutex<Vec<bool>>,
}

/// This rank's end of the channel.
pub struct Oob {
    shared: Arc<Shared>,
    to_root: Option<Arc<Mutex<TcpStream>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn io(e: std::io::Error) -> Error {
    Error::Backend(format!("hang-diagnosis channel: {e}"))
}

/// Rank 0: listens and returns the address to broadcast.
pub(super) fn listen(one_host: bool) -> Result<(TcpListener, String), Error> {
    let ip = match std::env::var("NCCLBENCH_OOB_ADDR") {
        Ok(a) if !a.trim().is_empty() => a.trim().to_string(),
        _ if one_host => "127.0.0.1".to_string(),
        _ => (crate::core::host::short_hostname().as_str(), 0)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.find(SocketAddr::is_ipv4))
            .map_or("127.0.0.1".to_string(), |a| a.ip().to_string()),
    };
    let l = TcpListener::bind((ip.as_str(), 0)).map_err(io)?;
    let port = l.local_addr().map_err(io)?.port();
    Ok((l, format!("{ip}:{port}")))
}

/// Marks the run over from outside the channel (the bootstrap, when the job stops on a
/// failure every process agreed on): closed connections are expected from then on.
#[derive(Clone)]
pub struct Finish(Arc<Shared>);

impl Finish {
    /// See [`Oob::finished`].
    pub fn mark(&self) {
        self.0.finished.store(true, Ordering::SeqCst);
    }
}

impl Oob {
    /// A handle on [`Oob::finished`] for the bootstrap.
    pub fn finish_handle(&self) -> Finish {
        Finish(self.shared.clone())
    }

    /// Rank 0's side: accepts `size - 1` members in the background.
    pub(super) fn root(l: TcpListener, size: usize, seconds: u64, tracker: Arc<Tracker>) -> Oob {
        let shared = Arc::new(Shared {
            rank: 0,
            seconds,
            tracker,
            finished: AtomicBool::new(false),
            triggered: AtomicBool::new(false),
            members: Mutex::new((0..size).map(|_| None).collect()),
            reports: Mutex::new(vec![None; size]),
            lost: Mutex::new(vec![false; size]),
        });
        let s = shared.clone();
        spawn_or_say("listener", move || {
            for _ in 1..size {
                let Ok((stream, _)) = l.accept() else { return };
                let s = s.clone();
                spawn_or_say("member", move || serve_member(&s, stream));
            }
        });
        Oob {
            shared,
            to_root: None,
        }
    }

    /// A member's side: connects to rank 0 and serves its queries in the background.
    pub(super) fn member(
        addr: &str,
        rank: usize,
        seconds: u64,
        tracker: Arc<Tracker>,
    ) -> Result<Oob, Error> {
        let sa: SocketAddr = addr
            .parse()
            .map_err(|_| Error::Backend(format!("hang-diagnosis channel: bad address {addr}")))?;
        let mut stream = TcpStream::connect_timeout(&sa, Duration::from_secs(20)).map_err(io)?;
        writeln!(stream, "H\t{rank}").map_err(io)?;
        let shared = Arc::new(Shared {
            rank,
            seconds,
            tracker,
            finished: AtomicBool::new(false),
            triggered: AtomicBool::new(false),
            members: Mutex::new(Vec::new()),
            reports: Mutex::new(Vec::new()),
            lost: Mutex::new(Vec::new()),
        });
        let read = stream.try_clone().map_err(io)?;
        let write = Arc::new(Mutex::new(stream));
        let (s, w) = (shared.clone(), write.clone());
        std::thread::Builder::new()
            .name("hang-diagnosis".into())
            .spawn(move || serve_root(&s, read, &w))
            .map_err(|e| {
                Error::Backend(format!(
                    "hang-diagnosis channel: cannot start a thread: {e}"
                ))
            })?;
        Ok(Oob {
            shared,
            to_root: Some(write),
        })
    }

    /// The run ended normally: closed connections are no longer alarming.
    pub fn finished(&self) {
        self.shared.finished.store(true, Ordering::SeqCst);
    }

    /// Rank 0: every process's current progress (its own included), asked of the members
    /// over their channels and waited for at most `wait`; `None` for a member that did not
    /// answer (or is gone).
    pub fn progress(&self, wait: Duration) -> Vec<Option<Progress>> {
        let size = lock(&self.shared.reports).len();
        lock(&self.shared.reports)
            .iter_mut()
            .for_each(|r| *r = None);
        for w in lock(&self.shared.members).iter_mut().flatten() {
            let _ = writeln!(w, "Q");
        }
        let until = Instant::now() + wait;
        while Instant::now() < until {
            let lost = lock(&self.shared.lost).clone();
            let r = lock(&self.shared.reports);
            if (1..size).all(|i| r[i].is_some() || lost[i]) {
                break;
            }
            drop(r);
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut reports = lock(&self.shared.reports).clone();
        if let Some(me) = reports.first_mut() {
            *me = Some(self.shared.tracker.snapshot());
        }
        reports
    }

    /// Rank 0 ends the job: every member exits with `code` (from its channel thread, so a
    /// member stuck in a call or stalled exits too), then this process. Never returns.
    pub fn exit_all(&self, code: u8) -> ! {
        self.shared.finished.store(true, Ordering::SeqCst);
        for w in lock(&self.shared.members).iter_mut().flatten() {
            let _ = writeln!(w, "X\t{code}");
        }
        // The members' exits close their connections; give the lines time to arrive first.
        std::thread::sleep(Duration::from_millis(300));
        let _ = std::io::stdout().flush();
        std::process::exit(i32::from(code));
    }

    /// This rank's wait passed the deadline: report, let rank 0 decide, exit 4. Never returns.
    pub fn timed_out(&self, what: &str) -> ! {
        match &self.to_root {
            None => trigger(&self.shared, format!("rank 0 timed out waiting for {what}")),
            Some(w) => {
                let line = self.shared.tracker.snapshot().to_line();
                let _ = writeln!(lock(w), "T\t{line}");
            }
        }
        std::thread::sleep(GRACE + Duration::from_secs(2));
        std::process::exit(i32::from(crate::core::error::exit::TIMEOUT));
    }
}

/// Member thread: answers rank 0's queries, obeys its exit, exits if rank 0 goes away.
fn serve_root(s: &Shared, read: TcpStream, write: &Mutex<TcpStream>) {
    for line in BufReader::new(read).lines() {
        let Ok(line) = line else { break };
        if line == "Q" {
            let p = s.tracker.snapshot().to_line();
            let _ = writeln!(lock(write), "P\t{p}");
        } else if let Some(code) = line.strip_prefix("X\t") {
            std::process::exit(code.parse().unwrap_or(4));
        }
    }
    if !s.finished.load(Ordering::SeqCst) {
        eprintln!(
            "ncclbench: rank {}: lost the hang-diagnosis connection to rank 0 (rank 0 died?); \
             exiting",
            s.rank
        );
        std::process::exit(i32::from(crate::core::error::exit::TIMEOUT));
    }
}

/// Root thread of one member: records its reports, notices its timeout or death.
fn serve_member(s: &Arc<Shared>, stream: TcpStream) {
    let Ok(write) = stream.try_clone() else {
        return;
    };
    let mut lines = BufReader::new(stream).lines();
    let Some(rank) = lines
        .next()
        .and_then(Result::ok)
        .and_then(|h| h.strip_prefix("H\t").and_then(|r| r.parse::<usize>().ok()))
    else {
        return;
    };
    match lock(&s.members).get_mut(rank) {
        Some(slot) => *slot = Some(write),
        None => return,
    }
    for line in lines {
        let Ok(line) = line else { break };
        let (kind, rest) = line.split_once('\t').unwrap_or((line.as_str(), ""));
        let p = Progress::from_line(rest);
        if let Some(p) = p.clone() {
            if let Some(slot) = lock(&s.reports).get_mut(rank) {
                *slot = Some(p);
            }
        }
        if kind == "T" {
            let what = p.map_or(String::new(), |p| format!(" (op {})", p.completed + 1));
            trigger(s, format!("rank {rank} timed out{what}"));
        }
    }
    if !s.finished.load(Ordering::SeqCst) {
        if let Some(l) = lock(&s.lost).get_mut(rank) {
            *l = true;
        }
        trigger(
            s,
            format!("rank {rank} closed its connection before the end (process died?)"),
        );
    }
}

/// Rank 0: collect, print, stop everyone (once).
fn trigger(s: &Arc<Shared>, reason: String) {
    if s.triggered.swap(true, Ordering::SeqCst) {
        return;
    }
    let s = s.clone();
    spawn_or_say("report", move || {
        let size = lock(&s.reports).len();
        lock(&s.reports).iter_mut().for_each(|r| *r = None);
        for w in lock(&s.members).iter_mut().flatten() {
            let _ = writeln!(w, "Q");
        }
        let lost = lock(&s.lost).clone();
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            let r = lock(&s.reports);
            if (1..size).all(|i| r[i].is_some() || lost[i]) {
                break;
            }
            drop(r);
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut reports = lock(&s.reports).clone();
        reports[0] = Some(s.tracker.snapshot());
        let text = hang::report(s.seconds, &reason, &reports);
        let _ = std::io::stdout().flush();
        eprint!("{text}");
        for w in lock(&s.members).iter_mut().flatten() {
            let _ = writeln!(w, "X\t4");
        }
        std::thread::sleep(Duration::from_millis(300));
        std::process::exit(i32::from(crate::core::error::exit::TIMEOUT));
    });
}

/// Starts a background thread of the channel; one that cannot start (the machine's thread
/// limit) is said once on stderr and leaves that part of the diagnosis out, never a panic.
fn spawn_or_say(what: &str, f: impl FnOnce() + Send + 'static) {
    if let Err(e) = std::thread::Builder::new()
        .name(format!("hang-diagnosis-{what}"))
        .spawn(f)
    {
        eprintln!("ncclbench: hang diagnosis: cannot start its {what} thread ({e}); it is off");
    }
}
