//! A plain file mapped into memory, so that its records are read where the page cache holds
//! them rather than copied block by block into buffers first (that copy was about a sixth of
//! the reader's time on a file already in the page cache).
//!
//! A mapped file that shrinks while it is read (a log rotated by truncation, a dump rewritten)
//! would end the process: touching a page past the new end raises SIGBUS. A handler,
//! installed once, tells such a fault inside a live mapping from any other: it puts zeroed
//! memory from the faulting page to the mapping's end, marks the mapping [`Mapped::shrank`],
//! and lets the read go on; the reader then reads the file again as it now is. Any other
//! SIGBUS goes to the handler that was there before (the standard library's, or the default
//! action, which ends the process as it would have without this one).

use std::ffi::c_void;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// How many mappings can be live at once (files read in parallel); a file that finds no free
/// slot is streamed instead.
const SLOTS: usize = 64;

/// One live mapping, as the handler sees it: its bytes are `start..end`; `end == 0` is a free
/// slot.
struct Slot {
    claimed: AtomicBool,
    start: AtomicUsize,
    end: AtomicUsize,
    shrank: AtomicBool,
}

static LIVE: [Slot; SLOTS] = [const {
    Slot {
        claimed: AtomicBool::new(false),
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        shrank: AtomicBool::new(false),
    }
}; SLOTS];

/// The page size, read when the handler is installed.
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The SIGBUS action found when this module's handler was installed; `None` when it could not
/// be installed (then nothing is mapped).
static PREVIOUS: OnceLock<Option<libc::sigaction>> = OnceLock::new();

/// A read-only private mapping of a whole file, its bytes watched by the SIGBUS handler while
/// it lives.
pub(super) struct Mapped {
    ptr: *mut c_void,
    len: usize,
    slot: &'static Slot,
}

// SAFETY: the mapping is read-only memory owned by this value; the slot is atomics.
unsafe impl Send for Mapped {}
// SAFETY: as above; nothing through `&Mapped` writes.
unsafe impl Sync for Mapped {}

impl Mapped {
    /// Maps `file` (a regular file of `len` bytes); `None` when it cannot be mapped safely here
    /// (empty, no guard installed or another handler in its place, no free slot, mmap
    /// refused): the caller streams it instead.
    pub(super) fn new(file: &File, len: u64) -> Option<Mapped> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        if !guarded() {
            return None;
        }
        let slot = LIVE.iter().find(|s| {
            s.claimed
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        })?;
        // SAFETY: a fresh read-only private mapping of an open file; the kernel picks where.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            slot.claimed.store(false, Ordering::Release);
            return None;
        }
        slot.shrank.store(false, Ordering::Release);
        slot.start.store(ptr as usize, Ordering::Release);
        slot.end.store(ptr as usize + len, Ordering::Release);
        Some(Mapped { ptr, len, slot })
    }

    /// The file's bytes (zeros from the page where it was found shrunk, if it was).
    pub(super) fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr..ptr + len` is mapped readable for as long as `self` lives; a page the
        // file no longer covers is replaced with zeros by the handler rather than faulting.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }

    /// Reads `from..to` into the page cache and this process's page tables now (on a thread
    /// of its own, ahead of the parsing: as a stream's reader thread, it waits for the disk
    /// while the bytes before are parsed, and the parsing then takes no page faults). A
    /// kernel without `MADV_POPULATE_READ` (before Linux 5.14) is asked to read ahead instead.
    pub(super) fn populate(&self, from: usize, to: usize) {
        let start = from / self.page() * self.page();
        if self.advise(start, to, libc::MADV_POPULATE_READ) != 0 {
            self.advise(start, to, libc::MADV_WILLNEED);
        }
    }

    /// Drops the pages wholly inside `from..to` from this process's memory (they stay in the
    /// page cache, and would be read from the file again if touched): bytes already parsed,
    /// which kept resident would make the whole file count as this process's memory.
    pub(super) fn release(&self, from: usize, to: usize) {
        self.advise(
            from.div_ceil(self.page()) * self.page(),
            to,
            libc::MADV_DONTNEED,
        );
    }

    fn page(&self) -> usize {
        PAGE.load(Ordering::Acquire)
    }

    /// `advice` for `start..to` (`start` page-aligned), cut to whole pages inside the mapping;
    /// madvise's result.
    fn advise(&self, start: usize, to: usize, advice: libc::c_int) -> libc::c_int {
        let end = if to >= self.len {
            self.len.div_ceil(self.page()) * self.page()
        } else {
            to / self.page() * self.page()
        };
        if start < end {
            // SAFETY: a page-aligned range inside this mapping; for a private file mapping not
            // written to, neither advice changes what its bytes read as (dropped pages are
            // read from the file again if touched).
            unsafe { libc::madvise(self.ptr.cast::<u8>().add(start).cast(), end - start, advice) }
        } else {
            0
        }
    }

    /// Whether a read past the file's end was caught: the file shrank while it was mapped, and
    /// what was read of it cannot be trusted.
    pub(super) fn shrank(&self) -> bool {
        self.slot.shrank.load(Ordering::Acquire)
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        self.slot.end.store(0, Ordering::Release);
        self.slot.start.store(0, Ordering::Release);
        // SAFETY: the mapping made in `new`, no longer borrowed (`bytes` borrows `self`).
        unsafe { libc::munmap(self.ptr, self.len) };
        self.slot.claimed.store(false, Ordering::Release);
    }
}

/// Installs the handler once; whether it is the SIGBUS handler now (another may have taken its
/// place since, and then a shrinking file would not be caught).
fn guarded() -> bool {
    let installed = PREVIOUS.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if let Ok(page) = usize::try_from(page) {
            PAGE.store(page, Ordering::Release);
        }
        // SAFETY: a zeroed sigaction is a valid value to fill; the handler is async-signal
        // safe (atomics, mmap and sigaction are system calls; no allocation, no lock).
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_sigbus as *const () as usize;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut new.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            (libc::sigaction(libc::SIGBUS, &new, &mut old) == 0).then_some(old)
        }
    });
    if installed.is_none() {
        return false;
    }
    // SAFETY: reading the current action into a zeroed value.
    unsafe {
        let mut now: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut now) == 0
            && now.sa_sigaction == on_sigbus as *const () as usize
    }
}

/// The SIGBUS handler: a fault inside a live mapping is the file having shrunk (zeros are put
/// from there to the mapping's end and the mapping marked); anything else is passed on.
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Acquire);
    for slot in &LIVE {
        let (start, end) = (
            slot.start.load(Ordering::Acquire),
            slot.end.load(Ordering::Acquire),
        );
        if start <= addr && addr < end {
            let from = addr & !(page - 1);
            // SAFETY: `from..end` lies inside the live mapping, owned by the reader that
            // faulted on it; replacing it with private zeroed pages keeps it readable.
            let zeroed = unsafe {
                libc::mmap(
                    from as *mut c_void,
                    end - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if zeroed != libc::MAP_FAILED {
                slot.shrank.store(true, Ordering::Release);
                return;
            }
        }
    }
    pass_on(sig, info, ctx);
}

/// Hands a SIGBUS that is not a shrunk mapping's to the action found before.
fn pass_on(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    if let Some(Some(old)) = PREVIOUS.get() {
        let handler = old.sa_sigaction;
        if handler != libc::SIG_DFL && handler != libc::SIG_IGN {
            // SAFETY: `handler` was installed as a handler of this kind (SA_SIGINFO says
            // which signature).
            unsafe {
                if old.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) =
                        std::mem::transmute(handler);
                    f(sig, info, ctx);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
                    f(sig);
                }
            }
            return;
        }
    }
    // The default action: restored, then the faulting access runs again and ends the process;
    // a SIGBUS sent by another process is raised again.
    // SAFETY: setting the default action and raising a signal are async-signal safe.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut default.sa_mask);
        libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
        if (*info).si_code <= 0 {
            libc::raise(sig);
        }
    }
}

#[cfg(test)]
mod tests;
