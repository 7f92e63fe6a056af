//! Turning CUDA and NCCL failures into ncclbench errors: CUDA ones exit 2 and NCCL ones 3, as
//! nccl-tests' testCudaError and testNcclError do, each one line naming the host and call.

use crate::bench::cuda::CudaError;
use crate::core::error::Error;
use crate::core::host::gethostname_short;
use nccl_sys::NcclError;

/// A CUDA failure: `<host>: CUDA failure: <call> failed: <name> (<text>)`.
pub(crate) fn cuda_err(e: CudaError) -> Error {
    match e {
        CudaError::NoDriver { .. } => Error::Cuda(format!(
            "{}: {e}; the NCCL backend needs an NVIDIA driver (use --backend host without GPUs)",
            gethostname_short()
        )),
        e => Error::Cuda(format!("{}: CUDA failure: {e}", gethostname_short())),
    }
}

/// An NCCL failure without more context: `<host>: NCCL failure: <call> ...`.
pub(crate) fn nccl_err(e: NcclError) -> Error {
    Error::Backend(format!("{}: NCCL failure: {e}", gethostname_short()))
}

/// An NCCL failure of a collective call, naming the rank and the case.
pub(crate) fn nccl_call_err(e: NcclError, rank: usize, case: &str) -> Error {
    Error::Backend(format!(
        "{}: NCCL failure on rank {rank} ({case}): {e}",
        gethostname_short()
    ))
}
