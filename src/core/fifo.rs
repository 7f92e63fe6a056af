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

/// Opens `path` for reading, first announcing on stderr when it is a FIFO. A character or
/// block device (`/dev/zero`, a terminal, a disk) is refused: no result file or log is one,
/// and most never end.
pub fn open_input(path: &Path) -> io::Result<File> {
    let kind = std::fs::metadata(path).map(|m| m.file_type());
    if kind.as_ref().is_ok_and(|k| k.is_fifo()) {
        eprintln!("{}", waiting_line(path));
    }
    if kind.is_ok_and(|k| k.is_char_device() || k.is_block_device()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a device, not a file (results and logs are read from files, FIFOs or stdin)",
        ));
    }
    File::open(path)
}
