//! Record shapes: the plugin writes every record of a kind with the same keys in the same order
//! and the same punctuation, so after one record of a kind has been read field by field, the
//! next is read by checking that the bytes between its values are those same bytes (one
//! comparison per field instead of reading and matching each key) and reading each value where
//! the shape says it lies.
//!
//! A shape is the list of steps the field-by-field reader took on one record: the bytes from
//! the end of one value to the start of the next (keys, colons, commas, braces, whitespace,
//! exactly) and what the next value is. Values a communicator's records in one process all
//! repeat (the header, the metadata but its time) are part of a step's bytes, known from the
//! learned record, so most of a record is one comparison. The shapes a piece has learned share
//! their common beginnings as a tree, so a record of another kind costs the comparison where
//! the kinds part, not a second reading from the start.
//!
//! Reading along a shape gives exactly what the field-by-field reader gives: the bytes outside
//! the values read are the learned record's, so that reader would meet the same keys in the
//! same sections in the same order (no field twice, as it refuses those before a shape is
//! learned) and the same known values, and each other value is read by the same method it
//! would call. A record that leaves the tree anywhere (other keys, other spacing, a value the
//! method refuses) goes back to the field-by-field reader, which may learn it as a new shape.
//! Sections and fields the shape does not replay (a verbose record's event trace, a section of
//! another kind) are never learned.
//!
//! Every field of a record's [`Source`] is in its shape's bytes, so the records read along one
//! shape share one source: the first built is remembered at the shape's last step, and the
//! others take it without a lookup.

mod learn;

use super::cursor::{ascii, Cursor};
use crate::analysis::inspector::read::intern::Interner;
use crate::analysis::inspector::read::json::{build_with, Parsed, Perf, Raw};
use crate::analysis::inspector::record::Source;
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

/// What a step reads after its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::analysis::inspector::read) enum Slot {
    /// `header`'s object starts.
    Header,
    /// `metadata`'s object starts.
    Meta,
    /// `coll_perf`'s object starts.
    Coll,
    /// `p2p_perf`'s object starts.
    P2p,
    Id,
    CommName,
    Rank,
    NRanks,
    NNodes,
    Version,
    Timestamp,
    Host,
    Pid,
    /// The function name (`coll` / `p2p`).
    Name,
    Seq,
    Peer,
    Bytes,
    Time,
    Timing,
    AlgBw,
    BusBw,
    /// A field the record does not keep, inside a section.
    Skip2,
    /// Something a shape does not replay: the record is not learned.
    Never,
    /// The object's end (the step's bytes end with its closing brace).
    End,
}

/// Where one value read lay in its object, and what it was.
#[derive(Clone, Copy, Debug)]
pub(in crate::analysis::inspector::read) struct Mark {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) slot: Slot,
}

/// A field whose value is part of a step's bytes (see [`learn::sticky`]), known from the record the
/// step was learned from.
#[derive(Clone, Copy, Debug)]
enum Known {
    /// A section starts.
    Begin(Slot),
    /// A string field; where its content lies from the step's first byte (`None`: `null`).
    Str(Slot, Option<(u32, u32)>),
    /// A number field.
    Num(Slot, Option<u32>),
    /// A value the record does not keep.
    Skip,
}

/// One step of a shape: its bytes (a range of [`Shapes::bytes`]), the fields those bytes
/// hold, what follows them, and the steps that may come next.
struct Node {
    from: u32,
    len: u32,
    known: Vec<Known>,
    slot: Slot,
    next: Vec<u32>,
    /// For a shape's last step: the source of the records read along the shape, once one has
    /// been built. Every field of a source is in the shape's bytes (header and metadata are
    /// sticky), so every record read along it has that source.
    source: Option<Arc<Source>>,
}

/// The most steps a piece keeps; a file whose records keep changing shape stops being learned
/// (each record is then read field by field, as without shapes).
const MAX_NODES: usize = 4096;

/// The most bytes of steps a piece keeps.
const MAX_BYTES: usize = 1 << 20;

/// The shapes one piece has learned.
#[derive(Default)]
pub(in crate::analysis::inspector::read) struct Shapes {
    bytes: Vec<u8>,
    nodes: Vec<Node>,
    roots: Vec<u32>,
    /// Memory for the marks of the next record learned.
    marks: Vec<Mark>,
}

impl Shapes {
    /// Reads the object at the start of `text` (as [`super::raw`] does): along a learned shape
    /// when one fits, else field by field, learning the record's shape. (For tests: a piece
    /// builds its records through [`Self::record`].)
    #[cfg(test)]
    pub(in crate::analysis::inspector::read) fn read<'a>(
        &mut self,
        text: &'a [u8],
    ) -> Option<(usize, Raw<'a>)> {
        let mut raw = Raw::default();
        match self.replay(text, &mut raw) {
            Some((len, _)) => Some((len, raw)),
            None => self.learn(text),
        }
    }

    /// The record of the object at the start of `text` of `file` (as [`build_with`] gives it
    /// from what [`super::raw`] reads), and the object's length; `None` where serde must read
    /// it. A record read along a shape whose records were built before shares their source
    /// without looking it up in `sources`.
    pub(in crate::analysis::inspector::read) fn record(
        &mut self,
        text: &[u8],
        file: &Arc<PathBuf>,
        sources: &mut Interner,
    ) -> Option<(usize, Parsed)> {
        // Read in place: what is read is large, and each move of it was memory traffic.
        let mut raw = Raw::default();
        let Some((len, leaf)) = self.replay(text, &mut raw) else {
            let (len, raw) = self.learn(text)?;
            return Some((len, build_with(&raw, file, None, sources)));
        };
        let known = self.nodes[leaf as usize]
            .source
            .as_ref()
            .filter(|s| Arc::ptr_eq(&s.file, file))
            .cloned();
        let learn = known.is_none();
        let parsed = build_with(&raw, file, known, sources);
        if let (Parsed::Record(r, _), true) = (&parsed, learn) {
            self.nodes[leaf as usize].source = Some(Arc::clone(&r.source));
        }
        Some((len, parsed))
    }

    /// The object at the start of `text` read field by field, its shape learned.
    fn learn<'a>(&mut self, text: &'a [u8]) -> Option<(usize, Raw<'a>)> {
        if self.nodes.len() >= MAX_NODES {
            return super::raw(text);
        }
        let (read, marks) = super::raw_marked(text, std::mem::take(&mut self.marks));
        if let Some((len, _)) = &read {
            self.add_shape(&text[..*len], &marks);
        }
        self.marks = marks;
        read
    }

    /// Whether `text` fits a learned shape (for tests).
    #[cfg(test)]
    pub(in crate::analysis::inspector::read) fn fits(&self, text: &[u8]) -> bool {
        self.replay(text, &mut Raw::default()).is_some()
    }

    /// How many steps the learned shapes hold (for tests).
    #[cfg(test)]
    pub(in crate::analysis::inspector::read) fn steps(&self) -> usize {
        self.nodes.len()
    }

    /// Reads the object along a learned shape into `raw` (a default one); its length and the
    /// shape's last step, or `None` where none fits (`raw` then holds what was read before).
    fn replay<'a>(&self, text: &'a [u8], raw: &mut Raw<'a>) -> Option<(usize, u32)> {
        let mut c = Cursor::new(text);
        // Which perf section the perf fields go to.
        let mut p2p = false;
        let mut next = &self.roots;
        loop {
            let from = c.at();
            let k = next.iter().copied().find(|&k| {
                let n = &self.nodes[k as usize];
                follows(
                    &mut c,
                    &self.bytes[n.from as usize..(n.from + n.len) as usize],
                )
            })?;
            let node = &self.nodes[k as usize];
            for known in &node.known {
                put_known(raw, &mut p2p, &text[from..], *known)?;
            }
            match node.slot {
                Slot::Timestamp => raw.metadata.as_mut()?.dump_timestamp_us = c.opt_u64()?,
                Slot::Name => perf(raw, p2p)?.coll = c.opt_str()?,
                Slot::Seq => perf(raw, p2p)?.coll_sn = c.opt_u64()?,
                Slot::Peer => perf(raw, p2p)?.p2p_peer = c.opt_u32()?,
                Slot::Bytes => perf(raw, p2p)?.coll_msg_size_bytes = c.opt_u64()?,
                Slot::Time => perf(raw, p2p)?.coll_exec_time_us = c.opt_f64()?,
                Slot::Timing => perf(raw, p2p)?.coll_timing_source = c.opt_str()?,
                Slot::AlgBw => perf(raw, p2p)?.coll_algobw_gbs = c.bandwidth()?,
                Slot::BusBw => perf(raw, p2p)?.coll_busbw_gbs = c.bandwidth()?,
                Slot::Skip2 => c.skip(2)?,
                Slot::End => return Some((c.at(), k)),
                // Sticky fields are never a step's own slot.
                _ => return None,
            }
            next = &node.next;
        }
    }
}

/// Puts a field known from a step's bytes (`step`: the record's bytes from the step's first
/// on) into `raw`.
fn put_known<'a>(raw: &mut Raw<'a>, p2p: &mut bool, step: &'a [u8], known: Known) -> Option<()> {
    match known {
        Known::Begin(Slot::Header) => raw.header = Some(Default::default()),
        Known::Begin(Slot::Meta) => raw.metadata = Some(Default::default()),
        Known::Begin(Slot::Coll) => {
            raw.coll = Some(Default::default());
            *p2p = false;
        }
        Known::Begin(Slot::P2p) => {
            raw.p2p = Some(Default::default());
            *p2p = true;
        }
        Known::Begin(_) => return None,
        Known::Str(slot, at) => {
            let value = at.map(|(from, len)| {
                Cow::Borrowed(ascii(&step[from as usize..(from + len) as usize]))
            });
            match slot {
                Slot::Id => raw.header.as_mut()?.id = value,
                Slot::CommName => raw.header.as_mut()?.comm_name = value,
                Slot::Version => raw.metadata.as_mut()?.inspector_output_format_version = value,
                Slot::Host => raw.metadata.as_mut()?.hostname = value,
                _ => return None,
            }
        }
        Known::Num(slot, value) => match slot {
            Slot::Rank => raw.header.as_mut()?.rank = value,
            Slot::NRanks => raw.header.as_mut()?.n_ranks = value,
            Slot::NNodes => raw.header.as_mut()?.nnodes = value,
            Slot::Pid => raw.metadata.as_mut()?.pid = value,
            _ => return None,
        },
        Known::Skip => {}
    }
    Some(())
}

/// Whether two slices of equal length hold the same bytes, compared eight at a time: the
/// steps of a shape are a few dozen bytes each, and a call to the C library's `memcmp` per
/// step was a tenth of the reading time.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    let word = |s: &[u8]| u64::from_ne_bytes(s.try_into().expect("eight bytes"));
    let (mut x, mut y) = (a, b);
    while x.len() >= 8 {
        if word(&x[..8]) != word(&y[..8]) {
            return false;
        }
        (x, y) = (&x[8..], &y[8..]);
    }
    if x.len() >= 4 {
        let half = |s: &[u8]| u32::from_ne_bytes(s.try_into().expect("four bytes"));
        let n = x.len();
        // Two overlapping words cover 4 to 7 bytes.
        return half(&x[..4]) == half(&y[..4]) && half(&x[n - 4..]) == half(&y[n - 4..]);
    }
    x.iter().zip(y).all(|(p, q)| p == q)
}

/// Whether `lit` comes next at `c`, byte for byte (consumed if so).
#[inline]
fn follows(c: &mut Cursor<'_>, lit: &[u8]) -> bool {
    let rest = c.rest();
    let yes = rest.len() >= lit.len() && same(&rest[..lit.len()], lit);
    if yes {
        c.advance(lit.len());
    }
    yes
}

/// The perf section the perf fields go to.
fn perf<'r, 'a>(raw: &'r mut Raw<'a>, p2p: bool) -> Option<&'r mut Perf<'a>> {
    if p2p {
        raw.p2p.as_mut()
    } else {
        raw.coll.as_mut()
    }
}
