//! NCCL's debug log, for the log-correlation code: with `NCCL_DEBUG=INFO` (read once), lines
//! go to `NCCL_DEBUG_FILE` (`%h` host, `%p` pid, `%%`; truncated on open) or stdout, with the
//! INFO prefix `host:pid:tid [cudaDev] NCCL INFO ` (formats in docs/nccl-log-formats.md), in the
//! format of the impersonated version: the `NCCL version` line, `Init COMPLETE` /
//! `Destroy COMPLETE` (INIT), per-call COLL lines (every rank, at the call) and TUNING decision
//! lines (rank 0 of each communicator, at group end; `FAKE_NCCL_TUNING_ALL_RANKS=1` for every
//! rank).
//!
//! The tuning decision depends only on the per-rank byte count B = count x type size:
//! B < 64 KiB: Tree/LL; B < 4 MiB: Ring/LL128; else Ring/Simple; always channels 0..3;
//! the numeric `time` is 10 + B/1000 (microseconds).

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::config::{nccl_version, split_version};
use crate::engine::{Kind, Op};
use crate::state::*;

/// What `NCCL_DEBUG*` asked for.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub info: bool,
    /// `NCCL_DEBUG_SUBSYS` entries, upper-case; `None` for the default set.
    pub subsys: Option<Vec<String>>,
    pub file: Option<String>,
}

impl Settings {
    fn from_env() -> Settings {
        let level = std::env::var("NCCL_DEBUG")
            .unwrap_or_default()
            .to_uppercase();
        let subsys = std::env::var("NCCL_DEBUG_SUBSYS")
            .ok()
            .map(|s| s.split(',').map(|p| p.trim().to_uppercase()).collect());
        let file = std::env::var("NCCL_DEBUG_FILE")
            .ok()
            .filter(|f| !f.is_empty())
            .map(|f| expand_file(&f));
        Settings {
            info: matches!(level.as_str(), "INFO" | "TRACE"),
            subsys,
            file,
        }
    }

    /// Whether subsystem `name` is logged.
    pub fn has(&self, name: &str) -> bool {
        let default = ["INIT", "ENV", "BOOTSTRAP"];
        let Some(list) = &self.subsys else {
            return self.info && default.contains(&name);
        };
        let inverted = list.first().is_some_and(|f| f.starts_with('^'));
        let listed = list
            .iter()
            .any(|s| s.trim_start_matches('^') == name || s.trim_start_matches('^') == "ALL");
        self.info && (listed != inverted)
    }
}

/// `NCCL_DEBUG_FILE` with `%h`, `%p` and `%%` replaced.
pub fn expand_file(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match (c, c == '%') {
            (_, false) => out.push(c),
            _ => match chars.next() {
                Some('h') => out.push_str(&hostname()),
                Some('p') => out.push_str(&std::process::id().to_string()),
                Some('%') => out.push('%'),
                Some(o) => {
                    out.push('%');
                    out.push(o);
                }
                None => out.push('%'),
            },
        }
    }
    out
}

fn hostname() -> String {
    let h =
        std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_else(|_| "localhost".into());
    h.trim()
        .split('.')
        .next()
        .unwrap_or("localhost")
        .replace(['%', '/'], "-")
}

fn tid() -> u64 {
    thread_local!(static TID: u64 = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name()?.to_str()?.parse().ok())
        .unwrap_or(0));
    TID.with(|t| *t)
}

thread_local! {
    static OVERRIDE: RefCell<Option<(Settings, Vec<String>)>> = const { RefCell::new(None) };
}

/// Runs `f` with these settings on this thread, returning the lines it logged (tests).
pub fn capture(settings: Settings, f: impl FnOnce()) -> Vec<String> {
    OVERRIDE.with(|o| *o.borrow_mut() = Some((settings, Vec::new())));
    f();
    OVERRIDE
        .with(|o| o.borrow_mut().take())
        .map(|(_, l)| l)
        .unwrap_or_default()
}

fn settings() -> Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    OVERRIDE
        .with(|o| o.borrow().as_ref().map(|(s, _)| s.clone()))
        .unwrap_or_else(|| S.get_or_init(Settings::from_env).clone())
}

fn emit(text: String) {
    let captured = OVERRIDE.with(|o| match o.borrow_mut().as_mut() {
        Some((_, lines)) => {
            lines.push(text.clone());
            true
        }
        None => false,
    });
    if captured {
        return;
    }
    static OUT: OnceLock<Mutex<Box<dyn Write + Send>>> = OnceLock::new();
    let out = OUT.get_or_init(|| {
        let file = settings().file.and_then(|f| std::fs::File::create(f).ok());
        Mutex::new(match file {
            Some(f) => Box::new(f),
            None => Box::new(std::io::stdout()),
        })
    });
    let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(w, "{text}");
    let _ = w.flush();
}

fn info(dev: usize, msg: &str) {
    emit(format!(
        "{}:{}:{} [{dev}] NCCL INFO {msg}",
        hostname(),
        std::process::id(),
        tid()
    ));
}

fn version_text() -> String {
    let (a, b, c) = split_version(nccl_version());
    format!("NCCL version {a}.{b}.{c}+cuda12.4")
}

fn ptr(v: u64) -> String {
    if v == 0 {
        "(nil)".into()
    } else {
        format!("{v:#x}")
    }
}

/// After a comm joined: the version line (once per process) and `Init COMPLETE`.
pub fn on_init(st: &State, comm: u64, api: &str) {
    let s = settings();
    if !s.has("INIT") {
        return;
    }
    let c = &st.comms[&comm];
    let v = nccl_version();
    static VERSION_DONE: AtomicBool = AtomicBool::new(false);
    let first = !VERSION_DONE.swap(true, Ordering::Relaxed)
        || OVERRIDE.with(|o| o.borrow().as_ref().is_some_and(|(_, l)| l.is_empty()));
    if first {
        if v >= 22200 {
            info(c.device, &version_text());
            if v >= 22900 {
                info(c.device, "NCCL git version fake 0000000");
            }
        } else if c.rank == 0 {
            emit(version_text());
        }
    }
    let hash = st.communicators.get(&c.communicator).map_or(0, |k| k.hash);
    let h = handle(TAG_COMM, comm) as usize as u64;
    let body = format!(
        "comm {} rank {} nranks {} cudaDev {d} nvmlDev {d} busId {:x} commId {hash:#x} - Init COMPLETE",
        ptr(h), c.rank, c.nranks, (0x18 + c.device) << 12, d = c.device
    );
    let line = match v {
        ..22100 => body,
        22100..22300 => format!("ncclCommInitRank {body}"),
        _ => format!("{api} {body}"),
    };
    info(c.device, &line);
    if v < 22200 {
        connections(st, comm);
    }
}

/// Before a comm goes: `Destroy COMPLETE` or `Abort COMPLETE`.
pub fn on_destroy(st: &State, comm: u64, what: &str) {
    let sys = if nccl_version() >= 23000 {
        "DESTROY"
    } else {
        "INIT"
    };
    if !settings().has(sys) {
        return;
    }
    let c = &st.comms[&comm];
    let h = handle(TAG_COMM, comm) as usize as u64;
    let bus = (0x18 + c.device) << 12;
    info(
        c.device,
        &format!(
            "comm {} rank {} nranks {} cudaDev {} busId {bus:x} - {what} COMPLETE",
            ptr(h),
            c.rank,
            c.nranks,
            c.device
        ),
    );
}

fn func_name(kind: Kind) -> &'static str {
    kind.c_name().trim_start_matches("nccl")
}

/// The ring connection of a comm's rank to the next one over P2P/CUMEM and `Connected all
/// rings`: at init before NCCL 2.22, at the first call from 2.22 on (those versions connect
/// channels lazily, so a log read right after init shows no transport yet).
fn connections(st: &State, comm: u64) {
    let s = settings();
    if !(s.has("INIT") || s.has("P2P")) {
        return;
    }
    let c = &st.comms[&comm];
    if c.nranks > 1 {
        let next = (c.rank + 1) % c.nranks;
        let next_dev = st
            .comms
            .values()
            .find(|o| o.communicator == c.communicator && o.rank == next)
            .map_or(next, |o| o.device);
        info(
            c.device,
            &format!(
                "Channel 00/0 : {}[{}] -> {next}[{next_dev}] via P2P/CUMEM",
                c.rank, c.device
            ),
        );
    }
    let done = if nccl_version() >= 22400 {
        "Connected all rings, use ring PXN 0 GDR 1"
    } else {
        "Connected all rings"
    };
    info(c.device, done);
}

/// The COLL line of a call (every rank, at call time).
#[allow(clippy::too_many_arguments)]
pub fn on_call(
    st: &State,
    comm: u64,
    kind: &Kind,
    send: u64,
    recv: u64,
    count: usize,
    dtype: u32,
    op: Option<u32>,
    root: i32,
    stream: *mut std::ffi::c_void,
) {
    if st.comms[&comm].calls == 0 && nccl_version() >= 22200 {
        connections(st, comm);
    }
    if !settings().has("COLL") {
        return;
    }
    let c = &st.comms[&comm];
    let h = handle(TAG_COMM, comm) as usize as u64;
    let line = format!(
        "{}: opCount {:x} sendbuff {} recvbuff {} count {count} datatype {dtype} op {} root {root} comm {} [nranks={}] stream {}",
        func_name(*kind), c.calls, ptr(send), ptr(recv), op.unwrap_or(0), ptr(h), c.nranks, ptr(stream as usize as u64)
    );
    info(c.device, &line);
}

/// The tuning decision for `bytes` per rank: (algorithm index, protocol index).
pub fn decision(bytes: usize) -> (usize, usize) {
    match bytes {
        ..65536 => (0, 0),
        65536..4194304 => (1, 1),
        _ => (1, 2),
    }
}

/// The TUNING line of a collective as it is launched (rank 0 of its communicator).
pub fn on_launch(st: &State, op: &Op) {
    let v = nccl_version();
    let s = settings();
    let all_ranks = std::env::var("FAKE_NCCL_TUNING_ALL_RANKS").is_ok_and(|v| v == "1");
    let plain = matches!(
        op.kind,
        Kind::AllReduce | Kind::Broadcast | Kind::Reduce | Kind::AllGather | Kind::ReduceScatter
    );
    if !s.has("TUNING")
        || v < 22000
        || !plain
        || op.count == 0
        || op.nranks < 2
        || (op.rank != 0 && !all_ranks)
    {
        return;
    }
    let Some(c) = st.comms.get(&op.comm) else {
        return;
    };
    let b = op.count * crate::reduce::dtype_size(op.dtype);
    let (algo, proto) = decision(b);
    let total = matches!(op.kind, Kind::AllGather | Kind::ReduceScatter) && v < 22400;
    let bytes = if total { b * op.nranks } else { b };
    let time = 10.0 + b as f64 / 1000.0;
    let f = func_name(op.kind);
    let line = match v {
        ..22300 => format!("{bytes} Bytes -> Algo {algo} proto {proto} time {time:.6}"),
        22300..22400 => format!("{f}: {bytes} Bytes -> Algo {algo} proto {proto} time {time:.6}"),
        _ => {
            let a = ["TREE", "RING"][algo];
            let p = ["LL", "LL128", "SIMPLE"][proto];
            format!("{f}: {bytes} Bytes -> Algo {a} proto {p} channel{{Lo..Hi}}={{0..3}}")
        }
    };
    info(c.device, &line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_file_expands_host_pid_and_percent() {
        let pid = std::process::id();
        assert_eq!(expand_file("/tmp/x.%p.%%.%q"), format!("/tmp/x.{pid}.%.%q"));
        assert!(!expand_file("%h").contains(['.', '%', '/']));
        let only = |s: &[&str]| Settings {
            info: true,
            subsys: Some(s.iter().map(|x| x.to_string()).collect()),
            file: None,
        };
        assert!(only(&["ALL"]).has("TUNING") && !only(&["INIT"]).has("TUNING"));
        assert!(only(&["^COLL"]).has("INIT") && !only(&["^COLL"]).has("COLL"));
        assert!(Settings {
            info: true,
            subsys: None,
            file: None
        }
        .has("INIT"));
        assert_eq!(
            (decision(65535), decision(65536), decision(4 << 20)),
            ((0, 0), (1, 1), (1, 2))
        );
    }
}
