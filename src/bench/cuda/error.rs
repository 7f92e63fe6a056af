//! [`CudaError`]: every way a driver call, or loading the driver, can fail, each displayed as
//! one line that names the call.

use std::ffi::{c_char, CStr};
use std::fmt;

use super::api::{Api, CUresult, CUDA_SUCCESS};

/// A failure to load libcuda or of one driver call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CudaError {
    /// No libcuda could be opened; `tried` holds each name tried with the loader's reason.
    NoDriver {
        /// `"<name>: <reason>"` per attempt, in order.
        tried: Vec<String>,
    },
    /// The library opened but lacks a required entry point (too old, or not libcuda).
    MissingSymbol {
        /// The library as it was opened.
        library: String,
        /// The C name of the entry point.
        symbol: &'static str,
    },
    /// A driver call returned an error.
    Call {
        /// The C name of the entry point, e.g. `cuMemAlloc_v2`.
        call: &'static str,
        /// The `CUresult`.
        code: CUresult,
        /// `cuGetErrorName`, e.g. `CUDA_ERROR_OUT_OF_MEMORY`, when the driver knows the code.
        name: Option<String>,
        /// `cuGetErrorString`, e.g. `out of memory`, when the driver knows the code.
        description: Option<String>,
    },
    /// A wrapper refused its arguments before calling the driver (e.g. a copy out of bounds).
    InvalidArgument {
        /// The entry point that would have been called.
        call: &'static str,
        /// Why it was refused.
        detail: String,
    },
}

impl CudaError {
    /// The `CUresult` of a failed call, `None` for the other kinds.
    pub fn code(&self) -> Option<CUresult> {
        match self {
            CudaError::Call { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Whether the failure poisons the context: a kernel fault (illegal address, `__trap`'s
    /// assert, illegal instruction, misaligned or out-of-space address, bad PC, launch failure,
    /// hardware stack error) or a launch timeout, after which the driver fails every call on
    /// that context with the same code until the process exits.
    pub fn is_sticky(&self) -> bool {
        matches!(self.code(), Some(700 | 702 | 710 | 714..=719))
    }
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CudaError::NoDriver { tried } => write!(
                f,
                "no CUDA driver found (libcuda could not be loaded; tried {})",
                tried.join("; ")
            ),
            CudaError::MissingSymbol { library, symbol } => write!(
                f,
                "CUDA driver {library} lacks the entry point {symbol} (driver too old, or not libcuda)"
            ),
            CudaError::Call { call, code, name, description } => {
                write!(f, "{call} failed: ")?;
                match (name, description) {
                    (Some(name), Some(text)) => write!(f, "{name} ({text})"),
                    (Some(name), None) => write!(f, "{name} (code {code})"),
                    (None, Some(text)) => write!(f, "CUresult {code} ({text})"),
                    (None, None) => write!(f, "CUresult {code}"),
                }
            }
            CudaError::InvalidArgument { call, detail } => write!(f, "{call} not called: {detail}"),
        }
    }
}

impl std::error::Error for CudaError {}

/// The name and meaning of the codes with which `cuInit` fails on a GPU node whose driver is
/// installed but cannot start, and what to check. Kept here because the driver's own text
/// (when it has one) says what failed, not what an operator should look at.
pub fn init_failure(code: CUresult) -> Option<(&'static str, &'static str)> {
    Some(match code {
        802 => (
            "CUDA_ERROR_SYSTEM_NOT_READY",
            "the system is not ready for CUDA work: a driver service it needs is not running \
             (on NVSwitch systems, the fabric manager: check nvidia-fabricmanager)",
        ),
        803 => (
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
            "the CUDA driver library does not match the loaded kernel module (a driver upgraded \
             without a reboot, or a container's libcuda from another driver)",
        ),
        804 => (
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            "the CUDA forward compatibility libraries are in use on a GPU that does not support \
             them",
        ),
        999 => (
            "CUDA_ERROR_UNKNOWN",
            "an unknown driver error (the kernel log may show an Xid for the GPU)",
        ),
        _ => return None,
    })
}

/// Turns `code`, returned by `call`, into a result, asking the driver for the code's name and
/// description on failure.
pub(crate) fn check(api: &Api, call: &'static str, code: CUresult) -> Result<(), CudaError> {
    if code == CUDA_SUCCESS {
        return Ok(());
    }
    Err(CudaError::Call {
        call,
        code,
        name: describe(api.get_error_name, code),
        description: describe(api.get_error_string, code),
    })
}

/// Calls `cuGetErrorName` or `cuGetErrorString`; `None` when the driver does not know `code`.
fn describe(
    f: unsafe extern "C" fn(CUresult, *mut *const c_char) -> CUresult,
    code: CUresult,
) -> Option<String> {
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: `text` is a valid out-pointer; the driver fills it with a static string or
    // leaves it NULL and returns CUDA_ERROR_INVALID_VALUE for unknown codes.
    let rc = unsafe { f(code, &mut text) };
    if rc != CUDA_SUCCESS || text.is_null() {
        return None;
    }
    // SAFETY: a non-NULL, NUL-terminated string owned by the driver for the process lifetime.
    let text = unsafe { CStr::from_ptr(text) }.to_string_lossy();
    // One line, whatever the driver says.
    Some(text.split_whitespace().collect::<Vec<_>>().join(" "))
}
