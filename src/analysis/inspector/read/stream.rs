//! A JSON records file read in blocks (plain reads, decompressing gzip), each block parsed in
//! parallel pieces while the next one is read. Memory holds two blocks and the records kept.
//!
//! Every block ends after a newline followed by `{` (or at the end of the file), and so does
//! every piece: few records straddle them, and each ends where one scan of the whole file
//! would resume after garbage. A cut at a line starting with `{` is a record boundary in the
//! plugin's one-record-a-line output and in indented pretty-printing, but not in every file,
//! so each piece is checked: one that does not end exactly where its last object ends was cut
//! inside an object, and the block is scanned again from that piece's start as one piece.
//! What is read is the same as one scan of the whole file, whatever the cuts.

use super::intern::Interner;
use super::json::{build, raw, Parsed};
use super::split::{scan, Found, MAX_RECORD};
use super::tally::Tally;
use memchr::memmem;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::Arc;

/// Bytes read per block.
const BLOCK: usize = 8 << 20;

/// Bytes per piece parsed by one task.
const PIECE: usize = 512 << 10;

/// Parses the JSON records file `file` from `reader` (its whole content, decompressed).
pub(super) fn read_json(file: Arc<PathBuf>, mut reader: impl Read + Send) -> Tally {
    let mut parser = Parser {
        file,
        tally: Tally::default(),
        carry: Vec::new(),
        offset: 0,
    };
    let mut blocks = Blocks::default();
    let mut error = None;
    let mut next = blocks.next(&mut reader);
    while let Some(block) = next {
        match block {
            Ok(block) => {
                // The next block is read (and decompressed) while this one is parsed.
                (next, _) = both(|| blocks.next(&mut reader), || parser.feed(&block));
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    parser.finish(error)
}

/// `a` and `b`, on two threads of the pool this one runs in (on this one only outside a pool:
/// rayon's global pool may not start).
fn both<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    if rayon::current_thread_index().is_some() {
        rayon::join(a, b)
    } else {
        (a(), b())
    }
}

/// A file's bytes in blocks of about [`BLOCK`] bytes, each ending after a newline that is
/// followed by `{` (a block holding none grows until one comes or the file ends).
#[derive(Default)]
struct Blocks {
    /// Read beyond the last block's end.
    tail: Vec<u8>,
    /// The read error that ended the last block, given next.
    error: Option<io::Error>,
    done: bool,
}

impl Blocks {
    /// The next block; after an error, none.
    fn next(&mut self, r: &mut impl Read) -> Option<io::Result<Vec<u8>>> {
        if let Some(e) = self.error.take() {
            return Some(Err(e));
        }
        if self.done {
            return None;
        }
        let mut buf = std::mem::take(&mut self.tail);
        buf.reserve(BLOCK + MAX_RECORD);
        // How much of `buf` is known to hold no newline followed by `{`.
        let mut searched = 0;
        loop {
            let want = BLOCK.saturating_sub(buf.len()).max(64 << 10) as u64;
            match r.by_ref().take(want).read_to_end(&mut buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // What was read before the error is parsed; the error ends the file.
                    self.done = true;
                    if buf.is_empty() {
                        return Some(Err(e));
                    }
                    self.error = Some(e);
                    return Some(Ok(buf));
                }
                Ok(0) => {
                    self.done = true;
                    return (!buf.is_empty()).then_some(Ok(buf));
                }
                Ok(_) if buf.len() < BLOCK => continue,
                Ok(_) => {
                    let Some(k) = memmem::rfind(&buf[searched..], b"\n{") else {
                        // The last byte may be the newline before a `{` still to come.
                        searched = buf.len() - 1;
                        continue;
                    };
                    self.tail = buf.split_off(searched + k + 1);
                    return Some(Ok(buf));
                }
            }
        }
    }
}

/// The blocks of one file parsed so far.
struct Parser {
    file: Arc<PathBuf>,
    tally: Tally,
    /// The bytes of an object still open at the end of the last block.
    carry: Vec<u8>,
    /// File offset of `carry`'s first byte.
    offset: u64,
}

impl Parser {
    /// Parses `block` (after what was carried from the last).
    fn feed(&mut self, block: &[u8]) {
        let joined;
        let data = if self.carry.is_empty() {
            block
        } else {
            let mut d = std::mem::take(&mut self.carry);
            d.extend_from_slice(block);
            joined = d;
            &joined[..]
        };
        let consumed = parse(data, self.offset, &self.file, &mut self.tally);
        self.offset += consumed as u64;
        self.carry = data[consumed..].to_vec();
    }

    /// The tally at the end of the file (or of what could be read of it): what was carried
    /// is scanned as the file's end, where an open object with a record after it is broken.
    fn finish(mut self, error: Option<io::Error>) -> Tally {
        let name = self.file.display().to_string();
        let end = self.offset + self.carry.len() as u64;
        let (tally, consumed) = piece(&self.carry, self.offset, &self.file, true);
        self.tally.merge(tally);
        self.offset += consumed as u64;
        let dropped = self.carry.len() - consumed;
        if let Some(e) = error {
            self.tally
                .note(format!("{name}: read stopped at byte {end}: {e}"));
        }
        if dropped > 0 {
            self.tally.note(format!(
                "{name}: cut mid-record at byte {}: {dropped} bytes dropped",
                self.offset
            ));
        }
        self.tally
    }
}

/// Parses `data`, whose first byte is at `offset` in `file`, in parallel pieces, into `tally`;
/// how many of its bytes were consumed (all but an object still open at its end).
fn parse(data: &[u8], offset: u64, file: &Arc<PathBuf>, tally: &mut Tally) -> usize {
    let starts = cuts(data);
    let spans: Vec<(usize, usize)> = starts
        .iter()
        .copied()
        .zip(starts[1..].iter().copied().chain([data.len()]))
        .collect();
    let mut outs = crate::core::parallel::map(&spans, |&(s, e)| {
        piece(&data[s..e], offset + s as u64, file, false)
    });
    // The first piece cut inside an object: the rest of the block is scanned as one piece.
    let bad = (0..spans.len() - 1).find(|&i| outs[i].1 != spans[i].1 - spans[i].0);
    let from = bad.map_or(spans[spans.len() - 1].0, |i| spans[i].0);
    if let Some(i) = bad {
        outs.truncate(i);
        outs.push(piece(&data[from..], offset + from as u64, file, false));
    }
    let consumed = from + outs.last().map_or(0, |o| o.1);
    for (t, _) in outs {
        tally.merge(t);
    }
    consumed
}

/// Scans and parses one piece whose first byte is at `base` in `file` (`at_end`: the last
/// bytes of the file); what it held and how many of its bytes were consumed.
fn piece(bytes: &[u8], base: u64, file: &Arc<PathBuf>, at_end: bool) -> (Tally, usize) {
    let mut tally = Tally::default();
    let mut sources = Interner::default();
    let consumed = scan(bytes, at_end, raw, |found| match found {
        Found::Object { at, value } => match build(&value, file, &mut sources) {
            Parsed::Record(r, verbose) => tally.record(r, verbose),
            Parsed::OtherKind(kind) => tally.other_kind(kind),
            Parsed::Skip(reason) => tally.skip(base + at as u64, reason),
        },
        Found::Garbage { at, reason } => tally.skip(base + at as u64, reason),
    });
    (tally, consumed)
}

/// Where the pieces of `data` start: about every [`PIECE`] bytes, after a newline followed
/// by `{`.
fn cuts(data: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    let mut at = PIECE;
    while at < data.len() {
        match memmem::find(&data[at..], b"\n{") {
            Some(k) => {
                starts.push(at + k + 1);
                at += k + 1 + PIECE;
            }
            None => break,
        }
    }
    starts
}

/// One scan of a file's whole content `bytes`, in one piece: what reading it in blocks and
/// pieces must give.
#[cfg(test)]
pub(super) fn one_scan(file: Arc<PathBuf>, bytes: &[u8]) -> Tally {
    let parser = Parser {
        file,
        tally: Tally::default(),
        carry: bytes.to_vec(),
        offset: 0,
    };
    parser.finish(None)
}
