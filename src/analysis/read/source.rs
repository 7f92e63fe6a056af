//! Opening a result file for streaming: its first [`SNIFF`] bytes are read ahead so the format
//! can be decided from them, and the reader then yields those bytes followed by the rest of
//! the file, so nothing is read twice and no file is held in memory whole.
//! A named FIFO is announced on stderr before its open waits for a writer
//! ([`open_input`](crate::core::fifo::open_input)).

use crate::core::error::Error;
use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

/// How much of a file decides its format.
pub(super) const SNIFF: usize = 64 * 1024;

/// A file (or in-memory text) whose head has been read ahead.
pub(super) struct Source<'a> {
    head: Vec<u8>,
    /// The head is the whole file.
    complete: bool,
    rest: Box<dyn Read + 'a>,
}

impl<'a> Source<'a> {
    /// Reads the head of `rest`.
    pub(super) fn new(mut rest: Box<dyn Read + 'a>) -> io::Result<Self> {
        let mut head = Vec::with_capacity(SNIFF);
        (&mut rest).take(SNIFF as u64).read_to_end(&mut head)?;
        // One byte more tells a file of exactly SNIFF bytes from a longer one.
        let mut probe = [0u8; 1];
        let complete = head.len() < SNIFF || rest.read(&mut probe)? == 0;
        if !complete {
            head.push(probe[0]);
        }
        Ok(Source {
            head,
            complete,
            rest,
        })
    }

    /// Opens `path` (announcing a FIFO's wait for a writer) and reads its head.
    pub(super) fn open(path: &Path) -> Result<Self, Error> {
        let cannot = |e: io::Error| Error::usage(format!("{}: cannot read: {e}", path.display()));
        let file = crate::core::fifo::open_input(path).map_err(cannot)?;
        Source::new(Box::new(file)).map_err(cannot)
    }

    /// The head as text (invalid UTF-8 replaced, so binary files are merely unrecognised).
    pub(super) fn head_text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.head)
    }

    /// Whether the head is the whole file.
    pub(super) fn complete(&self) -> bool {
        self.complete
    }

    /// The whole content, head first, buffered.
    pub(super) fn into_reader(self) -> impl BufRead + 'a {
        BufReader::with_capacity(SNIFF, Cursor::new(self.head).chain(self.rest))
    }
}

/// Reads lines of at most `limit` bytes (without the `\n`) into `buf`, replacing a longer line
/// by its first `limit` bytes and consuming the rest, so one line can never take the file's
/// size in memory. `Ok(None)` at the end; `Ok(Some(true))` for a cut line.
pub(super) fn next_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Option<bool>> {
    buf.clear();
    let n = reader
        .by_ref()
        .take(limit as u64 + 1)
        .read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        return Ok(Some(false));
    }
    if buf.len() <= limit {
        return Ok(Some(false)); // the last line, without a line end
    }
    buf.truncate(limit);
    reader.skip_until(b'\n')?;
    Ok(Some(true))
}
