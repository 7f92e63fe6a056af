//! Settings read from the environment once per process: the fake devices and the NCCL version
//! to impersonate. Unit tests (which share one process) override the version per thread.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Duration;

fn env_parse<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// `FAKE_CUDA_DEVICES` (default 4, at least 1).
pub fn device_count() -> usize {
    static V: OnceLock<usize> = OnceLock::new();
    *V.get_or_init(|| env_parse("FAKE_CUDA_DEVICES").unwrap_or(4).max(1))
}

/// `FAKE_CUDA_MEM_GIB` in bytes (default 16 GiB per device).
pub fn device_memory() -> usize {
    static V: OnceLock<usize> = OnceLock::new();
    *V.get_or_init(|| {
        let gib: f64 = env_parse("FAKE_CUDA_MEM_GIB").unwrap_or(16.0);
        (gib * (1u64 << 30) as f64) as usize
    })
}

/// `FAKE_CUDA_CC` as (major, minor), default 9.0.
pub fn compute_capability() -> (i32, i32) {
    static V: OnceLock<(i32, i32)> = OnceLock::new();
    *V.get_or_init(|| {
        let text = std::env::var("FAKE_CUDA_CC").unwrap_or_default();
        let mut parts = text.trim().split('.');
        let major = parts.next().and_then(|m| m.parse().ok());
        let minor = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
        major.map_or((9, 0), |m| (m, minor))
    })
}

/// How long `cuStreamSynchronize` waits before giving up: `FAKE_CUDA_SYNC_TIMEOUT_S` (60).
pub fn sync_timeout() -> Duration {
    static V: OnceLock<f64> = OnceLock::new();
    let s = *V.get_or_init(|| env_parse("FAKE_CUDA_SYNC_TIMEOUT_S").unwrap_or(60.0));
    Duration::from_secs_f64(s.max(0.0))
}

thread_local! {
    static VERSION_OVERRIDE: Cell<Option<i32>> = const { Cell::new(None) };
}

/// The NCCL version code impersonated: `FAKE_NCCL_VERSION` (default 23203), unless this
/// thread overrode it with [`set_version_override`].
pub fn nccl_version() -> i32 {
    static V: OnceLock<i32> = OnceLock::new();
    VERSION_OVERRIDE
        .with(Cell::get)
        .unwrap_or_else(|| *V.get_or_init(|| env_parse("FAKE_NCCL_VERSION").unwrap_or(23203)))
}

/// Makes this thread see another NCCL version (tests only; `None` restores the environment's).
pub fn set_version_override(version: Option<i32>) {
    VERSION_OVERRIDE.with(|v| v.set(version));
}

/// `(major, minor, patch)` of an NCCL version code (either numbering scheme).
pub fn split_version(code: i32) -> (i32, i32, i32) {
    if code < 10000 {
        (code / 1000, code % 1000 / 100, code % 100)
    } else {
        (code / 10000, code % 10000 / 100, code % 100)
    }
}
