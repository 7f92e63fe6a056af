//! Errors of loading libnccl and of NCCL calls, each a one-line message that says what to do.

use std::fmt;

use crate::bindings::ncclResult_t;
use crate::version::version_string;

/// Why [`crate::Nccl::open`] could not provide a usable NCCL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// No library file at the requested path, or none of the default sonames on the search path.
    #[error(
        "cannot find libnccl (tried {}); point ncclbench at one with --nccl-lib PATH or {}=PATH",
        .tried.join(", "),
        crate::LIB_ENV
    )]
    NotFound {
        /// What was tried, in order: the explicit path, or each soname.
        tried: Vec<String>,
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

/// A failed NCCL call: which call, NCCL's code and text for it, and `ncclGetLastError`'s detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NcclError {
    /// The C name of the call, e.g. `"ncclCommInitRank"`.
    pub call: &'static str,
    /// The `ncclResult_t` it returned.
    pub code: ncclResult_t,
    /// `ncclGetErrorString(code)`.
    pub text: String,
    /// `ncclGetLastError` right after the call; empty when the library has none or says nothing.
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
            write!(f, ": {}", detail.replace('\n', " "))?;
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
        let msg = e.to_string();
        assert_eq!(
            msg,
            "cannot find libnccl (tried libnccl.so.2, libnccl.so); point ncclbench at one with \
             --nccl-lib PATH or NCCLBENCH_NCCL_LIB=PATH"
        );
        assert!(!msg.contains('\n'));
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
    fn call_errors_are_one_line_with_the_detail() {
        let e = NcclError {
            call: "ncclCommInitRank",
            code: 1,
            text: "unhandled cuda error".into(),
            detail: "Cuda failure 'no driver'\n".into(),
        };
        assert_eq!(
            e.to_string(),
            "ncclCommInitRank failed: unhandled cuda error (ncclResult_t 1): Cuda failure 'no driver'"
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
