//! The fused operations every pattern runs through: write a generated run of elements, or count
//! the elements of a buffer that differ from what is generated, without ever materialising an
//! expected buffer. Large buffers are split over scoped threads (pieces of at least
//! [`MIN_CHUNK_BYTES`]); each piece runs the vectorized loops of [`super::job`].

use super::hash::Idx;
use super::job::{fast, Job};
use std::thread;

/// Smallest piece of a buffer worth a thread of its own.
pub(crate) const MIN_CHUNK_BYTES: usize = 1 << 20;

/// A pure function from global element index to element bits (the low `8 * width` bits).
pub(crate) trait Gen: Copy + Sync {
    /// The element at global index `g`.
    fn bits(&self, g: Idx) -> u64;
}

/// What to do with a generated run.
pub(crate) enum Action<'a> {
    /// Write the run into these bytes.
    Write(&'a mut [u8]),
    /// Count the elements of these bytes more than `tol` bit-pattern units from the run.
    Count(&'a [u8], u64),
}

/// Runs `action` for the run of `gen` that starts at global index `first`, with elements of
/// `width` bytes (1, 2, 4 or 8). Returns the wrong-element count (0 for writes). Trailing bytes
/// that do not make a whole element are left alone.
pub(crate) fn apply<G: Gen>(gen: &G, width: usize, first: u64, action: Action<'_>) -> u64 {
    match width {
        1 => apply_w::<G, 1>(gen, first, action),
        2 => apply_w::<G, 2>(gen, first, action),
        4 => apply_w::<G, 4>(gen, first, action),
        _ => apply_w::<G, 8>(gen, first, action),
    }
}

/// The job waiting in `slot`, unless a thread took it already.
fn take<T>(slot: &std::sync::Mutex<Option<T>>) -> Option<T> {
    slot.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// Elements per thread for a buffer of `elems` elements of `W` bytes.
fn per_thread<const W: usize>(elems: usize) -> usize {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    let parts = (elems * W / MIN_CHUNK_BYTES).clamp(1, cores);
    elems.div_ceil(parts).max(1)
}

/// [`apply`] for a width known at compile time; generators that only ever produce one width call
/// it directly so fewer loop copies get compiled.
pub(crate) fn apply_w<G: Gen, const W: usize>(gen: &G, first: u64, action: Action<'_>) -> u64 {
    let at = |i: usize, per: usize| first + (i * per) as u64;
    let jobs: Vec<Job<'_, G, W>> = match action {
        Action::Write(out) => {
            let per = per_thread::<W>(out.len() / W);
            let whole = out.len() / W * W;
            out[..whole]
                .chunks_mut(per * W)
                .enumerate()
                .map(|(i, out)| Job::Write {
                    gen,
                    out,
                    first: at(i, per),
                })
                .collect()
        }
        Action::Count(data, tol) => {
            let per = per_thread::<W>(data.len() / W);
            let whole = data.len() / W * W;
            data[..whole]
                .chunks(per * W)
                .enumerate()
                .map(|(i, data)| Job::Count {
                    gen,
                    data,
                    first: at(i, per),
                    tol,
                })
                .collect()
        }
    };
    let mut jobs = jobs.into_iter();
    let Some(head) = jobs.next() else {
        return 0;
    };
    // A helper thread that cannot start (the machine's thread or mapping limit) is not an
    // error: its job runs on this thread instead. Each job waits in a slot it is taken from.
    let slots: Vec<_> = jobs.map(|job| std::sync::Mutex::new(Some(job))).collect();
    thread::scope(|s| {
        let mut others = Vec::new();
        for slot in &slots {
            let started =
                thread::Builder::new().spawn_scoped(s, move || take(slot).map_or(0, fast));
            if let Ok(h) = started {
                others.push(h);
            }
        }
        let mut total = fast(head) + slots.iter().filter_map(take).map(fast).sum::<u64>();
        for h in others {
            total += h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        }
        total
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    struct Index;
    impl Gen for Index {
        fn bits(&self, g: Idx) -> u64 {
            ((g.hi as u64) << 32 | g.lo as u64).wrapping_mul(0x0101_0101_0101_0101)
        }
    }

    #[test]
    fn threaded_writes_and_counts_agree_with_the_index_function() {
        // Big enough to be split over threads on a multi-core machine.
        let elems = 3 * MIN_CHUNK_BYTES / 4 + 5;
        let mut buf = vec![0u8; elems * 4 + 3];
        apply(&Index, 4, 7, Action::Write(&mut buf));
        for k in [0usize, 1, elems / 2, elems - 1] {
            let v = u32::from_le_bytes(buf[k * 4..k * 4 + 4].try_into().unwrap());
            assert_eq!(
                v as u64,
                Index.bits(Idx::from(7 + k as u64)) & 0xffff_ffff,
                "element {k}"
            );
        }
        assert_eq!(&buf[elems * 4..], &[0, 0, 0], "partial tail untouched");
        assert_eq!(apply(&Index, 4, 7, Action::Count(&buf, 0)), 0);
        // A different start index is wrong almost everywhere.
        assert_eq!(
            apply(&Index, 4, 8, Action::Count(&buf, 0)),
            elems as u64,
            "shifted run"
        );
        buf[4 * (elems - 2)] ^= 1;
        assert_eq!(apply(&Index, 4, 7, Action::Count(&buf, 0)), 1);
        assert_eq!(
            apply(&Index, 4, 7, Action::Count(&buf, 1)),
            0,
            "tolerance 1"
        );
    }

    #[test]
    fn every_width_round_trips() {
        for w in [1usize, 2, 4, 8] {
            let mut buf = vec![0u8; 37 * w];
            apply(&Index, w, 100, Action::Write(&mut buf));
            assert_eq!(apply(&Index, w, 100, Action::Count(&buf, 0)), 0, "w={w}");
            assert_eq!(apply(&Index, w, 101, Action::Count(&buf, 0)), 37, "w={w}");
        }
    }

    #[test]
    fn runs_that_cross_a_multiple_of_2_pow_32_keep_counting_the_index() {
        let first = (5u64 << 32) - 10;
        let mut buf = vec![0u8; 20 * 8];
        apply(&Index, 8, first, Action::Write(&mut buf));
        for k in 0..20u64 {
            let v = u64::from_le_bytes(buf[k as usize * 8..][..8].try_into().unwrap());
            assert_eq!(v, Index.bits(Idx::from(first + k)), "element {k}");
        }
        assert_eq!(apply(&Index, 8, first, Action::Count(&buf, 0)), 0);
    }
}
