//! A poisoned context, as a kernel fault (`__trap`, an illegal address) leaves one:
//! `FAKE_CUDA_STICKY_ERROR=N` makes the N-th `cuStreamQuery` of the process (1-based) and every
//! query, synchronize and `ncclCommFinalize` after it fail with CUDA_ERROR_LAUNCH_FAILED (719),
//! the sticky error a real driver then returns from every call on the context. NCCL cannot
//! finalize on such a context (its own CUDA calls fail), so only `ncclCommAbort` is clean.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::state::CuResult;

/// CUDA_ERROR_LAUNCH_FAILED: "an exception occurred on the device while executing a kernel".
pub const CUDA_ERROR_LAUNCH_FAILED: CuResult = 719;

/// `FAKE_CUDA_STICKY_ERROR`, when set to a positive count.
fn poison_at() -> Option<u64> {
    static V: OnceLock<Option<u64>> = OnceLock::new();
    *V.get_or_init(|| {
        std::env::var("FAKE_CUDA_STICKY_ERROR")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .filter(|&n| n > 0)
    })
}

static QUERIES: AtomicU64 = AtomicU64::new(0);

/// Counts one `cuStreamQuery`; the sticky error once the context is poisoned.
pub fn on_query() -> Result<(), CuResult> {
    let Some(at) = poison_at() else {
        return Ok(());
    };
    let n = QUERIES.fetch_add(1, Ordering::Relaxed) + 1;
    if n >= at {
        Err(CUDA_ERROR_LAUNCH_FAILED)
    } else {
        Ok(())
    }
}

/// The sticky error, when the context is poisoned already (no query counted).
pub fn poisoned() -> Result<(), CuResult> {
    match poison_at() {
        Some(at) if QUERIES.load(Ordering::Relaxed) >= at => Err(CUDA_ERROR_LAUNCH_FAILED),
        _ => Ok(()),
    }
}
