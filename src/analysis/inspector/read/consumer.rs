//! The blocks of one JSON records file parsed so far, whether streamed or mapped: each block
//! cut into pieces at lines that start with `{` and the pieces parsed in parallel, their
//! records joined to the file's as each block ends (the pieces' memory then reused).
//!
//! A cut at a line starting with `{` is a record boundary in the plugin's one-record-a-line
//! output and in indented pretty-printing, but not necessarily in every file. So each piece
//! is checked: a piece that does not end exactly where its last object ends was cut inside an
//! object, and the block is scanned again from that piece's start as one piece. The result is
//! the same as one sequential scan, whatever the cuts (blocks end where such a scan would
//! resume after garbage: see the stream module).

use super::fast::Shapes;
use super::pieces::{append, cuts, piece};
use super::tally::Tally;
use crate::analysis::inspector::record::Record;
use crate::analysis::inspector::Arena;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The blocks of one file parsed so far.
pub(super) struct Consumer<'a> {
    file: Arc<PathBuf>,
    arena: &'a Arena,
    tally: Tally<'a>,
    /// The bytes of an object still open at the end of the last block.
    pub(super) carry: Vec<u8>,
    /// File offset of `carry`'s first byte.
    pub(super) offset: u64,
    /// Empty record vectors for the next block's pieces: memory the allocator would otherwise
    /// hand back to the system between blocks, each piece's records then faulting in anew.
    spare: Vec<Vec<Record<'a>>>,
    /// The shapes the next block's pieces start from (those learned by the last block's
    /// piece that learned most, where small enough to copy).
    seed: Option<Shapes<'a>>,
}

impl<'a> Consumer<'a> {
    pub(super) fn new(file: Arc<PathBuf>, arena: &'a Arena) -> Self {
        Consumer {
            file,
            arena,
            tally: Tally::default(),
            carry: Vec::new(),
            offset: 0,
            spare: Vec::new(),
            seed: None,
        }
    }

    /// Parses `block` read from a stream (after what was carried from the last); returns the
    /// block's buffer for reuse.
    pub(super) fn feed(&mut self, block: Vec<u8>) -> Vec<u8> {
        let data = if self.carry.is_empty() {
            block
        } else {
            let mut d = std::mem::take(&mut self.carry);
            d.extend_from_slice(&block);
            d
        };
        let consumed = self.parse(&data);
        self.carry = data[consumed..].to_vec();
        self.offset += consumed as u64;
        data
    }

    /// Parses `data`, whose first byte is at `self.offset` in the file; returns how many of
    /// its bytes were consumed (all but an object still open at its end).
    pub(super) fn parse(&mut self, data: &[u8]) -> usize {
        let starts = cuts(data);
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
        consumed
    }

    /// The tally at the end of the file (or of what could be read of it).
    pub(super) fn finish(self, error: Option<io::Error>) -> Tally<'a> {
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
