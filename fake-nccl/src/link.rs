//! The sockets between processes of a job: each process that joins a communicator spanning
//! processes listens on the Unix socket `@fake-nccl-xp.<pid>` (Linux's abstract namespace, so
//! nothing is left on disk and no path is too long), bound before its member file is written,
//! so whoever reads that file can connect. Messages ([`crate::wire`]) to another process go
//! through one connection and one writer thread per destination, fed from a queue, so no
//! thread ever blocks on a socket while it holds the state lock (two processes writing to each
//! other under their locks would deadlock). One reader thread per incoming connection decodes
//! each message without the lock, then files it ([`crate::xproc::deliver`]), runs the engine
//! and wakes the threads blocked in a wait ([`crate::state::wake`]): a result lands, as on a
//! GPU, whether or not the application is looking. A peer that died is written off: its
//! messages are dropped, and whoever waits on it waits until it aborts, as on GPUs.

use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, BufWriter, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::wire::{read_msg, write_msg, Msg};

fn address(pid: u32) -> std::io::Result<SocketAddr> {
    SocketAddr::from_abstract_name(format!("fake-nccl-xp.{pid}"))
}

/// Starts this process's listener (once); an error if the name cannot be bound.
pub fn listen() -> std::io::Result<()> {
    static STARTED: OnceLock<Result<(), String>> = OnceLock::new();
    STARTED
        .get_or_init(|| start().map_err(|e| format!("listening as {}: {e}", std::process::id())))
        .clone()
        .map_err(std::io::Error::other)
}

fn start() -> std::io::Result<()> {
    let l = UnixListener::bind_addr(&address(std::process::id())?)?;
    std::thread::Builder::new()
        .name("fake-nccl-accept".into())
        .spawn(move || accept_loop(l))?;
    Ok(())
}

fn accept_loop(l: UnixListener) {
    for conn in l.incoming().flatten() {
        let _ = std::thread::Builder::new()
            .name("fake-nccl-read".into())
            .spawn(move || read_loop(conn));
    }
}

fn read_loop(conn: UnixStream) {
    let mut r = BufReader::with_capacity(1 << 16, conn);
    while let Ok(m) = read_msg(&mut r) {
        let mut st = crate::state::state();
        crate::xproc::deliver(&mut st, m);
        crate::engine::progress(&mut st);
        drop(st);
        crate::state::wake();
    }
}

/// A destination's queue, drained by its writer thread.
#[derive(Default)]
struct Queue {
    msgs: VecDeque<Msg>,
    /// The writer holds a message it has not finished writing.
    busy: bool,
}

#[derive(Default)]
struct Peer {
    queue: Mutex<Queue>,
    cv: Condvar,
}

fn peers() -> &'static Mutex<HashMap<u32, Arc<Peer>>> {
    static PEERS: OnceLock<Mutex<HashMap<u32, Arc<Peer>>>> = OnceLock::new();
    PEERS.get_or_init(Default::default)
}

/// Queues `m` for process `pid` (never blocks on the socket).
pub fn send(pid: u32, m: Msg) {
    let peer = {
        let mut all = peers().lock().unwrap_or_else(|e| e.into_inner());
        let peer = all.entry(pid).or_insert_with(|| {
            let p = Arc::new(Peer::default());
            let w = Arc::clone(&p);
            let _ = std::thread::Builder::new()
                .name("fake-nccl-write".into())
                .spawn(move || write_loop(pid, &w));
            p
        });
        Arc::clone(peer)
    };
    peer.queue
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .msgs
        .push_back(m);
    peer.cv.notify_all();
}

fn write_loop(pid: u32, peer: &Peer) {
    let conn = address(pid).and_then(|a| UnixStream::connect_addr(&a));
    let mut w = conn.ok().map(|c| BufWriter::with_capacity(1 << 16, c));
    loop {
        let mut q = peer.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.busy = false;
        peer.cv.notify_all();
        while q.msgs.is_empty() {
            q = peer.cv.wait(q).unwrap_or_else(|e| e.into_inner());
        }
        let m = q.msgs.pop_front().expect("not empty");
        q.busy = true;
        drop(q);
        // A dead peer's messages are dropped: nobody will read them.
        if let Some(out) = &mut w {
            if write_msg(out, &m).and_then(|()| out.flush()).is_err() {
                w = None;
            }
        }
    }
}

/// Waits (at most `limit`) until every queued message was handed to its socket, so a process
/// that leaves or exits does not take its last words with it.
pub fn flush(limit: Duration) {
    let start = Instant::now();
    let all: Vec<Arc<Peer>> = peers()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .cloned()
        .collect();
    for p in all {
        let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
        while !q.msgs.is_empty() || q.busy {
            let Some(left) = limit.checked_sub(start.elapsed()) else {
                return;
            };
            q =
                p.cv.wait_timeout(q, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
        }
    }
}
