//! Element-wise reductions over the 12 NCCL data types, in rank order 0..n-1: integers wrap,
//! floats round to the element type after every step (the narrow types compute in f32).
//! `avg` is NCCL's: integers divide the wrapped sum by n (truncating); floats multiply each
//! input by 1/n rounded to the type, then sum. PreMulSum multiplies each rank's input by that
//! rank's scalar (a value of the element type) before summing.

use half::{bf16, f16};

use crate::fp8;

/// The reduction a collective performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedKind {
    Sum,
    Prod,
    Max,
    Min,
    Avg,
    PreMulSum,
}

impl RedKind {
    /// The built-in `ncclRedOp_t` code's kind.
    pub fn from_code(code: u32) -> Option<RedKind> {
        Some(match code {
            0 => RedKind::Sum,
            1 => RedKind::Prod,
            2 => RedKind::Max,
            3 => RedKind::Min,
            4 => RedKind::Avg,
            _ => return None,
        })
    }
}

/// Bytes per element of `ncclDataType_t` code `dtype` (0..=11).
pub fn dtype_size(dtype: u32) -> usize {
    match dtype {
        0 | 1 | 10 | 11 => 1,
        6 | 9 => 2,
        2 | 3 | 7 => 4,
        _ => 8,
    }
}

/// One element type's arithmetic.
trait Elem: Copy {
    const FLOAT: bool;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    /// Integer average's final division.
    fn div_n(self, n: usize) -> Self;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const FLOAT: bool = false;
            fn load(b: &[u8]) -> Self { <$t>::from_le_bytes(b.try_into().expect("element size")) }
            fn store(self, b: &mut [u8]) { b.copy_from_slice(&self.to_le_bytes()) }
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn max(self, o: Self) -> Self { Ord::max(self, o) }
            fn min(self, o: Self) -> Self { Ord::min(self, o) }
            fn from_f64(v: f64) -> Self { v as $t }
            fn to_f64(self) -> f64 { self as f64 }
            fn div_n(self, n: usize) -> Self { self.wrapping_div(n as $t) }
        }
    )*};
}
int_elem!(i8, u8, i32, u32, i64, u64);

macro_rules! float_elem {
    ($t:ty, $bits:ty, $wide:ty, $to:expr, $from:expr, $of64:expr) => {
        impl Elem for $t {
            const FLOAT: bool = true;
            fn load(b: &[u8]) -> Self {
                <$t>::from_bits(<$bits>::from_le_bytes(b.try_into().expect("element size")))
            }
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_bits().to_le_bytes())
            }
            fn add(self, o: Self) -> Self {
                $from($to(self) + $to(o))
            }
            fn mul(self, o: Self) -> Self {
                $from($to(self) * $to(o))
            }
            fn max(self, o: Self) -> Self {
                $from(<$wide>::max($to(self), $to(o)))
            }
            fn min(self, o: Self) -> Self {
                $from(<$wide>::min($to(self), $to(o)))
            }
            fn from_f64(v: f64) -> Self {
                $of64(v)
            }
            fn to_f64(self) -> f64 {
                $to(self) as f64
            }
            fn div_n(self, _n: usize) -> Self {
                self
            }
        }
    };
}
float_elem!(f16, u16, f32, f16::to_f32, f16::from_f32, f16::from_f64);
float_elem!(bf16, u16, f32, bf16::to_f32, bf16::from_f32, bf16::from_f64);
float_elem!(f32, u32, f32, |x: f32| x, |x: f32| x, |v: f64| v as f32);
float_elem!(f64, u64, f64, |x: f64| x, |x: f64| x, |v: f64| v);

/// An fp8 value of format `E5` (E5M2 if true, else E4M3), bits only.
#[derive(Clone, Copy)]
struct Fp8<const E5: bool>(u8);

impl<const E5: bool> Fp8<E5> {
    const F: fp8::Format = if E5 { fp8::E5M2 } else { fp8::E4M3 };
    fn f(self) -> f32 {
        fp8::decode(Self::F, self.0)
    }
    fn of(v: f32) -> Self {
        Fp8(fp8::encode(Self::F, v))
    }
}

float_elem!(
    Fp8<false>,
    u8,
    f32,
    Fp8::<false>::f,
    Fp8::<false>::of,
    Fp8::<false>::of64
);
float_elem!(
    Fp8<true>,
    u8,
    f32,
    Fp8::<true>::f,
    Fp8::<true>::of,
    Fp8::<true>::of64
);

impl<const E5: bool> Fp8<E5> {
    fn from_bits(b: u8) -> Self {
        Fp8(b)
    }
    fn to_bits(self) -> u8 {
        self.0
    }
    fn of64(v: f64) -> Self {
        Self::of(v as f32)
    }
}

/// Reduces `inputs` (one per rank, equal lengths) element-wise. `scalars[r]` is rank r's
/// PreMulSum scalar (element bytes) when `op` is PreMulSum.
pub fn reduce(dtype: u32, op: RedKind, scalars: &[[u8; 8]], inputs: &[&[u8]]) -> Vec<u8> {
    match dtype {
        0 => reduce_t::<i8>(op, scalars, inputs),
        1 => reduce_t::<u8>(op, scalars, inputs),
        2 => reduce_t::<i32>(op, scalars, inputs),
        3 => reduce_t::<u32>(op, scalars, inputs),
        4 => reduce_t::<i64>(op, scalars, inputs),
        5 => reduce_t::<u64>(op, scalars, inputs),
        6 => reduce_t::<f16>(op, scalars, inputs),
        7 => reduce_t::<f32>(op, scalars, inputs),
        8 => reduce_t::<f64>(op, scalars, inputs),
        9 => reduce_t::<bf16>(op, scalars, inputs),
        10 => reduce_t::<Fp8<false>>(op, scalars, inputs),
        _ => reduce_t::<Fp8<true>>(op, scalars, inputs),
    }
}

/// A scalar's value (element bytes of `dtype`) as f64, for traces.
pub fn scalar_to_f64(dtype: u32, b: &[u8; 8]) -> f64 {
    let s = dtype_size(dtype);
    let v = &b[..s];
    match dtype {
        0 => i8::load(v).to_f64(),
        1 => u8::load(v).to_f64(),
        2 => i32::load(v).to_f64(),
        3 => u32::load(v).to_f64(),
        4 => i64::load(v).to_f64(),
        5 => u64::load(v).to_f64(),
        6 => f16::load(v).to_f64(),
        7 => f32::load(v).to_f64(),
        8 => f64::load(v).to_f64(),
        9 => bf16::load(v).to_f64(),
        10 => Fp8::<false>::load(v).to_f64(),
        _ => Fp8::<true>::load(v).to_f64(),
    }
}

fn reduce_t<T: Elem>(op: RedKind, scalars: &[[u8; 8]], inputs: &[&[u8]]) -> Vec<u8> {
    let size = std::mem::size_of::<T>();
    let n = inputs.len();
    let scale: Vec<Option<T>> = match op {
        RedKind::PreMulSum => scalars.iter().map(|b| Some(T::load(&b[..size]))).collect(),
        RedKind::Avg if T::FLOAT => vec![Some(T::from_f64(1.0 / n as f64)); n],
        _ => vec![None; n],
    };
    let len = inputs.first().map_or(0, |i| i.len());
    let scaled = |x: T, s: Option<T>| s.map_or(x, |s| x.mul(s));
    // Rank by rank over every element (the order of a rank's steps is the same as element by
    // element; this one reads each input once, front to back).
    let mut acc: Vec<T> = match inputs.first() {
        Some(first) => first
            .chunks_exact(size)
            .map(|c| scaled(T::load(c), scale[0]))
            .collect(),
        None => Vec::new(),
    };
    for (input, &s) in inputs.iter().zip(&scale).skip(1) {
        for (a, c) in acc.iter_mut().zip(input.chunks_exact(size)) {
            let x = scaled(T::load(c), s);
            *a = match op {
                RedKind::Prod => a.mul(x),
                RedKind::Max => a.max(x),
                RedKind::Min => a.min(x),
                _ => a.add(x),
            };
        }
    }
    let mut out = vec![0u8; len];
    for (o, &v) in out.chunks_exact_mut(size).zip(&acc) {
        let v = if op == RedKind::Avg && !T::FLOAT {
            v.div_n(n)
        } else {
            v
        };
        v.store(o);
    }
    out
}
