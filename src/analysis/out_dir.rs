//! `--out DIR` of analyze, compare and the production report: the directory is created when
//! missing, each file is written whole under its name, and the paths written are kept in
//! order for the command to list. A failure names the path it happened on.

use crate::core::error::Error;
use std::path::{Path, PathBuf};

/// A report directory being written.
pub(crate) struct OutDir {
    dir: PathBuf,
    written: Vec<PathBuf>,
}

impl OutDir {
    /// Creates `dir` (and its parents) when missing.
    pub(crate) fn create(dir: &Path) -> Result<Self, Error> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        Ok(OutDir {
            dir: dir.to_path_buf(),
            written: Vec::new(),
        })
    }

    /// Writes `bytes` to the file `name` in the directory (replacing one there).
    pub(crate) fn put(&mut self, name: impl AsRef<Path>, bytes: &[u8]) -> Result<(), Error> {
        let path = self.dir.join(name);
        std::fs::write(&path, bytes).map_err(|source| Error::Io {
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
