//! The one policy for every result file a run writes (`--csv`, `--json`, accept's table), so
//! no sink decides on its own whether a file may be replaced:
//!
//! * An existing regular file is never overwritten: as nccl-tests does for its JSON, the first
//!   free name of `FILE.0`, `FILE.1`, ... is taken instead (created exclusively, so two runs
//!   cannot pick the same name), and the header says which file was written.
//! * A path that is not a regular file (`/dev/null`, `/dev/stderr`, a FIFO, a terminal) is a
//!   stream: it is opened for writing as it is, gets the document written front to back, and
//!   no sidecar; nothing is ever created next to it.
//! * A directory is refused, for every output alike.
//! * Two outputs naming one file, or an output naming the file the text table goes to (stdout
//!   redirected to it, `/dev/stdout`), are refused before anything is opened: both would be
//!   unusable. `/dev/null` may take any number of outputs.
//!
//! Every error from writing a claimed file names the file ([`named`]).

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// An output opened under the policy.
pub struct Claimed {
    /// The file actually written (a numbered name when the requested one existed).
    pub path: PathBuf,
    /// Open for writing.
    pub file: File,
    /// Not a regular file: write front to back, no sidecar, no rename.
    pub stream: bool,
}

/// `path` with `suffix` appended to its file name.
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = OsString::from(path.as_os_str());
    s.push(suffix);
    PathBuf::from(s)
}

/// `err` with the file's name in front, so a full disk says which output it hit.
pub fn named(path: &Path, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{}: {err}", path.display()))
}

/// The refusal of a directory, as one line.
fn is_a_directory(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::IsADirectory,
        format!("{}: is a directory (name a file to write)", path.display()),
    )
}

/// Opens `requested` for writing under the policy of this module.
pub fn claim(requested: &Path) -> io::Result<Claimed> {
    match std::fs::metadata(requested) {
        Ok(md) if md.is_dir() => Err(is_a_directory(requested)),
        Ok(md) if !md.is_file() => {
            let file = OpenOptions::new()
                .write(true)
                .open(requested)
                .map_err(|e| named(requested, e))?;
            Ok(Claimed {
                path: requested.to_path_buf(),
                file,
                stream: true,
            })
        }
        _ => {
            let (path, file) = claim_free_name(requested).map_err(|e| named(requested, e))?;
            Ok(Claimed {
                path,
                file,
                stream: false,
            })
        }
    }
}

/// Creates the first of `path`, `path.0`, `path.1`, ... that does not exist yet.
fn claim_free_name(path: &Path) -> io::Result<(PathBuf, File)> {
    let mut candidate = path.to_path_buf();
    for n in 0..u32::MAX {
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => return Ok((candidate, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                candidate = with_suffix(path, &format!(".{n}"));
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free output name"))
}

/// What identifies a file: its device and inode when it exists, else its absolute path.
#[derive(PartialEq, Eq)]
enum Identity {
    Inode(u64, u64),
    Path(PathBuf),
}

/// The identity of `path`, and whether it is the null device (which any output may share).
fn identity(path: &Path) -> (Identity, bool) {
    match std::fs::metadata(path) {
        Ok(md) => {
            let null = md.file_type().is_char_device()
                && std::fs::metadata("/dev/null").is_ok_and(|n| n.rdev() == md.rdev());
            (Identity::Inode(md.dev(), md.ino()), null)
        }
        Err(_) => {
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let dir = parent.canonicalize().unwrap_or(parent);
            let name = path.file_name().map(PathBuf::from).unwrap_or_default();
            (Identity::Path(dir.join(name)), false)
        }
    }
}

/// Why a file at `path` could not be made, found before the run: its directory is missing or
/// not a directory, or its name is longer than a file system takes. `None` for a path that
/// exists (a stream, or a regular file whose numbered name goes beside it in a directory
/// that exists) or that looks creatable; a read-only directory is found when it is opened.
fn cannot_create(path: &Path) -> Option<String> {
    if std::fs::symlink_metadata(path).is_ok() {
        return None;
    }
    let name = path.file_name()?;
    // NAME_MAX on Linux file systems; the numbered names (`.0`, ...) need a few bytes more.
    if name.len() > 250 {
        return Some(format!(
            "file name of {} bytes is longer than a file system takes",
            name.len()
        ));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::metadata(dir) {
        Ok(md) if md.is_dir() => None,
        Ok(_) => Some(format!("{} is not a directory", dir.display())),
        Err(e) => Some(format!("directory {}: {e}", dir.display())),
    }
}

/// Refuses (one line, for a usage error) a set of outputs that cannot all be written: a
/// directory, two of them naming one file, or one naming the file of the text table
/// (`text_file`, else standard output). `outputs` are (flag, path) pairs.
pub fn check_outputs(outputs: &[(&str, &Path)], text_file: Option<&Path>) -> Result<(), String> {
    for (flag, path) in outputs {
        if path.is_dir() {
            return Err(format!(
                "{flag} {}: is a directory (name a file to write)",
                path.display()
            ));
        }
    }
    for (flag, path) in outputs {
        if let Some(why) = cannot_create(path) {
            return Err(format!("{flag} {}: {why}", path.display()));
        }
    }
    let ids: Vec<_> = outputs.iter().map(|(_, p)| identity(p)).collect();
    for i in 0..outputs.len() {
        for j in i + 1..outputs.len() {
            if !ids[i].1 && ids[i].0 == ids[j].0 {
                return Err(format!(
                    "{} {} and {} {} name the same file; give each output its own",
                    outputs[i].0,
                    outputs[i].1.display(),
                    outputs[j].0,
                    outputs[j].1.display()
                ));
            }
        }
    }
    let (table, table_name) = match text_file {
        Some(p) => (
            identity(p),
            format!("the text table's file {}", p.display()),
        ),
        None => (
            identity(Path::new("/dev/stdout")),
            "standard output, where the text table goes".to_string(),
        ),
    };
    if table.1 {
        return Ok(());
    }
    for ((flag, path), (id, _)) in outputs.iter().zip(&ids) {
        if *id == table.0 {
            return Err(format!(
                "{flag} {} is {table_name}; write it to another file",
                path.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
