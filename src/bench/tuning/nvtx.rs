//! NVTX ranges (`--nvtx`) without a build-time dependency: libnvToolsExt is opened at run time
//! and `nvtxRangePushA` / `nvtxRangePop` are looked up; when the library (or a symbol) is
//! absent every call is a silent no-op, so `--nvtx` never changes whether a run works.
//! Under Nsight Systems the ranges name each size, placement and phase of the run.

use libloading::Library;
use std::ffi::{c_char, c_int, CString};

/// Library names tried in order when `NCCLBENCH_NVTX_LIB` is not set.
pub const CANDIDATES: [&str; 2] = ["libnvToolsExt.so.1", "libnvToolsExt.so"];

type PushFn = unsafe extern "C" fn(*const c_char) -> c_int;
type PopFn = unsafe extern "C" fn() -> c_int;

/// The NVTX entry points, or nothing.
pub struct Nvtx {
    fns: Option<(PushFn, PopFn)>,
    /// Keeps the library loaded while the function pointers live.
    _lib: Option<Library>,
}

impl Nvtx {
    /// Opens `NCCLBENCH_NVTX_LIB` if set, else the first of [`CANDIDATES`] that loads.
    pub fn open() -> Nvtx {
        match std::env::var_os("NCCLBENCH_NVTX_LIB") {
            Some(p) => Nvtx::open_from(&[p]),
            None => Nvtx::open_from(&CANDIDATES.map(std::ffi::OsString::from)),
        }
    }

    /// Opens the first of `names` that loads and has both symbols.
    pub fn open_from(names: &[std::ffi::OsString]) -> Nvtx {
        for name in names {
            // SAFETY: loading runs the library's initialisers; libnvToolsExt's only set up
            // its injection hook (it reads NVTX_INJECTION64_PATH), as under any CUDA tool.
            let Ok(lib) = (unsafe { Library::new(name) }) else {
                continue;
            };
            // SAFETY: the types are NVTX's C signatures for these two symbols.
            let fns = unsafe {
                let push = lib.get::<PushFn>(b"nvtxRangePushA\0").map(|s| *s);
                let pop = lib.get::<PopFn>(b"nvtxRangePop\0").map(|s| *s);
                push.ok().zip(pop.ok())
            };
            if fns.is_some() {
                return Nvtx {
                    fns,
                    _lib: Some(lib),
                };
            }
        }
        Nvtx::absent()
    }

    /// Nothing loaded: every call does nothing.
    pub fn absent() -> Nvtx {
        Nvtx {
            fns: None,
            _lib: None,
        }
    }

    /// Whether a library was loaded.
    pub fn loaded(&self) -> bool {
        self.fns.is_some()
    }

    /// Opens a range named `name` (an interior NUL cuts the name there).
    pub fn push(&self, name: &str) {
        if let Some((push, _)) = self.fns {
            let cut = name.split('\0').next().unwrap_or_default();
            let c = CString::new(cut).unwrap_or_default();
            // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
            unsafe { push(c.as_ptr()) };
        }
    }

    /// Closes the innermost range.
    pub fn pop(&self) {
        if let Some((_, pop)) = self.fns {
            // SAFETY: nvtxRangePop takes no arguments; an unbalanced pop returns an error code.
            unsafe { pop() };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absent_library_makes_every_call_a_silent_no_op() {
        let n = Nvtx::open_from(&["/nonexistent/libnvToolsExt.so.1".into()]);
        assert!(!n.loaded());
        n.push("all_reduce float sum 1024 B out_of_place timed");
        n.push("with\0nul");
        n.pop();
        n.pop();
        // A library without the symbols counts as absent too.
        let libc = Nvtx::open_from(&["libc.so.6".into()]);
        assert!(!libc.loaded());
    }
}
