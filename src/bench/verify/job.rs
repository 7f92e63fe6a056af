//! One thread's share of a fused write or count: the inner loops, and their dispatch to a copy
//! compiled for the widest vector extension the CPU has (detected at run time), because the
//! per-element arithmetic only keeps up with memory bandwidth when it vectorizes.

use super::hash::Idx;
use super::kernel::Gen;

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

/// One thread's share of an [`Action`].
pub(crate) enum Job<'a, G, const W: usize> {
    /// Write the run starting at global index `first` into `out`.
    Write {
        /// The generator.
        gen: &'a G,
        /// Whole elements.
        out: &'a mut [u8],
        /// Global index of `out`'s first element.
        first: u64,
    },
    /// Count the elements of `data` more than `tol` units from the run starting at `first`.
    Count {
        /// The generator.
        gen: &'a G,
        /// Whole elements.
        data: &'a [u8],
        /// Global index of `data`'s first element.
        first: u64,
        /// Allowed bit-pattern distance.
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
pub(crate) fn fast<G: Gen, const W: usize>(job: Job<'_, G, W>) -> u64 {
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
