//! Which generator runs for a reduction pattern: the per-call constants of every type family
//! and operator, and the choice of generator type (encoder, width, table use, kind) that keeps
//! each inner loop free of run-time branches.

use super::float_avg::{AvgExpected, AvgInput, AvgShape, DOUBLE, FLOAT, NARROW};
use super::float_minmax::{MinMaxExpected, MinMaxInput, MinMaxShape};
use super::float_prod::{ProdExpected, ProdInput, ProdShape};
use super::float_sum::{SumExpected, SumInput, SumShape};
use super::int::{kind, IntExpected, IntInput, IntShape};
use super::kernel::{apply, apply_w, Action};
use super::layout::{EncF32, EncF64, EncNarrow, Encode, Layout};
use crate::core::dtype::DataType;
use crate::core::op::RedOp;

/// The reduction pattern's constants, by type family and operator.
#[derive(Debug, Clone)]
pub(crate) enum Reduce {
    Int(IntShape),
    Sum(SumShape, Layout, Vec<(i64, i64)>),
    Prod(ProdShape),
    MinMax(MinMaxShape, bool),
    Avg(AvgShape),
}

impl Reduce {
    /// The constants of `dtype` and `op` over `nranks` ranks (at least 1).
    pub fn new(dtype: DataType, op: RedOp, nranks: usize) -> Reduce {
        match Layout::of(dtype) {
            None => Reduce::Int(IntShape::new(dtype, op, nranks)),
            Some(l) => match op {
                RedOp::Sum | RedOp::MulSum => {
                    let (shape, table) = SumShape::new(&l, op, nranks);
                    Reduce::Sum(shape, l, table)
                }
                RedOp::Prod => Reduce::Prod(ProdShape::new(&l, nranks)),
                RedOp::Max => Reduce::MinMax(MinMaxShape::new(&l, nranks), true),
                RedOp::Min => Reduce::MinMax(MinMaxShape::new(&l, nranks), false),
                RedOp::Avg => Reduce::Avg(AvgShape::new(dtype, &l, nranks)),
            },
        }
    }

    /// Writes the family constants of a device run (key, side and rank are already set).
    pub fn describe(&self, run: &mut super::device::DevRun) {
        use super::device::family;
        let d = &mut run.params;
        match self {
            Reduce::Int(shape) => {
                d.family = family::INT;
                shape.describe(d);
            }
            Reduce::Sum(shape, l, table) => {
                d.family = family::SUM;
                l.describe(d);
                shape.describe(d);
                run.table = table.iter().flat_map(|&(a, b)| [a, b]).collect();
            }
            Reduce::Prod(shape) => {
                d.family = family::PROD;
                shape.describe(d);
            }
            Reduce::MinMax(shape, max) => {
                d.family = family::MINMAX;
                d.max = *max as u32;
                shape.describe(d);
            }
            Reduce::Avg(shape) => {
                d.family = family::AVG;
                shape.describe(d);
            }
        }
    }

    /// Runs `action` on the expected (reduced) run starting at global index `first`.
    pub fn expected(&self, dtype: DataType, key: u64, first: u64, action: Action<'_>) -> u64 {
        let w = dtype.size();
        match self {
            Reduce::Int(shape) => {
                let shape = *shape;
                match shape.kind() {
                    kind::LINEAR => apply(
                        &IntExpected::<{ kind::LINEAR }> { shape, key },
                        w,
                        first,
                        action,
                    ),
                    kind::AVG => apply(
                        &IntExpected::<{ kind::AVG }> { shape, key },
                        w,
                        first,
                        action,
                    ),
                    kind::PROD => apply(
                        &IntExpected::<{ kind::PROD }> { shape, key },
                        w,
                        first,
                        action,
                    ),
                    kind::ORDERED => apply(
                        &IntExpected::<{ kind::ORDERED }> { shape, key },
                        w,
                        first,
                        action,
                    ),
                    _ => apply(
                        &IntExpected::<{ kind::FOLD }> { shape, key },
                        w,
                        first,
                        action,
                    ),
                }
            }
            Reduce::Sum(shape, l, table) => {
                let side = ExpectedSide { shape, table, key };
                sum_dispatch(&side, l, dtype, first, action)
            }
            Reduce::Prod(shape) => apply(&ProdExpected { shape: *shape, key }, w, first, action),
            Reduce::MinMax(shape, max) => {
                let (shape, max) = (*shape, *max);
                if shape.monotone() {
                    let gen = MinMaxExpected::<false> { shape, key, max };
                    apply(&gen, w, first, action)
                } else {
                    let gen = MinMaxExpected::<true> { shape, key, max };
                    apply(&gen, w, first, action)
                }
            }
            Reduce::Avg(shape) => {
                let shape = *shape;
                match dtype {
                    DataType::Float => {
                        apply_w::<_, 4>(&AvgExpected::<FLOAT> { shape, key }, first, action)
                    }
                    DataType::Double => {
                        apply_w::<_, 8>(&AvgExpected::<DOUBLE> { shape, key }, first, action)
                    }
                    _ => apply(&AvgExpected::<NARROW> { shape, key }, w, first, action),
                }
            }
        }
    }

    /// Runs `action` on global `rank`'s input run starting at global index `first`.
    pub fn input(
        &self,
        dtype: DataType,
        key: u64,
        rank: u64,
        first: u64,
        action: Action<'_>,
    ) -> u64 {
        let w = dtype.size();
        match self {
            Reduce::Int(shape) => {
                let shape = *shape;
                match shape.kind() {
                    kind::PROD => apply(
                        &IntInput::<{ kind::PROD }> { shape, key, rank },
                        w,
                        first,
                        action,
                    ),
                    kind::ORDERED => apply(
                        &IntInput::<{ kind::ORDERED }> { shape, key, rank },
                        w,
                        first,
                        action,
                    ),
                    _ => apply(
                        &IntInput::<{ kind::LINEAR }> { shape, key, rank },
                        w,
                        first,
                        action,
                    ),
                }
            }
            Reduce::Sum(shape, l, table) => {
                let side = InputSide {
                    shape,
                    table,
                    key,
                    rank,
                };
                sum_dispatch(&side, l, dtype, first, action)
            }
            Reduce::Prod(shape) => {
                let gen = ProdInput {
                    shape: *shape,
                    key,
                    rank,
                };
                apply(&gen, w, first, action)
            }
            Reduce::MinMax(shape, _) => {
                let gen = MinMaxInput {
                    shape: *shape,
                    key,
                    rank: rank as u32,
                };
                apply(&gen, w, first, action)
            }
            Reduce::Avg(shape) => {
                let gen = AvgInput {
                    shape: *shape,
                    key,
                    rank,
                };
                apply(&gen, w, first, action)
            }
        }
    }
}

/// One side (expected value or a rank's input) of the sum pattern, runnable with any encoder,
/// table use and width; [`sum_dispatch`] picks the one combination a dtype needs.
trait SumSide {
    /// The shape both sides share.
    fn shape(&self) -> &SumShape;

    /// Runs this side with the given encoder, table use and width.
    fn run<E: Encode, const TABLE: bool, const W: usize>(
        &self,
        enc: E,
        first: u64,
        action: Action<'_>,
    ) -> u64;
}

struct ExpectedSide<'a> {
    shape: &'a SumShape,
    table: &'a [(i64, i64)],
    key: u64,
}

impl SumSide for ExpectedSide<'_> {
    fn shape(&self) -> &SumShape {
        self.shape
    }

    fn run<E: Encode, const TABLE: bool, const W: usize>(
        &self,
        enc: E,
        first: u64,
        action: Action<'_>,
    ) -> u64 {
        let (shape, table, key) = (*self.shape, self.table, self.key);
        let gen = SumExpected::<E, TABLE> {
            shape,
            table,
            key,
            enc,
        };
        apply_w::<_, W>(&gen, first, action)
    }
}

struct InputSide<'a> {
    shape: &'a SumShape,
    table: &'a [(i64, i64)],
    key: u64,
    rank: u64,
}

impl SumSide for InputSide<'_> {
    fn shape(&self) -> &SumShape {
        self.shape
    }

    fn run<E: Encode, const TABLE: bool, const W: usize>(
        &self,
        enc: E,
        first: u64,
        action: Action<'_>,
    ) -> u64 {
        // Ranks are below nranks, which the shape keeps in 32 bits.
        let (shape, table, key, rank) = (*self.shape, self.table, self.key, self.rank as u32);
        let gen = SumInput::<E, TABLE> {
            shape,
            table,
            key,
            enc,
            rank,
        };
        apply_w::<_, W>(&gen, first, action)
    }
}

/// Runs a side of the sum pattern with the encoder and width of `dtype` and the table use of
/// its shape.
fn sum_dispatch<S: SumSide>(
    side: &S,
    l: &Layout,
    dtype: DataType,
    first: u64,
    action: Action<'_>,
) -> u64 {
    let (a, f, t) = (action, first, side.shape().per_leader());
    match (dtype, t) {
        (DataType::Float, false) => side.run::<_, false, 4>(EncF32, f, a),
        (DataType::Float, true) => side.run::<_, true, 4>(EncF32, f, a),
        (DataType::Double, false) => side.run::<_, false, 8>(EncF64, f, a),
        (DataType::Double, true) => side.run::<_, true, 8>(EncF64, f, a),
        _ => match (l.bits, t) {
            (8, false) => side.run::<_, false, 1>(EncNarrow(*l), f, a),
            (8, true) => side.run::<_, true, 1>(EncNarrow(*l), f, a),
            (_, false) => side.run::<_, false, 2>(EncNarrow(*l), f, a),
            (_, true) => side.run::<_, true, 2>(EncNarrow(*l), f, a),
        },
    }
}
