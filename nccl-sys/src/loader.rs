//! Opening libnccl at run time: which file ([`Nccl::find`] runs the library search of
//! [`crate::search`]), its entry points, its version, and the few calls that are safe to wrap.
//!
//! A library, once opened, is never unloaded: NCCL starts threads (the bootstrap root of
//! `ncclGetUniqueId`, proxy threads) that outlive the calls that started them, and unloading it
//! would leave them running unmapped code. That also keeps every resolved function pointer valid
//! for the life of the process.

use std::ffi::{c_void, CStr, OsString};
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};

use libloading::Library;

use crate::api::{lookup, Api, OptionalApi};
use crate::bindings::{self, ncclResult_t, ncclSuccess, ncclUniqueId};
use crate::dl::{self, Miss};
use crate::search::{self, python, Found, Probe, Target, LIB_ENV};
use crate::{version, LoadError, NcclError, UniqueId};

/// The library the user asked for: the `--nccl-lib` path first, then [`LIB_ENV`]; `None` means
/// the default search.
pub fn resolve_request(cli: Option<&Path>) -> Option<PathBuf> {
    resolve_request_from(cli, std::env::var_os(LIB_ENV))
}

/// [`resolve_request`] with the environment variable's value given (an empty value is unset).
pub fn resolve_request_from(cli: Option<&Path>, env: Option<OsString>) -> Option<PathBuf> {
    cli.map(Path::to_path_buf)
        .or_else(|| env.filter(|v| !v.is_empty()).map(PathBuf::from))
}

/// A loaded libnccl: its required and optional entry points, its version, and its file.
#[derive(Clone, Debug)]
pub struct Nccl {
    api: Api,
    optional: OptionalApi,
    version: i32,
    path: PathBuf,
    found: Option<Found>,
}

/// This machine, for the search: the process environment, the real `python3`, `dlopen`.
struct System;

impl Probe for System {
    type Lib = Nccl;

    fn var(&self, name: &str) -> Option<OsString> {
        std::env::var_os(name)
    }

    fn site_dirs(&self) -> Result<Vec<PathBuf>, String> {
        python::site_dirs()
    }

    fn load(&self, target: &Target) -> Result<Nccl, Miss> {
        let (lib, library) = match target {
            Target::File(path) => dl::open_file(path)?,
            Target::Soname(name) => dl::open_soname(name)?,
        };
        Nccl::from_library(lib, library).map_err(Miss::Broken)
    }
}

impl Nccl {
    /// Runs the whole library search (`cli` is `--nccl-lib`; see [`crate::search`]) and opens
    /// what it finds; [`Nccl::found`] then says how. Fails naming a requested library that
    /// cannot be used, a found one that cannot, or every place looked in; never panics.
    pub fn find(cli: Option<&Path>) -> Result<Self, LoadError> {
        let (mut nccl, found) = search::search(&System, cli)?;
        nccl.found = Some(found);
        Ok(nccl)
    }

    /// Opens `path` exactly (after resolving symlinks), or with `None` runs the search after
    /// its explicit steps (the dynamic loader, `$CONDA_PREFIX/lib`, the CUDA toolkit, python's
    /// packages). Fails when no library is found, when it is not an NCCL, or when it lacks an
    /// entry point of [`Api`]; never panics.
    pub fn open(path: Option<&Path>) -> Result<Self, LoadError> {
        let Some(path) = path else {
            let (mut nccl, found) = search::search_default(&System)?;
            nccl.found = Some(found);
            return Ok(nccl);
        };
        match System.load(&Target::File(path.to_path_buf())) {
            Ok(nccl) => Ok(nccl),
            Err(Miss::Absent) => Err(LoadError::NotFound {
                tried: vec![path.display().to_string()],
            }),
            Err(Miss::Broken(e)) => Err(e),
        }
    }

    /// Resolves an opened library's entry points and reads its version.
    fn from_library(lib: Library, library: String) -> Result<Self, LoadError> {
        // Never unloaded (see the module documentation), whichever way this function returns.
        let lib = ManuallyDrop::new(lib);
        let get_version =
            lookup(&lib, "ncclGetVersion").ok_or_else(|| LoadError::MissingSymbol {
                library: library.clone(),
                symbol: "ncclGetVersion",
                version: None,
            })?;
        // SAFETY: a non-NULL address of the library's `ncclGetVersion`.
        let get_version = unsafe {
            std::mem::transmute::<*mut c_void, bindings::PFN_ncclGetVersion>(get_version)
        };
        let mut version = 0;
        // SAFETY: ncclGetVersion writes one int and touches no other state.
        let code = unsafe { get_version(&mut version) };
        if code != ncclSuccess {
            return Err(LoadError::Version { library, code });
        }
        let api = Api::resolve(&lib, &library, version)?;
        let optional = OptionalApi::resolve(&lib);
        let path = dl::loaded_from(get_version as *const c_void)
            .ok_or(LoadError::Unresolved { library })?;
        Ok(Self {
            api,
            optional,
            version,
            path,
            found: None,
        })
    }

    /// How the search found this library; `None` when it was opened by exact path
    /// ([`Nccl::open`] with `Some`).
    pub fn found(&self) -> Option<&Found> {
        self.found.as_ref()
    }

    /// The required entry points, for raw calls (`unsafe`, under `nccl.h`'s rules).
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// The entry points of newer releases; each is also a method (`nccl.alltoall()`).
    pub fn optional(&self) -> &OptionalApi {
        &self.optional
    }

    /// `ncclGetVersion` of the loaded library, e.g. 23203.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// The loaded library's version as `major.minor.patch`, e.g. `"2.32.3"`.
    pub fn version_string(&self) -> String {
        version::version_string(self.version)
    }

    /// The absolute, symlink-free path of the file the dynamic loader actually loaded.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this library accepts the `ncclDataType_t` code `dtype`.
    pub fn supports_dtype(&self, dtype: i32) -> bool {
        version::supports_dtype(self.version, dtype)
    }

    /// Whether this library can create PreMulSum operators (version and entry point).
    pub fn supports_premulsum(&self) -> bool {
        version::supports_premulsum(self.version)
            && self.optional.ncclRedOpCreatePreMulSum.is_some()
    }

    /// `ncclGetErrorString(code)`, for any code (NCCL answers unknown ones with a generic text).
    pub fn error_string(&self, code: ncclResult_t) -> String {
        // SAFETY: ncclGetErrorString maps any value to a static string.
        let text = unsafe { (self.api.ncclGetErrorString)(code) };
        c_text(text)
    }

    /// `ncclGetLastError(NULL)`: NCCL's last recorded error message, process-wide and never
    /// cleared, so it may belong to an earlier failure; empty when the library has no such
    /// call (before 2.13) or nothing went wrong yet.
    pub fn last_error(&self) -> String {
        match self.optional.ncclGetLastError {
            // SAFETY: a NULL communicator asks for the global last error.
            Some(f) => c_text(unsafe { f(std::ptr::null_mut()) }),
            None => String::new(),
        }
    }

    /// `Ok` for `ncclSuccess`, else the error of `call` with its text, and NCCL's last message
    /// only where `code` is one NCCL records a message for ([`crate::sets_last_error`]).
    pub fn check(&self, call: &'static str, code: ncclResult_t) -> Result<(), NcclError> {
        if code == ncclSuccess {
            return Ok(());
        }
        let detail = match crate::sets_last_error(code) {
            true => self.last_error(),
            false => String::new(),
        };
        Err(NcclError {
            call,
            code,
            text: self.error_string(code),
            detail,
        })
    }

    /// `ncclGetUniqueId`: a new communicator id. NCCL also starts the bootstrap root thread
    /// that ranks initialising with this id contact.
    pub fn get_unique_id(&self) -> Result<UniqueId, NcclError> {
        let mut raw = ncclUniqueId::default();
        // SAFETY: writes one ncclUniqueId.
        let code = unsafe { (self.api.ncclGetUniqueId)(&mut raw) };
        self.check("ncclGetUniqueId", code)?;
        Ok(UniqueId::from_raw(&raw))
    }
}

/// A C string from NCCL, or `""` for NULL.
fn c_text(ptr: *const std::ffi::c_char) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: NCCL returns NUL-terminated strings that stay valid (static or thread-local).
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_wins_over_the_environment() {
        let cli = Path::new("/opt/a/libnccl.so.2");
        let env = Some(OsString::from("/opt/b/libnccl.so.2"));
        assert_eq!(
            resolve_request_from(Some(cli), env.clone()),
            Some(cli.to_path_buf())
        );
        assert_eq!(
            resolve_request_from(None, env),
            Some(PathBuf::from("/opt/b/libnccl.so.2"))
        );
        assert_eq!(resolve_request_from(None, Some(OsString::new())), None);
        assert_eq!(resolve_request_from(None, None), None);
    }

    #[test]
    fn a_missing_file_is_not_found_naming_the_path() {
        let path = Path::new("/nonexistent/dir/libnccl.so.2");
        match Nccl::open(Some(path)) {
            Err(LoadError::NotFound { tried }) => {
                assert_eq!(tried, vec!["/nonexistent/dir/libnccl.so.2".to_owned()]);
            }
            other => panic!("expected NotFound, got {other:?}"),
        }
    }

    #[test]
    fn the_default_search_loads_an_nccl_or_lists_where_it_looked() {
        // Machines with NCCL installed load it; others (CI, this crate's home) must say what
        // they tried rather than fail some other way.
        match Nccl::open(None) {
            Ok(nccl) => {
                assert!(nccl.path().is_absolute());
                assert!(nccl.found().is_some());
            }
            Err(LoadError::NotFound { tried }) => {
                assert!(tried[0].contains("libnccl.so.2 or libnccl.so"), "{tried:?}");
                assert!(tried.iter().any(|t| t.contains("/usr/local/cuda/lib64")));
            }
            Err(other) => panic!("expected a library or NotFound, got {other}"),
        }
    }

    #[test]
    fn a_library_without_nccl_symbols_is_named_by_ncclgetversion() {
        // The C library is loaded in every process; find its file through a function of it.
        let libc_file = dl::loaded_from(libc::strlen as *const c_void).expect("libc is loaded");
        match Nccl::open(Some(&libc_file)) {
            Err(LoadError::MissingSymbol {
                library,
                symbol,
                version,
            }) => {
                assert_eq!(symbol, "ncclGetVersion");
                assert_eq!(version, None);
                assert_eq!(Path::new(&library), libc_file);
            }
            other => panic!("expected MissingSymbol, got {other:?}"),
        }
    }

    #[test]
    fn a_loaded_library_can_be_shared_by_rank_threads() {
        fn shareable<T: Send + Sync + 'static>() {}
        shareable::<Nccl>();
        shareable::<UniqueId>();
    }
}
