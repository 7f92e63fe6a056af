//! Reading inputs that may never end or never hold what is looked for (`/dev/zero`, a FIFO
//! fed from `/dev/urandom`, a binary file named by mistake): a [`Budget`] stops a reader once
//! it has taken a set amount of input with no record in it, saying how much it read and why it
//! stopped, so every reader returns on any input with bounded memory. [`quote`] gives the
//! short prefix of an input token that error messages may echo.

use std::cell::Cell;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

/// Input a reader of results or logs takes after its last record (or from its start) before
/// it gives up: no result file or NCCL log has this much between two records.
pub const NO_RECORD_LIMIT: u64 = 1 << 30;

/// The most of an input token an error message quotes.
pub const QUOTE_LIMIT: usize = 40;

/// At most [`QUOTE_LIMIT`] characters of `token` in backquotes (control characters escaped),
/// with its length when longer.
pub fn quote(token: &str) -> String {
    match token.char_indices().nth(QUOTE_LIMIT) {
        None => format!("`{}`", token.escape_debug()),
        Some((cut, _)) => format!(
            "`{}`... ({} bytes)",
            token[..cut].escape_debug(),
            token.len()
        ),
    }
}

/// Where a [`Budget`]'s reader stands: bytes taken in all, and at the last record.
#[derive(Debug, Default)]
struct Taken {
    total: Cell<u64>,
    mark: Cell<u64>,
}

/// Tells a [`Budget`] that a record was found, from inside the reader's consumer.
#[derive(Debug, Clone)]
pub struct Mark(Rc<Taken>);

impl Mark {
    /// A record ends here: the budget starts again.
    pub fn record(&self) {
        self.0.mark.set(self.0.total.get());
    }
}

/// A reader that fails (`InvalidData`, the message saying how much was read without a record)
/// once `limit` bytes have been taken since the last [`Mark::record`].
#[derive(Debug)]
pub struct Budget<R> {
    inner: R,
    limit: u64,
    record: &'static str,
    taken: Rc<Taken>,
}

impl<R> Budget<R> {
    /// `inner` with this limit; `record` names what counts as one in the message
    /// (`"result row"`, `"NCCL line"`).
    pub fn new(inner: R, limit: u64, record: &'static str) -> (Self, Mark) {
        let taken = Rc::new(Taken::default());
        let mark = Mark(taken.clone());
        (
            Budget {
                inner,
                limit,
                record,
                taken,
            },
            mark,
        )
    }

    fn check(&self) -> io::Result<()> {
        let since = self.taken.total.get() - self.taken.mark.get();
        if since < self.limit {
            return Ok(());
        }
        let mib = |b: u64| b >> 20;
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "stopped after reading {} MiB with no {} in the last {} MiB (the most read \
                 without one)",
                mib(self.taken.total.get()),
                self.record,
                mib(since)
            ),
        ))
    }

    fn count(&self, n: usize) {
        self.taken.total.set(self.taken.total.get() + n as u64);
    }
}

impl<R: Read> Read for Budget<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.check()?;
        let since = self.taken.total.get() - self.taken.mark.get();
        let room = usize::try_from(self.limit - since).unwrap_or(usize::MAX);
        let want = buf.len().min(room);
        let n = self.inner.read(&mut buf[..want])?;
        self.count(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Budget<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.check()?;
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.count(n);
        self.inner.consume(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_input_without_records_stops_with_how_much_was_read() {
        let (mut r, _mark) = Budget::new(io::BufReader::new(io::repeat(0)), 3 << 20, "row");
        let err = io::copy(&mut r, &mut io::sink()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            err.to_string(),
            "stopped after reading 3 MiB with no row in the last 3 MiB (the most read without one)"
        );
    }

    #[test]
    fn each_record_starts_the_budget_again() {
        let (mut r, mark) = Budget::new(io::BufReader::new(io::repeat(b'x')), 100, "row");
        let mut buf = [0u8; 60];
        for _ in 0..10 {
            r.read_exact(&mut buf).unwrap();
            mark.record();
        }
        r.read_exact(&mut buf).unwrap();
        assert!(r.read_exact(&mut buf).is_err());
    }

    #[test]
    fn quotes_are_short() {
        assert_eq!(quote("abc"), "`abc`");
        assert_eq!(quote("a\0"), "`a\\0`");
        let long = "y".repeat(1000);
        assert_eq!(
            quote(&long),
            format!("`{}`... (1000 bytes)", "y".repeat(40))
        );
    }
}
