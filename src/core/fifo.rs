//! Opening an input that may be a named FIFO. Opening a FIFO for reading blocks until some
//! process opens it for writing; every reader (analyze, compare, logs, accept's profile
//! maker) says so on stderr first, so a forgotten writer is a visible wait, not a silent hang.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// The stderr line for a FIFO about to be waited on.
pub fn waiting_line(path: &Path) -> String {
    format!(
        "ncclbench: {} is a FIFO: waiting for a writer to open it",
        path.display()
    )
}

/// Opens `path` for reading, first announcing on stderr when it is a FIFO.
pub fn open_input(path: &Path) -> io::Result<File> {
    if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
        eprintln!("{}", waiting_line(path));
    }
    File::open(path)
}
