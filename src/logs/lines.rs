//! Physical lines of an input, a buffer at a time, each with where `NCCL ` occurs in it.
//!
//! A large log is almost all NCCL lines, and a captured job's output may be mostly other
//! programs' lines: both are cheapest read with one vector search over each whole buffer
//! rather than with searches started afresh on every line, whose setup costs about as much as
//! the scan of a short line. The search stops at newlines and at each `L`: the `NCCL ` every
//! prefix marker and every `NCCL version` line holds is found from its `L`, the rarest of its
//! bytes in these logs (`N` and `C` come twice in every prefix, `NCCL INFO`; `L` once). A line
//! with no `NCCL ` in it holds nothing the parser reads, so the parser passes it over
//! untouched.

use super::MAX_LINE;
use memchr::memmem;
use std::io::{self, BufRead};

/// How a physical line ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnd {
    /// With `\n`.
    Newline,
    /// With `\n`, but longer than [`MAX_LINE`] and cut.
    Cut,
    /// At the end of input without `\n` (possibly cut as well).
    Missing {
        /// Whether it was also cut.
        overlong: bool,
    },
}

/// The text every line the parser reads holds: the ` NCCL ` of each prefix, and bare
/// `NCCL version` lines.
pub(super) static NCCL: std::sync::LazyLock<memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memmem::Finder::new(b"NCCL "));

/// Offsets of `NCCL ` in `line`, into `hits` (cleared first).
pub(super) fn hits_in(line: &[u8], hits: &mut Vec<usize>) {
    hits.clear();
    hits.extend(NCCL.find_iter(line));
}

/// Calls `f` with each physical line of `reader` (without `\n`) and whether it was the last
/// one and lacked its newline. Lines over [`MAX_LINE`] are cut, and `f` is told so.
pub fn for_each_line<R: BufRead>(reader: R, mut f: impl FnMut(&[u8], LineEnd)) -> io::Result<()> {
    for_each_line_hits(reader, |line, end, _| f(line, end))
}

/// [`for_each_line`], also giving the offsets of `NCCL ` in each line (ascending; a match
/// cannot span lines, `NCCL ` holds no newline).
pub(super) fn for_each_line_hits<R: BufRead>(
    mut reader: R,
    mut f: impl FnMut(&[u8], LineEnd, &[usize]),
) -> io::Result<()> {
    let mut carry: Vec<u8> = Vec::new();
    let mut overlong = false;
    let mut hits: Vec<usize> = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            if !carry.is_empty() || overlong {
                hits_in(&carry, &mut hits);
                f(&carry, LineEnd::Missing { overlong }, &hits);
            }
            return Ok(());
        }
        let mut start = 0;
        if let Some(last) = memchr::memrchr(b'\n', buf) {
            if !carry.is_empty() || overlong {
                // The line begun in an earlier buffer ends here.
                let nl = memchr::memchr(b'\n', buf).unwrap_or(last);
                let room = MAX_LINE.saturating_sub(carry.len());
                carry.extend_from_slice(&buf[..nl.min(room)]);
                let cut = overlong || nl > room;
                hits_in(&carry, &mut hits);
                let end = if cut { LineEnd::Cut } else { LineEnd::Newline };
                f(&carry, end, &hits);
                carry.clear();
                overlong = false;
                start = nl + 1;
            }
            // Every line of `whole` ends in this buffer, so none is over MAX_LINE (the
            // buffer is no larger).
            let whole = &buf[start..=last];
            let mut from = 0;
            hits.clear();
            for at in memchr::memchr2_iter(b'\n', b'L', whole) {
                if whole[at] == b'\n' {
                    f(&whole[from..at], LineEnd::Newline, &hits);
                    hits.clear();
                    from = at + 1;
                } else if at >= from + 3 && whole[at - 3..].starts_with(b"NCCL ") {
                    hits.push(at - 3 - from);
                }
            }
            start = last + 1;
        }
        let rest = &buf[start..];
        let room = MAX_LINE.saturating_sub(carry.len());
        carry.extend_from_slice(&rest[..rest.len().min(room)]);
        overlong |= rest.len() > room;
        let n = buf.len();
        reader.consume(n);
    }
}
