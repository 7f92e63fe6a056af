//! `--out DIR` of analyze, compare and the production report, under the benchmark outputs'
//! file rules: a report already there is never overwritten, and each file is written whole or
//! not at all.
//!
//! * `DIR` missing or empty: the report goes there (made with its parents when missing).
//! * `DIR` holding anything (an earlier report, a user's file): nothing is written into it;
//!   the first of `DIR.0`, `DIR.1`, ... that is missing or empty is used instead, so an
//!   earlier report is kept whole beside the new one and the files of one report stay
//!   together (their links to each other hold). The command names the directory it wrote.
//! * `DIR` a file: refused (one line, a usage error).
//! * Each file is written into a temporary beside it and linked to its name only once whole
//!   (a link never replaces a file, so a file that appeared meanwhile is kept and the write
//!   refused); a failed write (a full disk) leaves neither a half file nor the temporary.
//!
//! The paths written are kept in order for the command to list. A failure names the path.

use crate::core::error::Error;
use std::io;
use std::path::{Path, PathBuf};

/// A report directory being written.
pub(crate) struct OutDir {
    dir: PathBuf,
    written: Vec<PathBuf>,
}

impl OutDir {
    /// Takes `dir` when it is missing or empty, else the first free numbered directory beside
    /// it (see the module's rules), made with its parents.
    pub(crate) fn create(dir: &Path) -> Result<Self, Error> {
        let mut candidate = dir.to_path_buf();
        for n in 0..u32::MAX {
            match std::fs::metadata(&candidate) {
                Ok(md) if !md.is_dir() => {
                    return Err(Error::usage(format!(
                        "--out {}: is not a directory (name a directory for the report)",
                        candidate.display()
                    )));
                }
                Ok(_) => {
                    let empty = std::fs::read_dir(&candidate)
                        .map_err(|source| Error::Io {
                            path: candidate.clone(),
                            source,
                        })?
                        .next()
                        .is_none();
                    if empty {
                        break;
                    }
                }
                Err(_) => {
                    std::fs::create_dir_all(&candidate).map_err(|source| Error::Io {
                        path: candidate.clone(),
                        source,
                    })?;
                    break;
                }
            }
            candidate = {
                let mut s = dir.as_os_str().to_os_string();
                s.push(format!(".{n}"));
                PathBuf::from(s)
            };
        }
        Ok(OutDir {
            dir: candidate,
            written: Vec::new(),
        })
    }

    /// The directory the report goes to (the one asked for, or a numbered one beside it).
    #[cfg(test)]
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `bytes` to the file `name` in the directory, whole or not at all, never over a
    /// file already there.
    pub(crate) fn put(&mut self, name: impl AsRef<Path>, bytes: &[u8]) -> Result<(), Error> {
        let path = self.dir.join(name);
        put_whole(&path, bytes).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        self.written.push(path);
        Ok(())
    }

    /// The paths written, in the order they were.
    pub(crate) fn written(self) -> Vec<PathBuf> {
        self.written
    }
}

/// `bytes` into a temporary beside `path`, linked to `path` once whole (failing, not
/// replacing, when `path` exists); the temporary is removed either way.
fn put_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let linked = std::fs::write(&tmp, bytes).and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    linked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_holding_anything_is_kept_and_a_numbered_one_used() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("rep");
        let mut a = OutDir::create(&dir).unwrap();
        a.put("report.md", b"first\n").unwrap();
        assert_eq!(a.dir(), dir);
        let mut b = OutDir::create(&dir).unwrap();
        assert_eq!(b.dir(), t.path().join("rep.0"));
        b.put("report.md", b"second\n").unwrap();
        assert_eq!(std::fs::read(dir.join("report.md")).unwrap(), b"first\n");
        let c = OutDir::create(&dir).unwrap();
        assert_eq!(c.dir(), t.path().join("rep.1"));
        // An empty numbered directory is taken as it is.
        let d = OutDir::create(&dir).unwrap();
        assert_eq!(d.dir(), t.path().join("rep.1"));
    }

    #[test]
    fn a_file_is_never_replaced_and_no_temporary_is_left() {
        let t = tempfile::tempdir().unwrap();
        let mut out = OutDir::create(t.path()).unwrap();
        std::fs::write(t.path().join("x.md"), b"mine").unwrap();
        assert!(out.put("x.md", b"report").is_err());
        assert_eq!(std::fs::read(t.path().join("x.md")).unwrap(), b"mine");
        let names: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn an_output_path_that_is_a_file_is_a_usage_error() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("f");
        std::fs::write(&f, b"mine").unwrap();
        assert!(matches!(OutDir::create(&f), Err(Error::Usage(_))));
    }
}
