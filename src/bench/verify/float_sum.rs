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

use super::hash::{log2_fit, low_mask, mix, pick32, second32, Idx};
use super::kernel::Gen;
use super::layout::{Encode, Lane, Layout};
use crate::core::op::{mulsum_scalar, RedOp};

/// Per-call constants of the sum pattern.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SumShape {
    /// Rank count (rank arithmetic is 32-bit: no communicator has 2^32 ranks).
    n: u32,
    /// Window length.
    m: u32,
    /// Leaders are `step * c` for `c` in `0..choices`.
    step: u32,
    choices: u32,
    e_lo: i32,
    e_span: u32,
    amask: u64,
    bmask: u64,
    umask: u64,
    /// `(C_a, C_b)` of leader choice 0.
    c0: (i64, i64),
    /// True when `(C_a, C_b)` depend on the leader (see [`SumShape::new`]'s table).
    per_leader: bool,
}

/// The per-element draws shared by the inputs and the expected value.
struct Draw<I> {
    e: i32,
    choice: u32,
    /// Sign bits (0 or 1) of the progression and of the leader.
    s: u32,
    s0: u32,
    a: I,
    b: I,
    u: I,
}

impl SumShape {
    /// Constants for `nranks` ranks of a float type with layout `l`; `op` is sum or mulsum.
    /// Also returns the `(C_a, C_b)` of every leader choice when they depend on the leader
    /// (mulsum over an odd rank count), else an empty table.
    pub fn new(l: &Layout, op: RedOp, nranks: usize) -> (SumShape, Vec<(i64, i64)>) {
        let n = u32::try_from(nranks.max(1)).unwrap_or(u32::MAX) as u64;
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
        let c0 = table[0];
        if !per_leader {
            table.clear();
        }
        let shape = SumShape {
            n: n as u32,
            m: m as u32,
            step: step as u32,
            choices: choices as u32,
            e_lo: l.emin,
            e_span: (l.emax - l.p as i32 - l.emin + 1) as u32,
            amask: low_mask(ka),
            bmask: low_mask(kb),
            umask: low_mask(l.p - 2),
            c0,
            per_leader,
        };
        (shape, table)
    }

    /// Writes this shape's device parameters.
    pub fn describe(&self, d: &mut super::device::DevParams) {
        d.m = self.m;
        d.step = self.step;
        d.choices = self.choices;
        d.e_lo = self.e_lo as i64;
        d.e_span = self.e_span as u64;
        d.amask = self.amask;
        d.bmask = self.bmask;
        d.umask = self.umask;
        (d.c0a, d.c0b) = self.c0;
        d.per_leader = self.per_leader as u32;
    }

    /// True when `(C_a, C_b)` depend on the leader.
    pub fn per_leader(&self) -> bool {
        self.per_leader
    }

    #[inline(always)]
    fn draw<I: Lane>(&self, key: u64, g: Idx) -> Draw<I> {
        let h = mix(key, g);
        let (a, b, u) = I::fields(h, self.amask, self.bmask, self.umask);
        let w = second32(h);
        Draw {
            e: self.e_lo + (((w >> 16) * self.e_span) >> 16) as i32,
            choice: pick32(w as u64, self.choices as u64) as u32,
            s: w & 1,
            s0: (w >> 1) & 1,
            a,
            b,
            u,
        }
    }

    /// The progression's signed total `R` and the leader's signed value.
    #[inline(always)]
    fn totals<I: Lane, const TABLE: bool>(&self, table: &[(i64, i64)], d: &Draw<I>) -> (I, I) {
        let (ca, cb) = if TABLE {
            let entry = table.get(d.choice as usize);
            entry.copied().unwrap_or(self.c0)
        } else {
            self.c0
        };
        let r =
            d.a.mul_add(I::of(ca as u64), d.b.mul_add(I::of(cb as u64), I::of(0)));
        let r = r.negate_if(d.s);
        // 2u + 1 + (r mod 2), never zero, and of the parity that makes the total odd.
        let a0 = d.u.mul_add(I::of(2), I::of(1)).add(r.low_bit());
        (r, a0.negate_if(d.s0))
    }
}

/// The expected (reduced) value.
#[derive(Clone, Copy)]
pub(crate) struct SumExpected<'a, E, const TABLE: bool> {
    /// Per-call constants.
    pub shape: SumShape,
    /// Per-leader coefficients (used when `TABLE`).
    pub table: &'a [(i64, i64)],
    /// Pattern key.
    pub key: u64,
    /// Element encoder.
    pub enc: E,
}

impl<E: Encode, const TABLE: bool> Gen for SumExpected<'_, E, TABLE> {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let d = self.shape.draw::<E::Int>(self.key, g);
        let (r, lead) = self.shape.totals::<E::Int, TABLE>(self.table, &d);
        self.enc.encode(lead.add(r), d.e)
    }
}

/// One rank's input.
#[derive(Clone, Copy)]
pub(crate) struct SumInput<'a, E, const TABLE: bool> {
    /// Per-call constants.
    pub shape: SumShape,
    /// Per-leader coefficients (used when `TABLE`).
    pub table: &'a [(i64, i64)],
    /// Pattern key.
    pub key: u64,
    /// Element encoder.
    pub enc: E,
    /// Global rank (`< n`).
    pub rank: u32,
}

impl<E: Encode, const TABLE: bool> Gen for SumInput<'_, E, TABLE> {
    #[inline(always)]
    fn bits(&self, g: Idx) -> u64 {
        let sh = &self.shape;
        let d = sh.draw::<E::Int>(self.key, g);
        let (_, lead) = sh.totals::<E::Int, TABLE>(self.table, &d);
        let rho = sh.step * d.choice;
        let wrap = if self.rank < rho { sh.n } else { 0 };
        let j = self.rank.wrapping_sub(rho).wrapping_add(wrap);
        let term =
            d.b.mul_add(E::Int::of(j as u64), d.a)
                .negate_if(d.s ^ (j & 1));
        let k = if j == 0 {
            lead
        } else if j < sh.m {
            term
        } else {
            E::Int::of(0)
        };
        self.enc.encode(k, d.e)
    }
}
