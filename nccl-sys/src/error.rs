//! Errors of loading libnccl and of NCCL calls, each a one-line message that says what to do.

use std::fmt;

use crate::bindings::ncclResult_t;
use crate::version::version_string;

/// Why [`crate::Nccl::open`] could not provide a usable NCCL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The search found nothing: one line per place looked in, in search order.
    #[error(
        "cannot find libnccl; looked, in order, at:\n  {}\nname one with --nccl-lib PATH or {}=PATH",
        .tried.join("\n  "),
        crate::LIB_ENV
    )]
    NotFound {
        /// Each place looked in and what was (not) there, in order.
        tried: Vec<String>,
    },
    /// The library named by `--nccl-lib` or the environment cannot be used; the search does
    /// not go on to find another one.
    #[error("{step} {path} cannot be used: {reason}")]
    Requested {
        /// Which request named it.
        step: crate::Step,
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A search step found a library that cannot be used (a broken install is reported, not
    /// skipped for one found later).
    #[error("{error} (found by the library search in {step}; name another with --nccl-lib PATH or {}=PATH)", crate::LIB_ENV)]
    Broken {
        /// The step that found it.
        step: crate::Step,
        /// Why it cannot be used.
        error: Box<LoadError>,
    },
    /// The file exists but the dynamic loader refused it (wrong architecture, missing dependency...).
    #[error("cannot load {library}: {reason}")]
    Open {
        /// The path or soname given to `dlopen`.
        library: String,
        /// The loader's message (`dlerror`).
        reason: String,
    },
    /// A symbol every supported NCCL exports is missing.
    #[error("{}", missing_symbol_message(.library, .symbol, *.version))]
    MissingSymbol {
        /// The path or soname that was loaded.
        library: String,
        /// The C name of the missing entry point.
        symbol: &'static str,
        /// `ncclGetVersion`'s answer when the library has it.
        version: Option<i32>,
    },
    /// `ncclGetVersion` returned an error.
    #[error("ncclGetVersion failed in {library} (ncclResult_t {code})")]
    Version {
        /// The path or soname that was loaded.
        library: String,
        /// The `ncclResult_t` it returned.
        code: ncclResult_t,
    },
    /// The dynamic loader cannot say which file it loaded (`dladdr` failed).
    #[error("cannot tell which file {library} was loaded from")]
    Unresolved {
        /// The path or soname that was loaded.
        library: String,
    },
}

fn missing_symbol_message(library: &str, symbol: &str, version: Option<i32>) -> String {
    match version {
        None => format!("{library} does not export {symbol}: it is not an NCCL library"),
        Some(code) => format!(
            "{library} (NCCL {}) does not export {symbol}, which ncclbench needs (NCCL 2.7 or newer)",
            version_string(code)
        ),
    }
}

/// Whether NCCL records a message for `ncclGetLastError` on the way to returning `code`.
///
/// NCCL keeps one process-wide buffer, overwritten by every WARN-level log message and never
/// cleared. Every error a host call returns (`ncclUnhandledCudaError` through `ncclRemoteError`)
/// starts at a WARN, so the buffer then holds that error's message (or a later one from another
/// thread). `ncclInProgress` is a status, not a failure, and is reported without a WARN, as are
/// codes NCCL's host side never returns (`ncclTimeout` comes from device-side waits): for those
/// the buffer holds only some older failure's text, which must not be attached.
pub fn sets_last_error(code: ncclResult_t) -> bool {
    use crate::bindings::{ncclRemoteError, ncclUnhandledCudaError};
    (ncclUnhandledCudaError..=ncclRemoteError).contains(&code)
}

/// A failed NCCL call: which call, NCCL's code and text for it, and `ncclGetLastError`'s detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NcclError {
    /// The C name of the call, e.g. `"ncclCommInitRank"`.
    pub call: &'static str,
    /// The `ncclResult_t` it returned.
    pub code: ncclResult_t,
    /// `ncclGetErrorString(code)`.
    pub text: String,
    /// `ncclGetLastError` right after the call, only for codes that record one
    /// ([`sets_last_error`]); empty when the library has none or says nothing. It is NCCL's
    /// last message, which another thread's failure may have replaced.
    pub detail: String,
}

impl fmt::Display for NcclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed: {} (ncclResult_t {})",
            self.call, self.text, self.code
        )?;
        let detail = self.detail.trim();
        if !detail.is_empty() {
            write!(f, "; NCCL's last message: {}", detail.replace('\n', " "))?;
        }
        Ok(())
    }
}

impl std::error::Error for NcclError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_names_what_was_tried_and_how_to_choose_a_library() {
        let e = LoadError::NotFound {
            tried: vec!["libnccl.so.2".into(), "libnccl.so".into()],
        };
        assert_eq!(
            e.to_string(),
            "cannot find libnccl; looked, in order, at:\n  libnccl.so.2\n  libnccl.so\n\
             name one with --nccl-lib PATH or NCCLBENCH_NCCL_LIB=PATH"
        );
    }

    #[test]
    fn a_named_library_and_a_broken_find_say_which_step_gave_them() {
        let named = LoadError::Requested {
            step: crate::Step::Environment,
            path: "/opt/x/libnccl.so.2".into(),
            reason: "no such file".into(),
        };
        assert_eq!(
            named.to_string(),
            "NCCLBENCH_NCCL_LIB /opt/x/libnccl.so.2 cannot be used: no such file"
        );
        let broken = LoadError::Broken {
            step: crate::Step::CudaToolkit,
            error: Box::new(LoadError::Open {
                library: "/usr/local/cuda/lib64/libnccl.so.2".into(),
                reason: "bad ELF".into(),
            }),
        };
        assert_eq!(
            broken.to_string(),
            "cannot load /usr/local/cuda/lib64/libnccl.so.2: bad ELF (found by the library \
             search in /usr/local/cuda/lib64; name another with --nccl-lib PATH or \
             NCCLBENCH_NCCL_LIB=PATH)"
        );
    }

    #[test]
    fn missing_symbol_says_whether_the_library_is_nccl_at_all() {
        let not_nccl = LoadError::MissingSymbol {
            library: "/lib/libc.so.6".into(),
            symbol: "ncclGetVersion",
            version: None,
        };
        assert_eq!(
            not_nccl.to_string(),
            "/lib/libc.so.6 does not export ncclGetVersion: it is not an NCCL library"
        );
        let old = LoadError::MissingSymbol {
            library: "libnccl.so.2".into(),
            symbol: "ncclSend",
            version: Some(2604),
        };
        assert_eq!(
            old.to_string(),
            "libnccl.so.2 (NCCL 2.6.4) does not export ncclSend, which ncclbench needs (NCCL 2.7 or newer)"
        );
    }

    #[test]
    fn only_codes_reported_through_a_warn_carry_the_last_message() {
        use crate::bindings as b;
        for code in [
            b::ncclUnhandledCudaError,
            b::ncclSystemError,
            b::ncclInternalError,
            b::ncclInvalidArgument,
            b::ncclInvalidUsage,
            b::ncclRemoteError,
        ] {
            assert!(sets_last_error(code), "{code}");
        }
        for code in [b::ncclSuccess, b::ncclInProgress, b::ncclTimeout, 42] {
            assert!(!sets_last_error(code), "{code}");
        }
    }

    #[test]
    fn call_errors_are_one_line_with_the_detail() {
        let e = NcclError {
            call: "ncclCommInitRank",
            code: 1,
            text: "unhandled cuda error".into(),
            detail: "Cuda failure 'no driver'\n".into(),
        };
        assert_eq!(
            e.to_string(),
            "ncclCommInitRank failed: unhandled cuda error (ncclResult_t 1); NCCL's last \
             message: Cuda failure 'no driver'"
        );
        let bare = NcclError {
            detail: String::new(),
            ..e
        };
        assert_eq!(
            bare.to_string(),
            "ncclCommInitRank failed: unhandled cuda error (ncclResult_t 1)"
        );
    }
}
