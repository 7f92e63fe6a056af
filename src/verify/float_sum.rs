//! Float `sum` and `mulsum`: inputs whose sum is exact in every order and association.
//!
//! Per element, every contribution is an integer `k_r` times one power of two `2^e`, and
//! `sum_r |scalar_r * k_r| <= 2^p` (`p` = precision): every partial sum of any association is
//! then an integer of at most `p` bits times `2^e`, exactly representable, and `e` is chosen so
//! all of them are normal and finite. Hence the reduction never rounds.
//!
//! The ranks contributing to an element form a window of `m` consecutive ranks (cyclically)
//! starting at a per-element leader `rho`; `m = n` unless the budget is too small (fp8, bf16 with
//! many ranks). At window position `j = (r - rho) mod n`:
//! * `j = 0` (the leader): `s0 * a0`;
//! * `1 <= j < m`: `s * (-1)^j * (a + b*j)`, an arithmetic progression with alternating signs;
//! * `j >= m`: 0.
//!
//! The weighted sum of the progression is `s * (a*C_a + b*C_b)` with per-call constants
//! (`C_a = sum (-1)^j w_j`, `C_b = sum (-1)^j w_j j`, `w_j` the mulsum scalar of the rank), so the
//! expected value costs O(1) per element. The leader's `a0 = 2u + 1 + (R mod 2)` makes the total
//! odd, hence never zero (a zeroed, untouched receive buffer is always caught). For mulsum the
//! leader is always an even rank (scalar 1) so that parity argument holds.
//!
//! Budget: the leader takes at most `2^p / 2`, the progression at most `2^p / 2`.

use super::hash::{apply_sign, bit_mask, log2_fit, low_mask, mix, pick16, pick32, second};
use super::kernel::Gen;
use super::layout::{Encode, Layout};
use crate::op::{mulsum_scalar, RedOp};

/// Per-call constants of the sum pattern.
#[derive(Debug, Clone)]
pub(crate) struct SumShape {
    n: u64,
    /// Window length.
    m: u64,
    /// Leaders are `step * c` for `c` in `0..choices`.
    step: u64,
    choices: u64,
    e_lo: i32,
    e_span: u64,
    amask: u64,
    bmask: u64,
    umask: u64,
    /// `(C_a, C_b)` per leader choice, or one entry when they do not depend on the leader.
    table: Vec<(i64, i64)>,
}

/// The per-element draws shared by the inputs and the expected value.
struct Draw {
    e: i32,
    choice: u64,
    s: i64,
    s0: i64,
    a: i64,
    b: i64,
    u: i64,
}

impl SumShape {
    /// Constants for `nranks` ranks of a float type with layout `l`; `op` is sum or mulsum.
    pub fn new(l: &Layout, op: RedOp, nranks: usize) -> SumShape {
        let n = nranks.max(1) as u64;
        let mulsum = op == RedOp::MulSum;
        let weight = |r: u64| {
            if mulsum {
                mulsum_scalar(r as usize) as i64
            } else {
                1
            }
        };
        let half = 1u64 << (l.p - 1);
        // Largest window whose all-ones progression fits half the budget.
        let max_others = if mulsum { 2 * half / 3 } else { half };
        let m = n.min(max_others + 1);
        let (step, choices) = if mulsum { (2, n.div_ceil(2)) } else { (1, n) };
        let per_leader = mulsum && n % 2 == 1;
        let mut table = Vec::new();
        let (mut da_max, mut db_max) = (0i64, 0i64);
        for c in 0..if per_leader { choices } else { 1 } {
            let rho = step * c;
            let (mut ca, mut cb, mut da, mut db) = (0i64, 0i64, 0i64, 0i64);
            for j in 1..m {
                let w = weight((rho + j) % n);
                let sign = if j % 2 == 1 { -1 } else { 1 };
                ca += sign * w;
                cb += sign * w * j as i64;
                da += w;
                db += w * j as i64;
            }
            table.push((ca, cb));
            da_max = da_max.max(da);
            db_max = db_max.max(db);
        }
        let (ka, kb) = if m > 1 {
            let ka = log2_fit(half / 2, da_max as u64);
            let rest = half - ((da_max as u64) << ka);
            let kb = if db_max > 0 {
                log2_fit(rest + db_max as u64, db_max as u64)
            } else {
                0
            };
            (ka, kb)
        } else {
            (0, 0)
        };
        SumShape {
            n,
            m,
            step,
            choices,
            e_lo: l.emin,
            e_span: (l.emax - l.p as i32 - l.emin + 1) as u64,
            amask: low_mask(ka),
            bmask: low_mask(kb),
            umask: low_mask(l.p - 2),
            table,
        }
    }

    /// True when `(C_a, C_b)` depend on the leader.
    pub fn per_leader(&self) -> bool {
        self.table.len() > 1
    }

    #[inline(always)]
    fn draw(&self, key: u64, g: u64) -> Draw {
        let h = mix(key, g);
        let h2 = second(h);
        Draw {
            e: self.e_lo + pick16(h2, 40, self.e_span) as i32,
            choice: pick32(h2, self.choices),
            s: bit_mask(h2, 63),
            s0: bit_mask(h2, 62),
            a: 1 + (h & self.amask) as i64,
            b: (h.rotate_right(21) & self.bmask) as i64,
            u: (h.rotate_right(42) & self.umask) as i64,
        }
    }

    /// The progression's signed total `R` and the leader's signed value.
    #[inline(always)]
    fn totals<const TABLE: bool>(&self, d: &Draw) -> (i64, i64) {
        let (ca, cb) = if TABLE {
            self.table[d.choice as usize]
        } else {
            self.table[0]
        };
        let r = apply_sign(d.a * ca + d.b * cb, d.s);
        let a0 = 2 * d.u + 1 + (r & 1);
        (r, apply_sign(a0, d.s0))
    }
}

/// The expected (reduced) value.
pub(crate) struct SumExpected<'a, E, const TABLE: bool> {
    /// Per-call constants.
    pub shape: &'a SumShape,
    /// Pattern key.
    pub key: u64,
    /// Element encoder.
    pub enc: E,
}

impl<E: Encode, const TABLE: bool> Gen for SumExpected<'_, E, TABLE> {
    #[inline(always)]
    fn bits(&self, g: u64) -> u64 {
        let d = self.shape.draw(self.key, g);
        let (r, lead) = self.shape.totals::<TABLE>(&d);
        self.enc.encode(lead + r, d.e)
    }
}

/// One rank's input.
pub(crate) struct SumInput<'a, E, const TABLE: bool> {
    /// Per-call constants.
    pub shape: &'a SumShape,
    /// Pattern key.
    pub key: u64,
    /// Element encoder.
    pub enc: E,
    /// Global rank (`< n`).
    pub rank: u64,
}

impl<E: Encode, const TABLE: bool> Gen for SumInput<'_, E, TABLE> {
    #[inline(always)]
    fn bits(&self, g: u64) -> u64 {
        let sh = self.shape;
        let d = sh.draw(self.key, g);
        let (_, lead) = sh.totals::<TABLE>(&d);
        let rho = sh.step * d.choice;
        let j = if self.rank >= rho {
            self.rank - rho
        } else {
            self.rank + sh.n - rho
        };
        let sign = d.s ^ -((j & 1) as i64);
        let k = if j == 0 {
            lead
        } else if j < sh.m {
            apply_sign(d.a + d.b * j as i64, sign)
        } else {
            0
        };
        self.enc.encode(k, d.e)
    }
}
