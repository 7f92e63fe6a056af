//! The synthetic curve generator of the fit validation: curves with known regimes (alpha and
//! bandwidth), known breakpoints on a doubling size grid, and multiplicative noise from a
//! fixed-seed generator.

use ncclbench::analysis::input::{InputRow, SourceRef};
use ncclbench::core::collective::Collective;
use ncclbench::result::Placement;

/// SplitMix64: a tiny deterministic generator (no `rand` needed).
pub struct SplitMix(pub u64);

impl SplitMix {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(1e-300, 1.0), self.uniform(0.0, 1.0));
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// Multiplicative noise on every time.
#[derive(Debug, Clone, Copy)]
pub enum Noise {
    /// `t x (1 + u)`, `u` uniform in `[-a, a]`.
    Uniform(f64),
    /// `t x exp(sigma z)`, `z` standard normal.
    LogNormal(f64),
}

/// One true regime: latency and asymptotic bus bandwidth.
#[derive(Debug, Clone, Copy)]
pub struct TrueRegime {
    /// Latency, microseconds.
    pub alpha_us: f64,
    /// Asymptotic bus bandwidth, GB/s.
    pub busbw_gbs: f64,
}

/// A generated curve and the truth behind it.
pub struct Synthetic {
    /// One row per size.
    pub rows: Vec<InputRow>,
    /// The regimes after scaling and jitter.
    pub regimes: Vec<TrueRegime>,
    /// First size of each regime.
    pub firsts: Vec<u64>,
}

/// The doubling grid 8 B .. 8 GiB.
pub fn grid() -> Vec<u64> {
    (3..=33).map(|e| 1u64 << e).collect()
}

/// Generates an `nranks` curve of `collective` from `base` regimes on [`grid`].
///
/// Each regime's alpha is scaled by `1 + log2(n) / 2` (latency grows with the ring/tree depth)
/// and jittered, as is its busbw, by +-10% per seed; busbw becomes algbw through the
/// collective's factor. Every size is measured in the regime that is fastest there, as NCCL's
/// tuner aims to do, so later regimes have larger alpha and larger bandwidth, the breakpoints
/// fall where the next regime becomes faster, and the time may drop across one.
///
/// The curve must be identifiable, as real ones are, or this returns an error naming the
/// violated condition: every regime holds at least 4 sizes; its alpha is at least 30% of the
/// time at its smallest size (the latency is measured, not extrapolated); and its bandwidth term
/// is at least 8 times its alpha at its largest size (the bandwidth is measured too: at 2% noise
/// nothing less pins it to 3%). Hence base sets space alphas about 20x apart.
pub fn generate(
    base: &[TrueRegime],
    collective: Collective,
    nranks: usize,
    seed: u64,
    noise: Noise,
) -> Result<Synthetic, String> {
    let mut rng = SplitMix(seed);
    let factor = collective.busbw_factor(nranks);
    let depth = 1.0 + (nranks as f64).log2() / 2.0;
    let regimes: Vec<TrueRegime> = base
        .iter()
        .map(|r| TrueRegime {
            alpha_us: r.alpha_us * depth * rng.uniform(0.9, 1.1),
            busbw_gbs: r.busbw_gbs * rng.uniform(0.9, 1.1),
        })
        .collect();
    // Algorithm bandwidth in bytes per microsecond.
    let bw: Vec<f64> = regimes.iter().map(|r| r.busbw_gbs / factor * 1e3).collect();
    let model = |j: usize, s: u64| regimes[j].alpha_us + s as f64 / bw[j];
    let sizes = grid();
    let owner: Vec<usize> = sizes
        .iter()
        .map(|&s| {
            (0..regimes.len())
                .min_by(|&a, &b| model(a, s).total_cmp(&model(b, s)))
                .unwrap_or(0)
        })
        .collect();
    let mut firsts = Vec::new();
    for j in 0..regimes.len() {
        let mine: Vec<u64> = (0..sizes.len())
            .filter(|&i| owner[i] == j)
            .map(|i| sizes[i])
            .collect();
        let (Some(&lo), Some(&hi)) = (mine.first(), mine.last()) else {
            return Err(format!("regime {j} owns no size"));
        };
        if mine.len() < 4 {
            return Err(format!("regime {j} owns {} sizes", mine.len()));
        }
        if regimes[j].alpha_us < 0.3 * model(j, lo) {
            return Err(format!("regime {j}: alpha below 30% of T at {lo} B"));
        }
        if (hi as f64 / bw[j]) < 8.0 * regimes[j].alpha_us {
            return Err(format!(
                "regime {j}: bandwidth term below 8 alpha at {hi} B"
            ));
        }
        firsts.push(lo);
    }
    let rows = sizes
        .iter()
        .zip(&owner)
        .map(|(&s, &j)| {
            let scale = match noise {
                Noise::Uniform(a) => 1.0 + rng.uniform(-a, a),
                Noise::LogNormal(sigma) => (sigma * rng.normal()).exp(),
            };
            row(collective, nranks, s, model(j, s) * scale, factor)
        })
        .collect();
    Ok(Synthetic {
        rows,
        regimes,
        firsts,
    })
}

/// An nccl-tests-like row with its bandwidth columns.
pub fn row(c: Collective, nranks: usize, bytes: u64, time_us: f64, factor: f64) -> InputRow {
    let algbw = bytes as f64 / time_us * 1e-3;
    InputRow {
        source: SourceRef {
            file: "synthetic".into(),
            line: 0,
        },
        collective: Some(c.name().into()),
        dtype: "float".into(),
        op: "sum".into(),
        root: -1,
        nranks: Some(nranks),
        placement: Placement::OutOfPlace,
        cycle: 0,
        run: 0,
        bytes,
        count: bytes / 4,
        time_us,
        algbw_gbs: algbw,
        busbw_gbs: algbw * factor,
        wrong: Some(0.0),
        tuning: None,
    }
}
