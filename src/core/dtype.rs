//! The element types a collective can move or reduce, named and ordered as nccl-tests names them.
//!
//! Everything that needs an element's width, signedness or float layout asks [`DataType`]; the
//! bit-level conversions for the narrow float types live in [`crate::core::numeric`].

use std::fmt;

/// One NCCL element type. The order of [`DataType::ALL`] is nccl-tests' `-d all` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataType {
    /// `int8`
    Int8,
    /// `uint8`
    Uint8,
    /// `int32`
    Int32,
    /// `uint32`
    Uint32,
    /// `int64`
    Int64,
    /// `uint64`
    Uint64,
    /// `half` (IEEE binary16)
    Half,
    /// `float` (IEEE binary32)
    Float,
    /// `double` (IEEE binary64)
    Double,
    /// `bfloat16`
    Bfloat16,
    /// `f8e4m3` (OCP E4M3, "fn": no infinities, one NaN per sign)
    F8e4m3,
    /// `f8e5m2` (OCP E5M2, IEEE-like with infinities)
    F8e5m2,
}

/// Bit layout of a floating-point element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloatFormat {
    /// Exponent field width in bits.
    pub exp_bits: u32,
    /// Stored mantissa (fraction) bits, without the implicit leading one.
    pub man_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Whether the all-ones exponent encodes infinities/NaNs (IEEE style). E4M3 ("fn") uses
    /// it for normal numbers except the single all-ones NaN code.
    pub ieee_special: bool,
}

impl FloatFormat {
    /// Significand precision in bits, implicit bit included (24 for float).
    pub fn precision(&self) -> u32 {
        self.man_bits + 1
    }

    /// Smallest exponent of a normal number (unbiased).
    pub fn min_normal_exp(&self) -> i32 {
        1 - self.bias
    }

    /// Largest exponent of a finite normal number (unbiased).
    pub fn max_exp(&self) -> i32 {
        let top = (1i32 << self.exp_bits) - 1;
        if self.ieee_special {
            top - 1 - self.bias
        } else {
            top - self.bias
        }
    }
}

impl DataType {
    /// Every type, in nccl-tests' `-d all` order.
    pub const ALL: [DataType; 12] = [
        DataType::Int8,
        DataType::Uint8,
        DataType::Int32,
        DataType::Uint32,
        DataType::Int64,
        DataType::Uint64,
        DataType::Half,
        DataType::Float,
        DataType::Double,
        DataType::Bfloat16,
        DataType::F8e4m3,
        DataType::F8e5m2,
    ];

    /// The name nccl-tests prints and accepts with `-d`.
    pub fn name(self) -> &'static str {
        match self {
            DataType::Int8 => "int8",
            DataType::Uint8 => "uint8",
            DataType::Int32 => "int32",
            DataType::Uint32 => "uint32",
            DataType::Int64 => "int64",
            DataType::Uint64 => "uint64",
            DataType::Half => "half",
            DataType::Float => "float",
            DataType::Double => "double",
            DataType::Bfloat16 => "bfloat16",
            DataType::F8e4m3 => "f8e4m3",
            DataType::F8e5m2 => "f8e5m2",
        }
    }

    /// Parses a `-d` name (exact, case-sensitive, as nccl-tests).
    pub fn parse(name: &str) -> Option<DataType> {
        DataType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Element size in bytes.
    pub fn size(self) -> usize {
        match self {
            DataType::Int8 | DataType::Uint8 | DataType::F8e4m3 | DataType::F8e5m2 => 1,
            DataType::Half | DataType::Bfloat16 => 2,
            DataType::Int32 | DataType::Uint32 | DataType::Float => 4,
            DataType::Int64 | DataType::Uint64 | DataType::Double => 8,
        }
    }

    /// True for the floating-point types.
    pub fn is_float(self) -> bool {
        self.float_format().is_some()
    }

    /// True for the signed integer types.
    pub fn is_signed_int(self) -> bool {
        matches!(self, DataType::Int8 | DataType::Int32 | DataType::Int64)
    }

    /// Float layout, `None` for integer types.
    pub fn float_format(self) -> Option<FloatFormat> {
        let f = |exp_bits, man_bits, bias, ieee_special| {
            Some(FloatFormat {
                exp_bits,
                man_bits,
                bias,
                ieee_special,
            })
        };
        match self {
            DataType::Half => f(5, 10, 15, true),
            DataType::Float => f(8, 23, 127, true),
            DataType::Double => f(11, 52, 1023, true),
            DataType::Bfloat16 => f(8, 7, 127, true),
            DataType::F8e4m3 => f(4, 3, 7, false),
            DataType::F8e5m2 => f(5, 2, 15, true),
            _ => None,
        }
    }

    /// The `ncclDataType_t` code.
    pub fn nccl_code(self) -> i32 {
        use nccl_sys::data_type as d;
        match self {
            DataType::Int8 => d::INT8,
            DataType::Uint8 => d::UINT8,
            DataType::Int32 => d::INT32,
            DataType::Uint32 => d::UINT32,
            DataType::Int64 => d::INT64,
            DataType::Uint64 => d::UINT64,
            DataType::Half => d::FLOAT16,
            DataType::Float => d::FLOAT32,
            DataType::Double => d::FLOAT64,
            DataType::Bfloat16 => d::BFLOAT16,
            DataType::F8e4m3 => d::FLOAT8E4M3,
            DataType::F8e5m2 => d::FLOAT8E5M2,
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_rejected() {
        for t in DataType::ALL {
            assert_eq!(DataType::parse(t.name()), Some(t));
        }
        assert_eq!(DataType::parse("Float"), None);
        assert_eq!(DataType::parse("fp32"), None);
    }

    #[test]
    fn float_formats_have_the_standard_ranges() {
        let h = DataType::Half.float_format().unwrap();
        assert_eq!(
            (h.min_normal_exp(), h.max_exp(), h.precision()),
            (-14, 15, 11)
        );
        let e4 = DataType::F8e4m3.float_format().unwrap();
        assert_eq!((e4.min_normal_exp(), e4.max_exp()), (-6, 8));
        let e5 = DataType::F8e5m2.float_format().unwrap();
        assert_eq!((e5.min_normal_exp(), e5.max_exp()), (-14, 15));
        let d = DataType::Double.float_format().unwrap();
        assert_eq!(d.precision(), 53);
    }
}
