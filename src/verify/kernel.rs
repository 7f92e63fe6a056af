//! The fused loops every pattern runs through: write a generated run of elements, or count the
//! elements of a buffer that differ from what is generated, without ever materialising an
//! expected buffer.
//!
//! Large buffers are split over scoped threads (chunks of at least [`MIN_CHUNK_BYTES`]); each
//! chunk runs a loop compiled for the widest vector extension the CPU has (detected at run time),
//! because the per-element arithmetic only keeps up with memory bandwidth when it vectorizes.

use super::hash::Idx;
use std::thread;

/// Smallest piece of a buffer worth a thread of its own.
pub(crate) const MIN_CHUNK_BYTES: usize = 1 << 20;

/// A pure function from global element index to element bits (the low `8 * width` bits).
pub(crate) trait Gen: Copy + Sync {
    /// The element at global index `g`.
    fn bits(&self, g: Idx) -> u64;
}

/// Elements per inner loop: short enough for a 32-bit wrong-count, long enough to vectorize.
const BLOCK: usize = 4096;

/// Consecutive sub-runs of the `elems` elements starting at global index `first`, as
/// `(hi, lo, k, n)`: `n` elements starting at element `k` whose indices are `hi:lo + i`, at most
/// [`BLOCK`] long and never crossing a multiple of 2^32. (An iterator, not a callback: closures
/// would not be inlined into the vectorized loops.)
struct Blocks {
    first: u64,
    elems: usize,
    k: usize,
}

impl Iterator for Blocks {
    type Item = (u32, u32, usize, usize);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.k >= self.elems {
            return None;
        }
        let g = Idx::from(self.first + self.k as u64);
        let room = (1u64 << 32) - g.lo as u64;
        let n = (self.elems - self.k).min(BLOCK).min(room as usize);
        let k = self.k;
        self.k += n;
        Some((g.hi, g.lo, k, n))
    }
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

/// How many threads a buffer of `bytes` is worth.
fn parts_for(bytes: usize) -> usize {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    (bytes / MIN_CHUNK_BYTES).clamp(1, cores)
}

/// [`apply`] for a width known at compile time; generators that only ever produce one width call
/// it directly so fewer loop copies get compiled.
pub(crate) fn apply_w<G: Gen, const W: usize>(gen: &G, first: u64, action: Action<'_>) -> u64 {
    match action {
        Action::Write(out) => {
            let elems = out.len() / W;
            let out = &mut out[..elems * W];
            let per = elems.div_ceil(parts_for(out.len())).max(1);
            if per >= elems {
                return fast::<G, W>(Job::Write { gen, out, first });
            }
            thread::scope(|s| {
                let mut pieces = out.chunks_mut(per * W).enumerate();
                let head = pieces.next();
                for (i, out) in pieces {
                    let first = first + (i * per) as u64;
                    s.spawn(move || fast::<G, W>(Job::Write { gen, out, first }));
                }
                if let Some((_, out)) = head {
                    fast::<G, W>(Job::Write { gen, out, first });
                }
            });
            0
        }
        Action::Count(data, tol) => {
            let elems = data.len() / W;
            let data = &data[..elems * W];
            let per = elems.div_ceil(parts_for(data.len())).max(1);
            if per >= elems {
                return fast::<G, W>(Job::Count {
                    gen,
                    data,
                    first,
                    tol,
                });
            }
            thread::scope(|s| {
                let mut pieces = data.chunks(per * W).enumerate();
                let head = pieces.next();
                let handles: Vec<_> = pieces
                    .map(|(i, data)| {
                        let first = first + (i * per) as u64;
                        s.spawn(move || {
                            fast::<G, W>(Job::Count {
                                gen,
                                data,
                                first,
                                tol,
                            })
                        })
                    })
                    .collect();
                let mut wrong = head.map_or(0, |(_, data)| {
                    fast::<G, W>(Job::Count {
                        gen,
                        data,
                        first,
                        tol,
                    })
                });
                for h in handles {
                    wrong += h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                }
                wrong
            })
        }
    }
}

/// One thread's share of an [`Action`].
enum Job<'a, G, const W: usize> {
    Write {
        gen: &'a G,
        out: &'a mut [u8],
        first: u64,
    },
    Count {
        gen: &'a G,
        data: &'a [u8],
        first: u64,
        tol: u64,
    },
}

/// Element `c` (exactly `W` bytes, little-endian) as bits.
#[inline(always)]
fn load<const W: usize>(c: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..W].copy_from_slice(c);
    u64::from_le_bytes(b)
}

/// Writes the low `W` bytes of `v` into `c` (exactly `W` bytes), little-endian.
#[inline(always)]
fn store<const W: usize>(c: &mut [u8], v: u64) {
    match W {
        1 => c[0] = v as u8,
        2 => c.copy_from_slice(&(v as u16).to_le_bytes()),
        4 => c.copy_from_slice(&(v as u32).to_le_bytes()),
        _ => c.copy_from_slice(&v.to_le_bytes()),
    }
}

impl<G: Gen, const W: usize> Job<'_, G, W> {
    #[inline(always)]
    fn run(self) -> u64 {
        let mask = if W == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * W)) - 1
        };
        match self {
            Job::Write { gen, out, first } => {
                // A local copy: the compiler can then see that writing `out` never changes
                // the generator's constants, and keep them in registers.
                let gen = *gen;
                let elems = out.len() / W;
                for (hi, lo, k, n) in (Blocks { first, elems, k: 0 }) {
                    let out = &mut out[k * W..(k + n) * W];
                    for (i, c) in out.chunks_exact_mut(W).enumerate() {
                        store::<W>(
                            c,
                            gen.bits(Idx {
                                hi,
                                lo: lo + i as u32,
                            }),
                        );
                    }
                }
                0
            }
            Job::Count {
                gen,
                data,
                first,
                tol,
            } => {
                let gen = *gen;
                let mut wrong = 0u64;
                let elems = data.len() / W;
                for (hi, lo, k, n) in (Blocks { first, elems, k: 0 }) {
                    let chunks = data[k * W..(k + n) * W].chunks_exact(W);
                    let mut w = 0u32;
                    if tol == 0 {
                        // The common case, kept free of the distance computation.
                        for (i, c) in chunks.enumerate() {
                            let expected = gen.bits(Idx {
                                hi,
                                lo: lo + i as u32,
                            }) & mask;
                            w += (load::<W>(c) != expected) as u32;
                        }
                    } else {
                        for (i, c) in chunks.enumerate() {
                            let expected = gen.bits(Idx {
                                hi,
                                lo: lo + i as u32,
                            }) & mask;
                            w += (load::<W>(c).abs_diff(expected) > tol) as u32;
                        }
                    }
                    wrong += w as u64;
                }
                wrong
            }
        }
    }
}

/// Runs a job compiled for the best vector extension available.
fn fast<G: Gen, const W: usize>(job: Job<'_, G, W>) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512cd")
            && std::arch::is_x86_feature_detected!("bmi2")
        {
            // SAFETY: every feature the function is compiled for was detected on this CPU.
            return unsafe { x86::run_avx512(job) };
        }
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("bmi2")
        {
            // SAFETY: every feature the function is compiled for was detected on this CPU.
            return unsafe { x86::run_avx2(job) };
        }
    }
    job.run()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Gen, Job};

    /// The job's loop compiled with AVX-512 (the pattern arithmetic is inlined into it).
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx512cd,avx2,fma,bmi2")]
    pub(super) fn run_avx512<G: Gen, const W: usize>(job: Job<'_, G, W>) -> u64 {
        job.run()
    }

    /// The job's loop compiled with AVX2.
    #[target_feature(enable = "avx2,fma,bmi2")]
    pub(super) fn run_avx2<G: Gen, const W: usize>(job: Job<'_, G, W>) -> u64 {
        job.run()
    }
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
}
