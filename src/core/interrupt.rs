//! SIGINT/SIGTERM as a request to stop at the next safe point instead of dying on the spot,
//! for commands that must still write a report (`accept`): [`catch`] installs the handler,
//! long loops ask [`pending`] between steps. A second signal ends the process at once, as if
//! nothing had been caught.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    if RECEIVED.swap(sig, Ordering::SeqCst) != 0 {
        // SAFETY: signal(2) and raise(3) are async-signal-safe; the default action ends us.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

/// From now on SIGINT and SIGTERM only set the flag [`pending`] reads.
pub fn catch() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only touches an atomic and async-signal-safe calls.
        unsafe {
            libc::signal(sig, handler);
        }
    }
}

/// The name of the signal received since [`catch`], if any.
pub fn pending() -> Option<&'static str> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        libc::SIGINT => Some("SIGINT"),
        libc::SIGTERM => Some("SIGTERM"),
        _ => Some("a signal"),
    }
}

/// The exit status of a process that stopped for the signal received (128 + its number, as a
/// shell reports a process the signal killed).
pub fn exit_status() -> u8 {
    u8::try_from(128 + RECEIVED.load(Ordering::SeqCst)).unwrap_or(130)
}
