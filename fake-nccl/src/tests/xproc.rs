//! Communicators spanning processes ([`crate::xproc`]): the test binary runs itself as the
//! processes of one job (`FAKE_NCCL_XP_CASE`, `FAKE_NCCL_XP_PROC`, the id in
//! `FAKE_NCCL_XP_ID`), each holding some ranks of one communicator whose rendezvous lies in a
//! private directory, which must be empty again once every rank destroyed or aborted.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use super::*;
use crate::nccl_calls::*;
use crate::split::ncclCommSplit;
use crate::state::*;

const CASE: &str = "FAKE_NCCL_XP_CASE";

/// Runs `case` as `procs` processes (process p gets `envs(p)` too); their outputs.
fn job(
    case: &str,
    procs: usize,
    envs: impl Fn(usize) -> Vec<(&'static str, String)>,
) -> Vec<Output> {
    let root = tempfile_dir(case);
    let id = crate::comm::unique_id_at(&root.join("job")).expect("a short path");
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let exe = std::env::current_exe().expect("the test binary");
    let children: Vec<_> = (0..procs)
        .map(|p| {
            let mut c = Command::new(&exe);
            c.args([
                "tests::xproc::child",
                "--exact",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(CASE, case)
            .env("FAKE_NCCL_XP_PROC", p.to_string())
            .env("FAKE_NCCL_XP_ID", &hex)
            .env("FAKE_CUDA_SYNC_TIMEOUT_S", "20");
            for (k, v) in envs(p) {
                c.env(k, v);
            }
            c.stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn a child")
        })
        .collect();
    let outs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait for a child"))
        .collect();
    for (p, o) in outs.iter().enumerate() {
        let text =
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && text.contains("1 passed"),
            "{case}: process {p} failed:\n{text}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{case}: rendezvous files left: {left:?}");
    std::fs::remove_dir(&root).unwrap();
    outs
}

fn tempfile_dir(case: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("fnx-{}-{case}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn said(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// One child process: does nothing unless started by [`job`].
#[test]
fn child() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    let proc_: usize = std::env::var("FAKE_NCCL_XP_PROC").unwrap().parse().unwrap();
    let hex = std::env::var("FAKE_NCCL_XP_ID").unwrap();
    let mut id = UniqueId { internal: [0; 128] };
    for (i, b) in id.internal.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap() as std::ffi::c_char;
    }
    match case.as_str() {
        "mixed" => mixed(proc_, id),
        "mismatch" => mismatch(proc_, id),
        "stall" => stall(proc_, id),
        "duplicate" => duplicate(proc_, id),
        "abort_wakes" => abort_wakes(proc_, id),
        other => panic!("unknown case {other}"),
    }
}

/// Ranks `first..first+n` of `nranks`, on devices 0..n, owned by this thread.
fn join(id: UniqueId, nranks: usize, first: usize, n: usize) -> (Vec<Rank>, u32) {
    let mut last = 0;
    assert_eq!(ncclGroupStart(), 0);
    let rs = (0..n)
        .map(|i| {
            let ctx = ctx(i as i32);
            let mut comm = std::ptr::null_mut();
            let code = ncclCommInitRank(&mut comm, nranks as i32, id, (first + i) as i32);
            if code != 0 {
                last = code;
                println!("init: {}", last_error());
            }
            Rank {
                ctx,
                comm,
                stream: stream(),
            }
        })
        .collect();
    let end = ncclGroupEnd();
    if end != 0 {
        println!("init: {}", last_error());
        last = end;
    }
    (rs, last)
}

/// Two processes of two ranks each (the mixed layout of `-np 2 -g 2`): all-reduce,
/// all-gather, a ring of grouped send/recv, then a split by parity and an all-reduce on it.
fn mixed(p: usize, id: UniqueId) {
    let (rs, code) = join(id, 4, 2 * p, 2);
    assert_eq!(code, 0);
    let ranks: Vec<i32> = (0..2).map(|i| (2 * p + i) as i32).collect();
    let bufs: Vec<(u64, u64)> = rs
        .iter()
        .zip(&ranks)
        .map(|(k, &r)| {
            k.on();
            let (s, d) = (alloc(16), alloc(16));
            h2d(s, &i32s(&[r + 1, 10 * (r + 1)]));
            (s, d)
        })
        .collect();
    grouped(&rs, |i, k| {
        ncclAllReduce(ptr(bufs[i].0), ptr(bufs[i].1), 2, 2, 0, k.comm, k.stream)
    });
    sync_all(&rs);
    for (k, b) in rs.iter().zip(&bufs) {
        k.on();
        assert_eq!(as_i32(&d2h(b.1, 8)), vec![10, 100], "all-reduce");
    }
    let gathered: Vec<u64> = rs
        .iter()
        .map(|k| {
            k.on();
            alloc(32)
        })
        .collect();
    grouped(&rs, |i, k| {
        ncclAllGather(ptr(bufs[i].0), ptr(gathered[i]), 2, 2, k.comm, k.stream)
    });
    sync_all(&rs);
    for (k, &g) in rs.iter().zip(&gathered) {
        k.on();
        assert_eq!(
            as_i32(&d2h(g, 32)),
            vec![1, 10, 2, 20, 3, 30, 4, 40],
            "all-gather"
        );
    }
    // Each rank sends its two values to the next rank and receives from the previous one.
    grouped(&rs, |i, k| {
        let r = ranks[i];
        let (next, prev) = ((r + 1) % 4, (r + 3) % 4);
        let a = ncclSend(ptr(bufs[i].0), 2, 2, next, k.comm, k.stream);
        if a != 0 {
            return a;
        }
        ncclRecv(ptr(bufs[i].1), 2, 2, prev, k.comm, k.stream)
    });
    sync_all(&rs);
    for ((k, b), &r) in rs.iter().zip(&bufs).zip(&ranks) {
        k.on();
        let prev = (r + 3) % 4 + 1;
        assert_eq!(as_i32(&d2h(b.1, 8)), vec![prev, 10 * prev], "ring");
    }
    let mut halves = vec![std::ptr::null_mut(); 2];
    grouped(&rs, |i, k| unsafe {
        ncclCommSplit(
            k.comm,
            ranks[i] % 2,
            ranks[i],
            &mut halves[i],
            std::ptr::null_mut(),
        )
    });
    let halves: Vec<Rank> = rs
        .iter()
        .zip(halves)
        .map(|(k, comm)| Rank {
            ctx: k.ctx,
            comm,
            stream: k.stream,
        })
        .collect();
    grouped(&halves, |i, k| {
        ncclAllReduce(ptr(bufs[i].0), ptr(bufs[i].1), 2, 2, 0, k.comm, k.stream)
    });
    sync_all(&halves);
    for ((k, b), &r) in halves.iter().zip(&bufs).zip(&ranks) {
        k.on();
        // Even ranks 0 and 2 hold 1 and 3; odd ranks 1 and 3 hold 2 and 4.
        let want = if r % 2 == 0 { 4 } else { 6 };
        assert_eq!(
            as_i32(&d2h(b.1, 8)),
            vec![want, 10 * want],
            "split all-reduce"
        );
    }
    destroy(halves);
    destroy(rs);
}

#[test]
fn two_processes_of_two_ranks_form_one_communicator() {
    job("mixed", 2, |p| vec![("FAKE_NCCL_HOST", format!("node{p}"))]);
}

/// Rank 1 (process 1) calls the all-reduce with another count: both get ncclInvalidUsage.
fn mismatch(p: usize, id: UniqueId) {
    let (rs, code) = join(id, 2, p, 1);
    assert_eq!(code, 0);
    let k = &rs[0];
    let b = alloc(16);
    h2d(b, &i32s(&[1, 2, 3, 4]));
    assert_eq!(
        ncclAllReduce(ptr(b), ptr(b), 1 + p, 2, 0, k.comm, k.stream),
        0
    );
    sync(k.stream);
    let mut err = 0;
    assert_eq!(unsafe { ncclCommGetAsyncError(k.comm, &mut err) }, 0);
    assert_eq!(err, NCCL_INVALID_USAGE, "process {p}");
    destroy(rs);
}

#[test]
fn partners_in_two_processes_that_disagree_both_get_invalid_usage() {
    job("mismatch", 2, |p| {
        vec![("FAKE_NCCL_HOST", format!("node{p}"))]
    });
}

/// Process 1 never calls the all-reduce: process 0's stays pending (a hang) until process 1
/// aborts, then fails with ncclRemoteError; its own abort completes its stream.
fn stall(p: usize, id: UniqueId) {
    let (rs, code) = join(id, 2, p, 1);
    assert_eq!(code, 0);
    let k = &rs[0];
    if p == 1 {
        std::thread::sleep(Duration::from_millis(700));
        assert_eq!(ncclCommAbort(k.comm), 0);
        return;
    }
    let b = alloc(16);
    assert_eq!(ncclAllReduce(ptr(b), ptr(b), 4, 2, 0, k.comm, k.stream), 0);
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(300) {
        assert_eq!(unsafe { cuStreamQuery(k.stream) }, CUDA_ERROR_NOT_READY);
    }
    sync(k.stream);
    let mut err = 0;
    assert_eq!(unsafe { ncclCommGetAsyncError(k.comm, &mut err) }, 0);
    assert_eq!(err, NCCL_REMOTE_ERROR);
    assert_eq!(ncclCommAbort(k.comm), 0);
    println!("waited {:?}", t.elapsed());
}

#[test]
fn a_rank_that_never_arrives_blocks_its_partner_until_it_aborts() {
    let outs = job("stall", 2, |p| vec![("FAKE_NCCL_HOST", format!("node{p}"))]);
    assert!(said(&outs[0]).contains("waited"), "{}", said(&outs[0]));
}

/// Process 1 never calls the all-reduce; process 0 blocks in `cuStreamSynchronize` (whose
/// limit is 20 s) until another thread of process 0 aborts the communicator, as a watchdog
/// does, which releases the wait at once.
fn abort_wakes(p: usize, id: UniqueId) {
    let (rs, code) = join(id, 2, p, 1);
    assert_eq!(code, 0);
    let k = &rs[0];
    if p == 1 {
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(ncclCommAbort(k.comm), 0);
        return;
    }
    let b = alloc(16);
    assert_eq!(ncclAllReduce(ptr(b), ptr(b), 4, 2, 0, k.comm, k.stream), 0);
    let comm = k.comm as usize;
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(ncclCommAbort(comm as Ptr), 0);
    });
    let t = Instant::now();
    sync(k.stream);
    let waited = t.elapsed();
    watchdog.join().unwrap();
    assert!(
        waited >= Duration::from_millis(250),
        "returned early: {waited:?}"
    );
    assert!(waited < Duration::from_secs(10), "not woken: {waited:?}");
    println!("released after {waited:?}");
}

#[test]
fn an_abort_from_another_thread_releases_a_blocked_wait() {
    let outs = job("abort_wakes", 2, |p| {
        vec![("FAKE_NCCL_HOST", format!("node{p}"))]
    });
    assert!(
        said(&outs[0]).contains("released after"),
        "{}",
        said(&outs[0])
    );
}

/// Both processes put a rank on device 0 of one host: NCCL 2.32 refuses it, at the later
/// init and, through the rendezvous, as the earlier rank's asynchronous error.
fn duplicate(p: usize, id: UniqueId) {
    let (rs, code) = join(id, 2, p, 1);
    let k = &rs[0];
    if code != 0 {
        assert_eq!(code, NCCL_INVALID_USAGE);
        println!("refused at init");
    } else {
        let b = alloc(16);
        assert_eq!(ncclAllReduce(ptr(b), ptr(b), 4, 2, 0, k.comm, k.stream), 0);
        let t = Instant::now();
        let mut err = 0;
        while err == 0 && t.elapsed() < Duration::from_secs(10) {
            unsafe { cuStreamQuery(k.stream) };
            assert_eq!(unsafe { ncclCommGetAsyncError(k.comm, &mut err) }, 0);
        }
        assert_eq!(err, NCCL_INVALID_USAGE, "{}", last_error());
        println!("async error");
    }
    assert_eq!(ncclCommAbort(k.comm), 0);
}

#[test]
fn one_gpu_of_one_host_in_two_processes_is_refused() {
    let outs = job("duplicate", 2, |_| {
        vec![("FAKE_NCCL_HOST", "same".to_string())]
    });
    let said: Vec<String> = outs.iter().map(said).collect();
    assert!(
        said.iter().any(|s| s.contains("refused at init")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|s| s.contains("Multiple Ranks are using the same GPU")),
        "{said:?}"
    );
}
