//! alltoallv's traffic: where each pair's byte count comes from, generated from the requested
//! size and a spread, or read from a matrix file. Plain data, carried by the run's
//! configuration and handed to every spec function (the other collectives ignore it), so a
//! segment's size cannot differ between the backends, the verifier and the outputs.

pub mod matrix;

pub use matrix::{parse_matrix, read_matrix, Matrix};

/// Where the per-pair byte counts come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Traffic {
    /// nccl-tests' distance-weighted pattern: 0 uniform, 1 (default) fully weighted by the
    /// distance `(dst - src) mod n`, so no rank sends to itself.
    Generated {
        /// The blend, clamped to 0..=1.
        spread: f64,
    },
    /// Explicit bytes from a matrix file (already scaled and floored to 16 bytes).
    Matrix(Matrix),
}

impl Default for Traffic {
    fn default() -> Traffic {
        Traffic::Generated { spread: 1.0 }
    }
}

impl Traffic {
    /// True in matrix mode.
    pub fn is_matrix(&self) -> bool {
        matches!(self, Traffic::Matrix(_))
    }

    /// Bytes `src` sends to `dst` in an `n`-rank call whose NCCL count is `count` elements of
    /// `elt` bytes (generated mode: each rank's total is `count x n x elt`).
    pub fn pair_bytes(&self, count: usize, elt: usize, src: usize, dst: usize, n: usize) -> usize {
        match self {
            Traffic::Matrix(m) => m.bytes(src, dst),
            Traffic::Generated { spread } => {
                let total = count.saturating_mul(n).saturating_mul(elt);
                if n == 1 {
                    return total & !15;
                }
                // nccl-tests' arithmetic, in its order, so sizes match it to the byte.
                let distance = (dst + n - src) % n;
                let sum_distances = n * (n - 1) / 2;
                let uniform = total as f64 / n as f64;
                let dist = distance as f64 * total as f64 / sum_distances as f64;
                let bytes = (1.0 - spread) * uniform + spread * dist;
                (bytes as usize) & !15
            }
        }
    }

    /// The NCCL count argument for a requested size of `c` elements: the per-peer block of
    /// alltoall in generated mode, 0 in matrix mode (the sizes come from the file).
    pub fn param_count(&self, c: usize, elt: usize, n: usize) -> usize {
        match self {
            Traffic::Matrix(_) => 0,
            Traffic::Generated { .. } => (c / n) / (16 / elt) * (16 / elt),
        }
    }

    /// Whether a run of `n` ranks sweeping `min..=max` bytes can use this traffic: in matrix
    /// mode the matrix must cover every rank, `-b` must equal `-e` (the sizes come from the
    /// file) and `-e` must hold the largest rank's total, as nccl-tests requires.
    pub fn check_fits(&self, n: usize, min: u64, max: u64) -> Result<(), String> {
        let Traffic::Matrix(m) = self else {
            return Ok(());
        };
        if n > m.dim {
            return Err(format!(
                "the alltoallv traffic matrix is {0}x{0} but this run has {n} ranks",
                m.dim
            ));
        }
        if min != max {
            return Err(format!(
                "alltoallv matrix mode needs -b equal to -e (e.g. -b 32M -e 32M), got -b {min} -e {max}"
            ));
        }
        let need = self.max_rank_bytes(0, n);
        if need as u128 > max as u128 {
            return Err(format!(
                "alltoallv matrix mode: -e must be at least {need} bytes, the largest rank's \
                 total in the traffic matrix (got {max}); increase -e"
            ));
        }
        Ok(())
    }

    /// The largest total bytes any of `n` ranks sends or receives at 1-byte elements: what
    /// `-e` must hold in matrix mode.
    pub fn max_rank_bytes(&self, count: usize, n: usize) -> usize {
        (0..n)
            .map(|r| {
                let (mut s, mut d) = (0usize, 0usize);
                for p in 0..n {
                    s = s.saturating_add(self.pair_bytes(count, 1, r, p, n));
                    d = d.saturating_add(self.pair_bytes(count, 1, p, r, n));
                }
                s.max(d)
            })
            .max()
            .unwrap_or(0)
    }
}
