//! A JSON records file streamed in blocks: a reader thread fills blocks (decompressing gzip)
//! while the blocks before are parsed, each block cut into pieces at lines that start with
//! `{` and the pieces parsed in parallel. Memory holds a few blocks and the records kept.
//!
//! A cut at a line starting with `{` is a record boundary in the plugin's one-record-a-line
//! output and in indented pretty-printing, but not necessarily in every file. So each piece
//! is checked: a piece that does not end exactly where its last object ends was cut inside an
//! object, and the block is scanned again from that piece's start as one piece. The result is
//! the same as one sequential scan, whatever the cuts.

use super::fast::Shapes;
use super::pieces::{append, cuts, piece};
use super::split::MAX_RECORD;
use super::tally::Tally;
use crate::analysis::inspector::record::Record;
use crate::analysis::inspector::Arena;
use memchr::memmem;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::{mpsc, Mutex};

/// Bytes read per block.
const BLOCK: usize = 8 << 20;

/// Reads `r` in blocks of about [`BLOCK`] bytes, each ending after a newline that is followed
/// by `{` where the block holds one, so that few records straddle blocks; `send` returns
/// false to stop. An error is sent as the last item. Blocks are read into the buffers `spare`
/// hands back where it has one (memory written before costs no page faults).
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
                let mut next = fresh();
                if let Some(k) = memmem::rfind(&buf, b"\n{") {
                    next.extend_from_slice(&buf[k + 1..]);
                    buf.truncate(k + 1);
                }
                if !send(Ok(std::mem::replace(&mut buf, next))) {
                    return;
                }
            }
        }
    }
}

/// The blocks of one file parsed so far.
struct Consumer<'a> {
    file: Arc<PathBuf>,
    arena: &'a Arena,
    tally: Tally<'a>,
    /// The bytes of an object still open at the end of the last block.
    carry: Vec<u8>,
    /// File offset of `carry`'s first byte.
    offset: u64,
    /// Empty record vectors for the next block's pieces: memory the allocator would otherwise
    /// hand back to the system between blocks, each piece's records then faulting in anew.
    spare: Vec<Vec<Record<'a>>>,
    /// The shapes the next block's pieces start from (those learned by the last block's
    /// piece that learned most, where small enough to copy).
    seed: Option<Shapes<'a>>,
}

impl<'a> Consumer<'a> {
    /// Parses `block` (after what was carried from the last); returns the block's buffer for
    /// reuse.
    fn feed(&mut self, block: Vec<u8>) -> Vec<u8> {
        let data = if self.carry.is_empty() {
            block
        } else {
            let mut d = std::mem::take(&mut self.carry);
            d.extend_from_slice(&block);
            d
        };
        let starts = cuts(&data);
        let ends: Vec<usize> = starts[1..].iter().copied().chain([data.len()]).collect();
        let spans: Vec<(usize, usize, Mutex<Vec<Record<'a>>>)> = starts
            .into_iter()
            .zip(ends)
            .map(|(s, e)| (s, e, Mutex::new(self.spare.pop().unwrap_or_default())))
            .collect();
        let mut outs = crate::core::parallel::map(&spans, |(s, e, records)| {
            let records = std::mem::take(
                &mut *records
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
            );
            piece(
                &data[*s..*e],
                self.offset + *s as u64,
                &self.file,
                records,
                self.arena,
                self.seed.clone().unwrap_or_default(),
            )
        });
        // The first piece cut inside an object: the rest of the block is scanned as one piece.
        if let Some(bad) =
            (0..spans.len() - 1).find(|&i| outs[i].consumed != spans[i].1 - spans[i].0)
        {
            let s = spans[bad].0;
            for mut out in outs.drain(bad..) {
                out.tally.records.clear();
                self.spare.push(out.tally.records);
            }
            let records = self.spare.pop().unwrap_or_default();
            outs.push(piece(
                &data[s..],
                self.offset + s as u64,
                &self.file,
                records,
                self.arena,
                self.seed.clone().unwrap_or_default(),
            ));
            let last = outs.len() - 1;
            outs[last].consumed += s;
        } else {
            let last = outs.len() - 1;
            outs[last].consumed += spans[last].0;
        }
        let consumed = outs.last().map_or(0, |o| o.consumed);
        if let Some(most) = outs.iter().map(|o| &o.shapes).max_by_key(|s| s.steps()) {
            if most.steps() > self.seed.as_ref().map_or(0, Shapes::steps) {
                self.seed = most.seed();
            }
        }
        // Each block's pieces join the file's tally at once, so that the pieces' memory is
        // reused by the next block's rather than all of it held (and faulted in) until the end.
        let mut pieces: Vec<Vec<Record<'a>>> = outs
            .iter_mut()
            .map(|o| std::mem::take(&mut o.tally.records))
            .collect();
        append(&mut self.tally.records, &mut pieces);
        self.spare.extend(pieces);
        for out in outs {
            self.tally.merge(out.tally);
        }
        self.carry = data[consumed..].to_vec();
        self.offset += consumed as u64;
        data
    }

    /// The tally at the end of the file (or of what could be read of it).
    fn finish(self, error: Option<io::Error>) -> Tally<'a> {
        let mut tally = self.tally;
        let name = self.file.display().to_string();
        let end = self.offset + self.carry.len() as u64;
        if let Some(e) = error {
            tally.note(format!("{name}: read stopped at byte {end}: {e}"));
        }
        if !self.carry.is_empty() {
            tally.note(format!(
                "{name}: cut mid-record at byte {}: {} bytes dropped",
                self.offset,
                self.carry.len()
            ));
        }
        tally
    }
}

/// Parses the JSON records file `file` from `reader` (its whole content, decompressed).
pub(super) fn read_json<'a>(
    file: Arc<PathBuf>,
    mut reader: Box<dyn Read + Send>,
    arena: &'a Arena,
) -> Tally<'a> {
    let mut consumer = Consumer {
        file,
        arena,
        tally: Tally::default(),
        carry: Vec::new(),
        offset: 0,
        spare: Vec::new(),
        seed: None,
    };
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
