//! Directories given where result files are expected: the files a directory stands for, listed
//! one way for every reader (sorted by path, not recursive), so the analysis readers, compare's
//! header scan and acceptance's baseline reading cannot disagree on order.
//!
//! Which entries count differs by caller, on purpose, and is named by [`Take`]: the readers
//! detect formats by content, so they take every regular file; an acceptance output directory
//! holds each stage's rows twice (text and CSV), so only its CSV files are taken there.

use std::io;
use std::path::{Path, PathBuf};

/// Which entries of a directory are its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take<'a> {
    /// Entries that are regular files themselves: a symbolic link is left out even when it
    /// points at a file.
    Regular,
    /// Entries that are files or links to files, with this extension (no dot: `"csv"`).
    Extension(&'a str),
}

impl Take<'_> {
    /// Whether `entry` is taken.
    fn keeps(self, entry: &std::fs::DirEntry) -> bool {
        match self {
            Take::Regular => entry.file_type().is_ok_and(|t| t.is_file()),
            Take::Extension(ext) => {
                let path = entry.path();
                path.is_file() && path.extension().is_some_and(|x| x == ext)
            }
        }
    }
}

/// The files of `dir` that `take` keeps, sorted by path; entries that cannot be read are
/// left out. An error only when the directory itself cannot be listed.
pub fn dir_files(dir: &Path, take: Take) -> io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| take.keeps(e))
        .map(|e| e.path())
        .collect();
    files.sort();
    Ok(files)
}

/// The files a list of paths stands for, in order: a directory its [`dir_files`], anything
/// else itself. A directory that cannot be listed stands for nothing (its reader reports it).
pub fn expand(paths: &[PathBuf], take: Take) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            out.extend(dir_files(p, take).unwrap_or_default());
        } else {
            out.push(p.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_expand_to_their_sorted_files_of_the_kind_taken() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for name in ["b.csv", "a.txt", "c.csv"] {
            std::fs::write(d.join(name), "x").unwrap();
        }
        std::fs::create_dir(d.join("sub.csv")).unwrap();
        std::fs::write(d.join("sub.csv").join("deep.csv"), "x").unwrap();
        std::os::unix::fs::symlink(d.join("a.txt"), d.join("link.csv")).unwrap();

        let names = |files: Vec<PathBuf>| -> Vec<String> {
            files
                .iter()
                .map(|f| f.strip_prefix(d).unwrap().display().to_string())
                .collect()
        };
        // Regular files only: no subdirectory, no link.
        assert_eq!(
            names(dir_files(d, Take::Regular).unwrap()),
            ["a.txt", "b.csv", "c.csv"]
        );
        // By extension: a link to a file counts, a directory does not.
        assert_eq!(
            names(dir_files(d, Take::Extension("csv")).unwrap()),
            ["b.csv", "c.csv", "link.csv"]
        );

        let given = vec![d.join("z.txt"), d.to_path_buf(), d.join("missing")];
        assert_eq!(
            names(expand(&given, Take::Regular)),
            ["z.txt", "a.txt", "b.csv", "c.csv", "missing"]
        );
        assert!(dir_files(&d.join("missing"), Take::Regular).is_err());
    }
}
