//! Raw NCCL definitions for ncclbench.
//!
//! For now this holds the enum codes of `nccl.h` that the rest of ncclbench must agree with
//! (data types and reduction operators), so that every backend passes NCCL the same numbers.
//! The run-time loader and the full bindgen output arrive with the NCCL backend.

/// `ncclDataType_t` codes from `nccl.h` (stable since NCCL 2.0; bf16 since 2.10, fp8 since 2.24).
pub mod data_type {
    /// `ncclInt8`
    pub const INT8: i32 = 0;
    /// `ncclUint8`
    pub const UINT8: i32 = 1;
    /// `ncclInt32`
    pub const INT32: i32 = 2;
    /// `ncclUint32`
    pub const UINT32: i32 = 3;
    /// `ncclInt64`
    pub const INT64: i32 = 4;
    /// `ncclUint64`
    pub const UINT64: i32 = 5;
    /// `ncclFloat16`
    pub const FLOAT16: i32 = 6;
    /// `ncclFloat32`
    pub const FLOAT32: i32 = 7;
    /// `ncclFloat64`
    pub const FLOAT64: i32 = 8;
    /// `ncclBfloat16`
    pub const BFLOAT16: i32 = 9;
    /// `ncclFloat8e4m3`
    pub const FLOAT8E4M3: i32 = 10;
    /// `ncclFloat8e5m2`
    pub const FLOAT8E5M2: i32 = 11;
}

/// `ncclRedOp_t` codes from `nccl.h` (`ncclAvg` since NCCL 2.10; PreMulSum ops are created at run time).
pub mod red_op {
    /// `ncclSum`
    pub const SUM: i32 = 0;
    /// `ncclProd`
    pub const PROD: i32 = 1;
    /// `ncclMax`
    pub const MAX: i32 = 2;
    /// `ncclMin`
    pub const MIN: i32 = 3;
    /// `ncclAvg`
    pub const AVG: i32 = 4;
}
