//! Turning CUDA and NCCL failures into ncclbench errors: CUDA ones exit 2 and NCCL ones 3, as
//! nccl-tests' testCudaError and testNcclError do, each one line naming the host and call.

use crate::bench::cuda::CudaError;
use crate::core::error::Error;
use nccl_sys::NcclError;

/// The short host name, as nccl-tests prefixes its failure lines.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into the buffer.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let full = String::from_utf8_lossy(&buf[..end]).into_owned();
    full.split('.').next().unwrap_or_default().to_string()
}

/// A CUDA failure: `<host>: CUDA failure: <call> failed: <name> (<text>)`.
pub(crate) fn cuda_err(e: CudaError) -> Error {
    match e {
        CudaError::NoDriver { .. } => Error::Cuda(format!(
            "{}: {e}; the NCCL backend needs an NVIDIA driver (use --backend host without GPUs)",
            hostname()
        )),
        e => Error::Cuda(format!("{}: CUDA failure: {e}", hostname())),
    }
}

/// An NCCL failure without more context: `<host>: NCCL failure: <call> ...`.
pub(crate) fn nccl_err(e: NcclError) -> Error {
    Error::Backend(format!("{}: NCCL failure: {e}", hostname()))
}

/// An NCCL failure of a collective call, naming the rank and the case.
pub(crate) fn nccl_call_err(e: NcclError, rank: usize, case: &str) -> Error {
    Error::Backend(format!(
        "{}: NCCL failure on rank {rank} ({case}): {e}",
        hostname()
    ))
}
