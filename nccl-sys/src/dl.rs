//! The dynamic loader, narrowly: open one file or one soname, tell "not there" apart from
//! "there but unusable", and ask which file an address was loaded from.

use std::ffi::{c_void, CStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use libloading::Library;

use crate::LoadError;

/// Why a candidate gave no library.
#[derive(Debug)]
pub(crate) enum Miss {
    /// Nothing there (no such file, or the loader knows no such soname).
    Absent,
    /// Something there that cannot be used; the search must stop and say so.
    Broken(LoadError),
}

/// Loads exactly the file at `path`, resolved to its canonical path first; returns the handle
/// and the name errors use (the canonical path).
pub(crate) fn open_file(path: &Path) -> Result<(Library, String), Miss> {
    let file = match std::fs::canonicalize(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Miss::Absent),
        Err(e) => {
            return Err(Miss::Broken(LoadError::Open {
                library: path.display().to_string(),
                reason: e.to_string(),
            }))
        }
    };
    let library = file.display().to_string();
    // SAFETY: loading runs the library's initialisers; it is the library asked for.
    match unsafe { Library::new(&file) } {
        Ok(lib) => Ok((lib, library)),
        Err(e) => Err(Miss::Broken(LoadError::Open {
            library,
            reason: e.to_string(),
        })),
    }
}

/// Asks the dynamic loader for `soname`. One it cannot find is [`Miss::Absent`]; one it finds
/// but cannot load (a missing dependency, a wrong architecture) is reported as it is rather
/// than hidden behind "not found".
pub(crate) fn open_soname(soname: &str) -> Result<(Library, String), Miss> {
    // SAFETY: as in `open_file`; this is what the loader finds for NCCL's soname.
    match unsafe { Library::new(soname) } {
        Ok(lib) => Ok((lib, soname.to_owned())),
        Err(e) => {
            let reason = e.to_string();
            if is_not_found(soname, &reason) {
                Err(Miss::Absent)
            } else {
                Err(Miss::Broken(LoadError::Open {
                    library: soname.to_owned(),
                    reason,
                }))
            }
        }
    }
}

/// Whether a `dlopen` message says `name` itself was not found (glibc: "`name`: cannot open
/// shared object file: No such file or directory"), not one of its dependencies.
pub(crate) fn is_not_found(name: &str, reason: &str) -> bool {
    reason
        .split_once(": ")
        .is_some_and(|(what, why)| what.ends_with(name) && why.contains("No such file"))
}

/// The canonical path of the loaded object containing `address`, from the dynamic loader.
pub(crate) fn loaded_from(address: *const c_void) -> Option<PathBuf> {
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
    fn a_missing_file_is_absent_and_an_existing_non_library_is_broken() {
        assert!(matches!(
            open_file(Path::new("/nonexistent/dir/libnccl.so.2")),
            Err(Miss::Absent)
        ));
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("libnccl.so.2");
        std::fs::write(&junk, b"not an ELF file").unwrap();
        match open_file(&junk) {
            Err(Miss::Broken(LoadError::Open { library, .. })) => {
                assert_eq!(Path::new(&library), std::fs::canonicalize(&junk).unwrap());
            }
            other => panic!("expected a broken candidate, got {other:?}"),
        }
    }
}
