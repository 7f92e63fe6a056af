//! A JSON records file read in blocks, each parsed by the [`Consumer`]: streamed (a reader
//! thread fills blocks, decompressing gzip, while the blocks before are parsed) or, for a
//! plain file, mapped (a thread reads the next block's pages in while one is parsed, and the
//! bytes are parsed where they lie). Memory holds a few blocks and the records kept.
//!
//! Every block ends after a newline followed by `{` or at the end of the file: few records
//! straddle blocks, and a block ends where one scan of the whole file would resume after
//! garbage, so what is read does not depend on where blocks end (nor on which way the file
//! was read).

use super::consumer::Consumer;
use super::mapped::Mapped;
use super::split::MAX_RECORD;
use super::tally::Tally;
use crate::analysis::inspector::Arena;
use memchr::memmem;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::{mpsc, Arc};

/// Bytes read per block.
const BLOCK: usize = 8 << 20;

/// Reads `r` in blocks of about [`BLOCK`] bytes, each ending after a newline that is followed
/// by `{` (a block holding none grows until one comes or the file ends): few records straddle
/// blocks, and a block ends where a scan of the whole file would resume after garbage, so the
/// garbage found does not depend on where blocks end. `send` returns false to stop. An error
/// is sent as the last item. Blocks are read into the buffers `spare` hands back where it has
/// one (memory written before costs no page faults).
fn read_blocks(
    r: &mut dyn Read,
    mut send: impl FnMut(io::Result<Vec<u8>>) -> bool,
    mut spare: impl FnMut() -> Option<Vec<u8>>,
) {
    let mut fresh = || {
        let mut b = spare().unwrap_or_default();
        b.clear();
        b.reserve(BLOCK + MAX_RECORD);
        b
    };
    let mut buf: Vec<u8> = fresh();
    // How much of `buf` is known to hold no newline followed by `{`.
    let mut searched = 0;
    loop {
        let want = (BLOCK.saturating_sub(buf.len())).max(64 << 10) as u64;
        match (&mut *r).take(want).read_to_end(&mut buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                if !buf.is_empty() {
                    send(Ok(std::mem::take(&mut buf)));
                }
                send(Err(e));
                return;
            }
            Ok(0) => {
                if !buf.is_empty() {
                    send(Ok(buf));
                }
                return;
            }
            Ok(_) if buf.len() < BLOCK => continue,
            Ok(_) => {
                let Some(k) = memmem::rfind(&buf[searched..], b"\n{") else {
                    // The last byte may be the newline before a `{` still to come.
                    searched = buf.len() - 1;
                    continue;
                };
                let cut = searched + k + 1;
                searched = 0;
                let mut next = fresh();
                next.extend_from_slice(&buf[cut..]);
                buf.truncate(cut);
                if !send(Ok(std::mem::replace(&mut buf, next))) {
                    return;
                }
            }
        }
    }
}

/// Parses the JSON records file `file` from `reader` (its whole content, decompressed).
pub(super) fn read_json<'a>(
    file: Arc<PathBuf>,
    mut reader: Box<dyn Read + Send>,
    arena: &'a Arena,
) -> Tally<'a> {
    let mut consumer = Consumer::new(file, arena);
    let mut error = None;
    let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(1);
    let (back, spent) = mpsc::channel::<Vec<u8>>();
    let source = &mut reader;
    let threaded = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("inspector-read".into())
            .spawn_scoped(scope, move || {
                read_blocks(
                    &mut **source,
                    |b| tx.send(b).is_ok(),
                    || spent.try_recv().ok(),
                )
            });
        if spawned.is_ok() {
            for block in rx.iter() {
                match block {
                    Ok(b) => drop(back.send(consumer.feed(b))),
                    Err(e) => error = Some(e),
                }
            }
        }
        spawned.is_ok()
    });
    if !threaded {
        // No thread to spare: read and parse in turn on this one.
        let spare = std::cell::Cell::new(None);
        read_blocks(
            &mut *reader,
            |b| {
                match b {
                    Ok(b) => spare.set(Some(consumer.feed(b))),
                    Err(e) => error = Some(e),
                }
                true
            },
            || spare.take(),
        );
    }
    consumer.finish(error)
}

/// Parses the JSON records file `file` from its mapping `map`, in the same blocks as a stream
/// would be (so the same memory is reused from block to block), but read in place. `None`
/// when the file shrank while it was read: what was read cannot be trusted, and the caller
/// reads the file again as it now is.
pub(super) fn read_mapped<'a>(
    file: Arc<PathBuf>,
    map: &Mapped,
    arena: &'a Arena,
) -> Option<Tally<'a>> {
    let bytes = map.bytes();
    let mut consumer = Consumer::new(file, arena);
    let (ahead, wanted) = mpsc::sync_channel::<(usize, usize)>(0);
    std::thread::scope(|scope| {
        let reader = std::thread::Builder::new()
            .name("inspector-map".into())
            .spawn_scoped(scope, move || {
                for (from, to) in wanted {
                    map.populate(from, to);
                }
            });
        // `at`: where the next block starts (the first byte not consumed); `end`: where the
        // last ended. An object open at a block's end is read again with the next block.
        let (mut at, mut end) = (0, 0);
        while end < bytes.len() {
            let next = block_end(bytes, end);
            if reader.is_ok() {
                // The block after this one is read while this one is parsed; when the reader
                // is still busy, the parsing faults the pages in itself.
                let _ = ahead.try_send((next, next + BLOCK));
            }
            end = next;
            let from = at;
            at += consumer.parse(&bytes[at..end]);
            consumer.offset = at as u64;
            map.release(from, at);
        }
        consumer.carry = bytes[at..].to_vec();
        drop(ahead);
    });
    if map.shrank() {
        return None;
    }
    Some(consumer.finish(None))
}

/// Where the block of `bytes` that follows `end` ends, as [`read_blocks`] would end it: after
/// the last newline followed by `{` within [`BLOCK`] bytes, else after the first one beyond,
/// else at the end.
fn block_end(bytes: &[u8], end: usize) -> usize {
    let limit = (end + BLOCK).min(bytes.len());
    if limit == bytes.len() {
        return limit;
    }
    if let Some(k) = memmem::rfind(&bytes[end..limit], b"\n{") {
        return end + k + 1;
    }
    memmem::find(&bytes[limit - 1..], b"\n{").map_or(bytes.len(), |k| limit + k)
}
