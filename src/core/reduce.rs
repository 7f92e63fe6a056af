//! Reduction kernels: combine one chunk of every rank's input into an output chunk, with NCCL's
//! arithmetic for every element type and operator.
//!
//! Ranks are folded in rank order. Integers wrap in their width; `min`/`max` compare signed
//! types as signed; integer `avg` is the wrapped sum divided by the rank count, truncating
//! toward zero. Every float step is the exact result rounded to the element type (`float` and
//! `double` natively; the narrow types through `f64`, which holds every sum and product of two
//! of them exactly or rounds innocuously). Float `avg` is NCCL's PreMulSum: each input times
//! 1/n rounded to the type, then summed; `mulsum` multiplies by [`mulsum_scalar`] likewise.

use crate::core::dtype::DataType;
use crate::core::numeric::{from_f64, to_f64};
use crate::core::op::{mulsum_scalar, RedOp};
use half::{bf16, f16};

/// A fixed-width little-endian element.
trait Lane: Copy {
    const WIDTH: usize;
    fn get(b: &[u8]) -> Self;
    fn put(self, b: &mut [u8]);
}

/// Rewrites every element of `out` as `f(out[i], src[i])`.
#[inline]
fn zip_with<T: Lane>(out: &mut [u8], src: &[u8], f: impl Fn(T, T) -> T) {
    for (o, s) in out
        .chunks_exact_mut(T::WIDTH)
        .zip(src.chunks_exact(T::WIDTH))
    {
        f(T::get(o), T::get(s)).put(o);
    }
}

/// Rewrites every element of `out` as `f(out[i])`.
#[inline]
fn map<T: Lane>(out: &mut [u8], f: impl Fn(T) -> T) {
    for o in out.chunks_exact_mut(T::WIDTH) {
        f(T::get(o)).put(o);
    }
}

/// Reduces `inputs` (one slice per rank, in rank order, each as long as `out`) into `out`.
pub fn reduce(dtype: DataType, op: RedOp, inputs: &[&[u8]], out: &mut [u8]) {
    match dtype {
        DataType::Int8 => ints::<i8>(op, inputs, out),
        DataType::Uint8 => ints::<u8>(op, inputs, out),
        DataType::Int32 => ints::<i32>(op, inputs, out),
        DataType::Uint32 => ints::<u32>(op, inputs, out),
        DataType::Int64 => ints::<i64>(op, inputs, out),
        DataType::Uint64 => ints::<u64>(op, inputs, out),
        DataType::Float => floats::<f32>(op, inputs, out),
        DataType::Double => floats::<f64>(op, inputs, out),
        DataType::Half => floats::<f16>(op, inputs, out),
        DataType::Bfloat16 => floats::<bf16>(op, inputs, out),
        DataType::F8e4m3 => floats::<E4m3>(op, inputs, out),
        DataType::F8e5m2 => floats::<E5m2>(op, inputs, out),
    }
}

/// Integer arithmetic of one width.
trait Int: Lane + Ord {
    fn wadd(self, o: Self) -> Self;
    fn wmul(self, o: Self) -> Self;
    fn small(v: u32) -> Self;
    /// Division by the rank count, truncating toward zero.
    fn div_ranks(self, n: usize) -> Self;
}

/// `Lane` for a primitive number: little-endian bytes in and out.
macro_rules! le_lane {
    ($t:ty) => {
        impl Lane for $t {
            const WIDTH: usize = std::mem::size_of::<$t>();
            #[inline]
            fn get(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            #[inline]
            fn put(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_le_bytes());
            }
        }
    };
}

macro_rules! int_lane {
    ($($t:ty => $wide:ty),*) => {$(
        le_lane!($t);
        impl Int for $t {
            #[inline]
            fn wadd(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline]
            fn wmul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn small(v: u32) -> Self { v as $t }
            fn div_ranks(self, n: usize) -> Self {
                // The quotient's magnitude never exceeds the dividend's, so it fits back.
                ((self as $wide) / (n as $wide)) as $t
            }
        }
    )*};
}
int_lane!(i8 => i64, u8 => u64, i32 => i64, u32 => u64, i64 => i128, u64 => u64);

fn ints<T: Int>(op: RedOp, inputs: &[&[u8]], out: &mut [u8]) {
    let Some((first, rest)) = inputs.split_first() else {
        return;
    };
    out.copy_from_slice(first);
    match op {
        RedOp::Sum | RedOp::Avg => rest.iter().for_each(|s| zip_with(out, s, T::wadd)),
        RedOp::Prod => rest.iter().for_each(|s| zip_with(out, s, T::wmul)),
        RedOp::Max => rest.iter().for_each(|s| zip_with(out, s, T::max)),
        RedOp::Min => rest.iter().for_each(|s| zip_with(out, s, T::min)),
        RedOp::MulSum => {
            let k0 = T::small(mulsum_scalar(0));
            map(out, |a: T| a.wmul(k0));
            for (r, s) in rest.iter().enumerate() {
                let k = T::small(mulsum_scalar(r + 1));
                zip_with(out, s, |a: T, x: T| a.wadd(x.wmul(k)));
            }
        }
    }
    if op == RedOp::Avg {
        let n = inputs.len();
        map(out, |a: T| a.div_ranks(n));
    }
}

/// Float arithmetic of one element type; every result is rounded to the type.
trait Float: Lane {
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn from_f64(v: f64) -> Self;
}

fn floats<T: Float>(op: RedOp, inputs: &[&[u8]], out: &mut [u8]) {
    let Some((first, rest)) = inputs.split_first() else {
        return;
    };
    out.copy_from_slice(first);
    match op {
        RedOp::Sum => rest.iter().for_each(|s| zip_with(out, s, T::add)),
        RedOp::Prod => rest.iter().for_each(|s| zip_with(out, s, T::mul)),
        RedOp::Max => rest.iter().for_each(|s| zip_with(out, s, T::max)),
        RedOp::Min => rest.iter().for_each(|s| zip_with(out, s, T::min)),
        RedOp::Avg | RedOp::MulSum => {
            let scalar = |r: usize| match op {
                RedOp::Avg => T::from_f64(1.0 / inputs.len() as f64),
                _ => T::from_f64(f64::from(mulsum_scalar(r))),
            };
            let k0 = scalar(0);
            map(out, |a: T| a.mul(k0));
            for (r, s) in rest.iter().enumerate() {
                let k = scalar(r + 1);
                zip_with(out, s, |a: T, x: T| a.add(x.mul(k)));
            }
        }
    }
}

macro_rules! native_float {
    ($($t:ty),*) => {$(
        le_lane!($t);
        impl Float for $t {
            #[inline]
            fn add(self, o: Self) -> Self { self + o }
            #[inline]
            fn mul(self, o: Self) -> Self { self * o }
            #[inline]
            fn min(self, o: Self) -> Self { <$t>::min(self, o) }
            #[inline]
            fn max(self, o: Self) -> Self { <$t>::max(self, o) }
            fn from_f64(v: f64) -> Self { v as $t }
        }
    )*};
}
native_float!(f32, f64);

/// Narrow float types computed through `f64`: `$to` and `$from` convert a value.
macro_rules! narrow_float {
    ($t:ty, $width:expr, $get:expr, $put:expr, $to:expr, $from:expr) => {
        impl Lane for $t {
            const WIDTH: usize = $width;
            #[inline]
            fn get(b: &[u8]) -> Self {
                $get(b)
            }
            #[inline]
            fn put(self, b: &mut [u8]) {
                $put(self, b)
            }
        }
        impl Float for $t {
            #[inline]
            fn add(self, o: Self) -> Self {
                $from($to(self) + $to(o))
            }
            #[inline]
            fn mul(self, o: Self) -> Self {
                $from($to(self) * $to(o))
            }
            #[inline]
            fn min(self, o: Self) -> Self {
                $from(f64::min($to(self), $to(o)))
            }
            #[inline]
            fn max(self, o: Self) -> Self {
                $from(f64::max($to(self), $to(o)))
            }
            fn from_f64(v: f64) -> Self {
                $from(v)
            }
        }
    };
}

fn get16(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}

narrow_float!(
    f16,
    2,
    |b| f16::from_bits(get16(b)),
    |v: f16, b: &mut [u8]| b.copy_from_slice(&v.to_bits().to_le_bytes()),
    |v: f16| v.to_f64(),
    f16::from_f64
);
narrow_float!(
    bf16,
    2,
    |b| bf16::from_bits(get16(b)),
    |v: bf16, b: &mut [u8]| b.copy_from_slice(&v.to_bits().to_le_bytes()),
    |v: bf16| v.to_f64(),
    bf16::from_f64
);

/// An OCP E4M3 element (bits).
#[derive(Clone, Copy)]
struct E4m3(u8);
/// An OCP E5M2 element (bits).
#[derive(Clone, Copy)]
struct E5m2(u8);

narrow_float!(
    E4m3,
    1,
    |b: &[u8]| E4m3(b[0]),
    |v: E4m3, b: &mut [u8]| b[0] = v.0,
    |v: E4m3| to_f64(DataType::F8e4m3, u64::from(v.0)),
    |v| E4m3(from_f64(DataType::F8e4m3, v) as u8)
);
narrow_float!(
    E5m2,
    1,
    |b: &[u8]| E5m2(b[0]),
    |v: E5m2, b: &mut [u8]| b[0] = v.0,
    |v: E5m2| to_f64(DataType::F8e5m2, u64::from(v.0)),
    |v| E5m2(from_f64(DataType::F8e5m2, v) as u8)
);
