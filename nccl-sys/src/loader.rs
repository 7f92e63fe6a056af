//! Opening libnccl at run time: which file, its entry points, its version, and the few calls
//! that are safe to wrap.
//!
//! A library, once opened, is never unloaded: NCCL starts threads (the bootstrap root of
//! `ncclGetUniqueId`, proxy threads) that outlive the calls that started them, and unloading it
//! would leave them running unmapped code. That also keeps every resolved function pointer valid
//! for the life of the process.

use std::ffi::{c_void, CStr, OsString};
use std::mem::ManuallyDrop;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use libloading::Library;

use crate::api::{lookup, Api, OptionalApi};
use crate::bindings::{self, ncclResult_t, ncclSuccess, ncclUniqueId, NCCL_UNIQUE_ID_BYTES};
use crate::{version, LoadError, NcclError};

/// The environment variable naming the libnccl to load when `--nccl-lib` is not given.
pub const LIB_ENV: &str = "NCCLBENCH_NCCL_LIB";

/// What the default search asks the dynamic loader for, in order.
pub const DEFAULT_SONAMES: [&str; 2] = ["libnccl.so.2", "libnccl.so"];

/// The library the user asked for: the `--nccl-lib` path first, then [`LIB_ENV`]; `None` means
/// the default soname search.
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
}

impl Nccl {
    /// Opens `path` exactly (after resolving symlinks), or with `None` searches the dynamic
    /// loader's path for [`DEFAULT_SONAMES`]. Fails when no library is found, when it is not
    /// an NCCL, or when it lacks an entry point of [`Api`]; never panics.
    pub fn open(path: Option<&Path>) -> Result<Self, LoadError> {
        let (lib, library) = match path {
            Some(path) => open_file(path)?,
            None => open_default()?,
        };
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
        let path =
            loaded_from(get_version as *const c_void).ok_or(LoadError::Unresolved { library })?;
        Ok(Self {
            api,
            optional,
            version,
            path,
        })
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

    /// `ncclGetLastError(NULL)`: NCCL's last error message on this thread; empty when the
    /// library has no such call (before 2.13) or nothing went wrong.
    pub fn last_error(&self) -> String {
        match self.optional.ncclGetLastError {
            // SAFETY: a NULL communicator asks for the global (thread's) last error.
            Some(f) => c_text(unsafe { f(std::ptr::null_mut()) }),
            None => String::new(),
        }
    }

    /// `Ok` for `ncclSuccess`, else the error of `call` with its text and last-error detail.
    pub fn check(&self, call: &'static str, code: ncclResult_t) -> Result<(), NcclError> {
        if code == ncclSuccess {
            return Ok(());
        }
        Err(NcclError {
            call,
            code,
            text: self.error_string(code),
            detail: self.last_error(),
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

/// Number of bytes in an NCCL unique id.
pub const UNIQUE_ID_BYTES: usize = NCCL_UNIQUE_ID_BYTES as usize;

/// An `ncclUniqueId` as bytes, to hand to the other ranks (threads, or processes over MPI).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct UniqueId(pub [u8; UNIQUE_ID_BYTES]);

impl UniqueId {
    /// The id's bytes.
    pub fn as_bytes(&self) -> &[u8; UNIQUE_ID_BYTES] {
        &self.0
    }

    /// The C struct to pass to `ncclCommInitRank`.
    pub fn to_raw(&self) -> ncclUniqueId {
        let mut raw = ncclUniqueId::default();
        for (dst, src) in raw.internal.iter_mut().zip(self.0) {
            *dst = src as std::ffi::c_char;
        }
        raw
    }

    /// The bytes of a C `ncclUniqueId`.
    pub fn from_raw(raw: &ncclUniqueId) -> Self {
        let mut bytes = [0u8; UNIQUE_ID_BYTES];
        for (dst, src) in bytes.iter_mut().zip(raw.internal) {
            *dst = src as u8;
        }
        Self(bytes)
    }
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UniqueId(")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
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

/// Loads exactly the file at `path`, resolved to its canonical path first.
fn open_file(path: &Path) -> Result<(Library, String), LoadError> {
    let shown = path.display().to_string();
    let file = match std::fs::canonicalize(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LoadError::NotFound { tried: vec![shown] })
        }
        Err(e) => {
            return Err(LoadError::Open {
                library: shown,
                reason: e.to_string(),
            })
        }
    };
    let library = file.display().to_string();
    // SAFETY: loading runs the library's initialisers; it is the library the user named.
    match unsafe { Library::new(&file) } {
        Ok(lib) => Ok((lib, library)),
        Err(e) => Err(LoadError::Open {
            library,
            reason: e.to_string(),
        }),
    }
}

/// Asks the dynamic loader for each default soname in turn. A soname it cannot find moves on
/// to the next; one it finds but cannot load (a missing dependency, a wrong architecture) is
/// reported as it is rather than hidden behind "not found".
fn open_default() -> Result<(Library, String), LoadError> {
    for name in DEFAULT_SONAMES {
        // SAFETY: as in `open_file`; this is what the loader finds for NCCL's soname.
        match unsafe { Library::new(name) } {
            Ok(lib) => return Ok((lib, name.to_owned())),
            Err(e) => {
                let reason = e.to_string();
                if !is_not_found(name, &reason) {
                    return Err(LoadError::Open {
                        library: name.to_owned(),
                        reason,
                    });
                }
            }
        }
    }
    Err(LoadError::NotFound {
        tried: DEFAULT_SONAMES.iter().map(|s| (*s).to_owned()).collect(),
    })
}

/// Whether a `dlopen` message says `name` itself was not found (glibc: "`name`: cannot open
/// shared object file: No such file or directory"), not one of its dependencies.
fn is_not_found(name: &str, reason: &str) -> bool {
    reason
        .split_once(": ")
        .is_some_and(|(what, why)| what.ends_with(name) && why.contains("No such file"))
}

/// The canonical path of the loaded object containing `address`, from the dynamic loader.
fn loaded_from(address: *const c_void) -> Option<PathBuf> {
    // SAFETY: Dl_info is plain data; dladdr fills it and only reads `address` as a number.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let found = unsafe { libc::dladdr(address, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is the loader's NUL-terminated name of the object, valid while loaded.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let path = Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()));
    match std::fs::canonicalize(path) {
        Ok(canonical) => Some(canonical),
        Err(_) if path.is_absolute() => Some(path.to_path_buf()),
        Err(_) => None,
    }
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
    fn only_the_library_itself_missing_counts_as_not_found() {
        let own = "libnccl.so.2: cannot open shared object file: No such file or directory";
        assert!(is_not_found("libnccl.so.2", own));
        let dependency =
            "libcudart.so.12: cannot open shared object file: No such file or directory";
        assert!(!is_not_found("libnccl.so.2", dependency));
        let wrong_arch = "libnccl.so.2: wrong ELF class: ELFCLASS32";
        assert!(!is_not_found("libnccl.so.2", wrong_arch));
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
    fn the_default_search_loads_an_nccl_or_names_both_sonames() {
        // Machines with NCCL installed load it; others (CI, this crate's home) must say what
        // they tried rather than fail some other way.
        match Nccl::open(None) {
            Ok(nccl) => assert!(nccl.path().is_absolute()),
            Err(LoadError::NotFound { tried }) => assert_eq!(tried, DEFAULT_SONAMES),
            Err(other) => panic!("expected a library or NotFound, got {other}"),
        }
    }

    #[test]
    fn a_library_without_nccl_symbols_is_named_by_ncclgetversion() {
        // The C library is loaded in every process; find its file through a function of it.
        let libc_file = loaded_from(libc::strlen as *const c_void).expect("libc is loaded");
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

    #[test]
    fn unique_ids_round_trip_through_the_c_struct() {
        let mut bytes = [0u8; UNIQUE_ID_BYTES];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i * 37 % 256) as u8;
        }
        let id = UniqueId(bytes);
        assert_eq!(UniqueId::from_raw(&id.to_raw()), id);
        assert!(format!("{id:?}").starts_with("UniqueId(00254a6f"));
    }
}
