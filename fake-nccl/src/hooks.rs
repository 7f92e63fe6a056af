//! Fault hooks, read from the environment when a communicator is created (the first rank to
//! join decides for all):
//! * `FAKE_NCCL_HANG_AT=N[:RANK]`: op N (0-based, counted per communicator; collectives and
//!   p2p alike) never completes on RANK (default every rank). Since a collective needs every
//!   rank, its partners wait too; the streams stay NOT_READY until `ncclCommAbort`.
//! * `FAKE_NCCL_ASYNC_ERROR_AT=N`: ops N and later never complete and, once op N is enqueued,
//!   `ncclCommGetAsyncError` reports ncclRemoteError (a dead peer).
//! * `FAKE_NCCL_CORRUPT_AT=N[:RANK]`: op N writes one wrong element into RANK's output
//!   (default rank 0; the lowest rank that has an output when RANK has none). Any process of a
//!   communicator spanning processes may carry it: the flag travels with the op.
//! * `FAKE_NCCL_CORRUPT_IN_GRAPH=1`: every op that a graph replay (`cuGraphLaunch`) places on a
//!   stream writes that wrong element, and no op launched directly does, so a harness that
//!   checks its results only outside graphs misses a graph-only fault.
//!
//! Unit tests (one process, many threads) set them per thread with [`set_override`].

use std::cell::Cell;

/// The parsed hooks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hooks {
    /// (op index, rank or every rank)
    pub hang_at: Option<(u64, Option<usize>)>,
    pub async_error_at: Option<u64>,
    /// (op index, rank whose output gets the wrong element)
    pub corrupt_at: Option<(u64, Option<usize>)>,
    /// Ops replayed from a graph are corrupted.
    pub corrupt_in_graph: bool,
}

thread_local! {
    static OVERRIDE: Cell<Option<Hooks>> = const { Cell::new(None) };
}

/// Sets (or with `None` clears) this thread's hooks, used instead of the environment.
pub fn set_override(hooks: Option<Hooks>) {
    OVERRIDE.with(|o| o.set(hooks));
}

/// Parses `N[:RANK]` (the stall and corruption hooks).
pub fn parse_hang(text: &str) -> Option<(u64, Option<usize>)> {
    let (n, rank) = match text.trim().split_once(':') {
        Some((n, r)) => (n, Some(r.trim().parse().ok()?)),
        None => (text.trim(), None),
    };
    Some((n.trim().parse().ok()?, rank))
}

impl Hooks {
    /// This thread's override, else the environment.
    pub fn current() -> Hooks {
        OVERRIDE.with(Cell::get).unwrap_or_else(|| {
            let num = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse().ok());
            Hooks {
                hang_at: std::env::var("FAKE_NCCL_HANG_AT")
                    .ok()
                    .and_then(|v| parse_hang(&v)),
                async_error_at: num("FAKE_NCCL_ASYNC_ERROR_AT"),
                corrupt_at: std::env::var("FAKE_NCCL_CORRUPT_AT")
                    .ok()
                    .and_then(|v| parse_hang(&v)),
                corrupt_in_graph: std::env::var("FAKE_NCCL_CORRUPT_IN_GRAPH")
                    .is_ok_and(|v| !v.trim().is_empty() && v.trim() != "0"),
            }
        })
    }

    /// Whether op `index` of `rank` never completes.
    pub fn stalls(&self, index: u64, rank: usize) -> bool {
        let hang = self
            .hang_at
            .is_some_and(|(n, r)| n == index && r.is_none_or(|r| r == rank));
        hang || self.async_error_at.is_some_and(|n| index >= n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hang_spec_parses_with_and_without_rank() {
        assert_eq!(parse_hang("3"), Some((3, None)));
        assert_eq!(parse_hang(" 7:1 "), Some((7, Some(1))));
        assert_eq!(parse_hang("x"), None);
        let h = Hooks {
            hang_at: Some((2, Some(1))),
            async_error_at: Some(5),
            corrupt_at: None,
            corrupt_in_graph: false,
        };
        assert!(h.stalls(2, 1) && !h.stalls(2, 0) && !h.stalls(4, 0) && h.stalls(6, 0));
    }
}
