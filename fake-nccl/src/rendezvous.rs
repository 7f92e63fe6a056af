//! The rendezvous of a communicator that may span processes: a directory, named inside the
//! unique id, where every rank leaves small files (the calls themselves travel over sockets,
//! [`crate::link`]). `ncclGetUniqueId` names
//! `<root>/fake-nccl-<pid>-<counter>-<nanos>` (root: `FAKE_NCCL_RENDEZVOUS_DIR`, else
//! `/dev/shm` when writable, else the temporary directory); the first rank to join creates it.
//! Files (each written under a temporary name and renamed, so a name that exists is complete):
//! * `m<rank>`: a member: `pid host-hash device` (written at init, once its process listens);
//! * `g<rank>`: the rank was destroyed or aborted; the last rank to leave removes the
//!   directory;
//! * `fail`: a message; every rank's ops fail with ncclInvalidUsage (a refused init);
//! * `s<n>.r<rank>`: rank's part of the parent's split number n ([`crate::split`]).
//!
//! A directory whose creator and members are all dead is removed when a later one is made
//! (what a killed job left behind).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The directory rendezvous directories are made in.
pub fn root() -> PathBuf {
    if let Some(d) = std::env::var_os("FAKE_NCCL_RENDEZVOUS_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let shm = Path::new("/dev/shm");
    let writable = std::fs::metadata(shm).is_ok_and(|m| m.is_dir() && !m.permissions().readonly());
    if writable {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// A fresh rendezvous path (not created yet).
pub fn fresh() -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    root().join(format!(
        "fake-nccl-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The rendezvous of a split of `parent`'s communicator (number `seq`, colour `color`): the
/// same path in every process, next to the parent's.
pub fn child(parent: &Path, seq: u64, color: i32) -> PathBuf {
    let name = parent
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().to_string());
    let creator = name.split('-').nth(2).unwrap_or("0").to_string();
    let h = crate::comm::fnv(format!("{}/{seq}/{color}", parent.display()).as_bytes());
    parent.with_file_name(format!("fake-nccl-{creator}-s-{h:016x}"))
}

/// This host's identity: `FAKE_NCCL_HOST` (a test's stand-in for another machine), else the
/// host name and boot id, hashed.
pub fn host_hash() -> u64 {
    let name = std::env::var("FAKE_NCCL_HOST").unwrap_or_else(|_| {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        read("/proc/sys/kernel/hostname").trim().to_string()
            + read("/proc/sys/kernel/random/boot_id").trim()
    });
    crate::comm::fnv(name.as_bytes())
}

/// Writes `name` in `dir` atomically (temporary name, then rename).
pub fn put(dir: &Path, name: &str, parts: &[&[u8]]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    let mut f = std::fs::File::create(&tmp)?;
    for p in parts {
        f.write_all(p)?;
    }
    drop(f);
    std::fs::rename(&tmp, dir.join(name))
}

/// Whether `name` exists in `dir`.
pub fn has(dir: &Path, name: &str) -> bool {
    dir.join(name).exists()
}

/// Reads `name` and removes it.
pub fn take(dir: &Path, name: &str) -> Option<Vec<u8>> {
    let p = dir.join(name);
    let data = std::fs::read(&p).ok()?;
    let _ = std::fs::remove_file(p);
    Some(data)
}

/// A member as its file gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub pid: u32,
    pub host: u64,
    pub device: usize,
}

/// Creates the directory (sweeping dead ones first when this makes it) and writes rank's
/// member file.
pub fn join(dir: &Path, rank: usize, device: usize) -> std::io::Result<()> {
    if !dir.exists() {
        sweep(dir.parent().unwrap_or(Path::new("/")));
        std::fs::create_dir_all(dir)?;
    }
    let text = format!("{} {} {device}", std::process::id(), host_hash());
    put(dir, &format!("m{rank}"), &[text.as_bytes()])
}

/// Rank's member file, if it joined.
pub fn member(dir: &Path, rank: usize) -> Option<Member> {
    let t = std::fs::read_to_string(dir.join(format!("m{rank}"))).ok()?;
    let mut f = t.split_whitespace();
    Some(Member {
        pid: f.next()?.parse().ok()?,
        host: f.next()?.parse().ok()?,
        device: f.next()?.parse().ok()?,
    })
}

/// Rank leaves; the last of `nranks` to leave removes the directory.
pub fn leave(dir: &Path, rank: usize, nranks: usize) {
    if put(dir, &format!("g{rank}"), &[]).is_err() {
        return;
    }
    if (0..nranks).all(|r| has(dir, &format!("g{r}"))) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Removes rendezvous directories in `root` whose creator and members are all dead.
fn sweep(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(creator) = name
            .strip_prefix("fake-nccl-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let path = e.path();
        let members = std::fs::read_dir(&path)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|m| {
                let n = m.file_name().to_string_lossy().to_string();
                let r = n.strip_prefix('m')?.parse::<usize>().ok()?;
                member(&path, r)
            });
        let mut pids = std::iter::once(creator).chain(members.map(|m| m.pid));
        if !pids.any(alive) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}
