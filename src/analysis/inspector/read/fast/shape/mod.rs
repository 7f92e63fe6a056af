//! Record shapes: the plugin writes every record of a kind with the same keys in the same order
//! and the same punctuation, so after one record of a kind has been read field by field, the
//! next is read by checking that the bytes between its values are those same bytes (one
//! comparison per field instead of reading and matching each key) and reading each value where
//! the shape says it lies.
//!
//! A shape is the list of steps the field-by-field reader took on one record: the bytes from
//! the end of one value to the start of the next (keys, colons, commas, braces, whitespace,
//! exactly) and what the next value is. Values a communicator's records in one process all
//! repeat (the header, the metadata but its time) and those that take a few values (the
//! function name, the timing source) are part of a step's bytes, so most of a record is one
//! comparison and only its numbers are read. The shapes a piece has learned share their common
//! beginnings as a tree, so a record of another kind costs the comparison where the kinds
//! part, not a second reading from the start.
//!
//! Reading along a shape gives exactly what the field-by-field reader gives: the bytes outside
//! the values read are the learned record's, so that reader would meet the same keys in the
//! same sections in the same order (no field twice, as it refuses those before a shape is
//! learned) and the same values in those bytes, and each other value is read by the same
//! method it would call. A record that leaves the tree anywhere (other keys, other spacing, a
//! value the method refuses) goes back to the field-by-field reader, which may learn it as a
//! new shape. Sections and fields the shape does not replay (a verbose record's event trace, a
//! section of another kind) are never learned.
//!
//! So the records read along one shape share all but their numbers: the record's
//! [`Source`](crate::analysis::inspector::record::Source), its operation and its timing source.
//! The first record built along a shape (read field by field) leaves them at the shape's last
//! step as a [`Shared`], and each record after it is built from that and its own numbers,
//! without reading or looking up the rest. Debug builds hold each such record to the same
//! object read field by field.

mod compare;
mod learn;

use super::cursor::Cursor;
use crate::analysis::inspector::read::assemble::{along, Shared};
use crate::analysis::inspector::read::intern::Interner;
use crate::analysis::inspector::read::json::{build, Parsed, Perf};
use crate::analysis::inspector::read::tally::Tally;
use compare::follows;
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

/// One step of a shape: its bytes (a range of [`Shapes::bytes`]), what follows them, and the
/// steps that may come next.
#[derive(Clone)]
struct Node<'a> {
    from: u32,
    len: u32,
    slot: Slot,
    next: Vec<u32>,
    /// The first offset at which the bytes of the steps in `next` differ (see
    /// [`learn::discriminator`]).
    disc: u32,
    /// For a shape's last step: which perf section the shape holds (`Some(true)`: `p2p_perf`),
    /// where it holds exactly one (with none or both, no record is built along it).
    p2p: Option<bool>,
    /// For a shape's last step: what the records read along the shape share, once one has
    /// been built. Every field of a source, the function name and the timing source are in
    /// the shape's bytes (they are sticky), so every record read along it shares them.
    shared: Option<Shared<'a>>,
}

/// The most steps a piece keeps; a file whose records keep changing shape stops being learned
/// (each record is then read field by field, as without shapes).
const MAX_NODES: usize = 4096;

/// The most bytes of steps a piece keeps.
const MAX_BYTES: usize = 1 << 20;

/// The shapes one piece has learned.
#[derive(Default, Clone)]
pub(in crate::analysis::inspector::read) struct Shapes<'a> {
    bytes: Vec<u8>,
    nodes: Vec<Node<'a>>,
    roots: Vec<u32>,
    /// As [`Node::disc`], for `roots`.
    roots_disc: u32,
    /// Memory for the marks of the next record learned.
    marks: Vec<Mark>,
}

impl<'a> Shapes<'a> {
    /// Reads the object at the start of `text` of `file`: its length, and into `out` what
    /// [`build`] gives from what [`super::raw`] reads of it, unless that is a record added to
    /// `tally` already (`out` is then left as it was); `None` where serde must read it. (The
    /// length alone is returned: a result holding the rare [`Parsed`] was written to memory
    /// on every call and read back whole, a stall per record.)
    ///
    /// Along a shape whose records of this file were built before, only the values are read:
    /// the header and metadata are the shape's bytes, so the record takes the source of the
    /// one built before and needs neither those fields nor a lookup, and is built where the
    /// tally keeps it. The first record along a shape is read field by field, and its source
    /// remembered at the shape's last step.
    pub(in crate::analysis::inspector::read) fn record_into(
        &mut self,
        text: &[u8],
        file: &Arc<PathBuf>,
        sources: &mut Interner<'a>,
        tally: &mut Tally<'a>,
        out: &mut Option<Parsed<'a>>,
    ) -> Option<usize> {
        let mut perf = Perf::default();
        let Some((len, leaf, dump_ts)) = self.replay(text, &mut perf) else {
            let (len, parsed) = self.learn(text, file, sources)?;
            *out = Some(parsed);
            return Some(len);
        };
        let node = &mut self.nodes[leaf as usize];
        if let Some(shared) = node
            .shared
            .as_ref()
            .filter(|s| Arc::ptr_eq(&s.source.file, file))
        {
            if let Err(reason) = along(shared, &perf, dump_ts, tally) {
                *out = Some(Parsed::Skip(reason));
            }
            #[cfg(debug_assertions)]
            check(text, file, len, out.as_ref(), tally);
            return Some(len);
        }
        // The shape was learned from another file's record.
        let (len, raw) = super::raw(text)?;
        let parsed = build(&raw, file, sources);
        remember(node, &parsed);
        *out = Some(parsed);
        Some(len)
    }

    /// [`Shapes::record_into`] with the record, if any, given back (for tests).
    #[cfg(test)]
    pub(in crate::analysis::inspector::read) fn record(
        &mut self,
        text: &[u8],
        file: &Arc<PathBuf>,
        sources: &mut Interner<'a>,
    ) -> Option<(usize, Parsed<'a>)> {
        let mut tally = Tally::default();
        let mut parsed = None;
        let len = self.record_into(text, file, sources, &mut tally, &mut parsed)?;
        let parsed = parsed
            .unwrap_or_else(|| Parsed::Record(tally.records.pop().expect("a record added"), false));
        Some((len, parsed))
    }

    /// The record of the object at the start of `text` read field by field, its shape learned
    /// and the record's source remembered at the shape's last step.
    fn learn(
        &mut self,
        text: &[u8],
        file: &Arc<PathBuf>,
        sources: &mut Interner<'a>,
    ) -> Option<(usize, Parsed<'a>)> {
        if self.nodes.len() >= MAX_NODES {
            let (len, raw) = super::raw(text)?;
            return Some((len, build(&raw, file, sources)));
        }
        let (read, marks) = super::raw_marked(text, std::mem::take(&mut self.marks));
        let learned = read.map(|(len, raw)| {
            let leaf = self.add_shape(&text[..len], &marks);
            let parsed = build(&raw, file, sources);
            if let Some(leaf) = leaf {
                remember(&mut self.nodes[leaf], &parsed);
            }
            (len, parsed)
        });
        self.marks = marks;
        learned
    }

    /// Whether `text` fits a learned shape (for tests).
    #[cfg(test)]
    pub(in crate::analysis::inspector::read) fn fits(&self, text: &[u8]) -> bool {
        self.replay(text, &mut Perf::default()).is_some()
    }

    /// How many steps the learned shapes hold.
    pub(in crate::analysis::inspector::read) fn steps(&self) -> usize {
        self.nodes.len()
    }

    /// Reads the object's values along a learned shape, those of its perf section into `perf`
    /// (a default one); its length, the shape's last step and the metadata's time, or `None`
    /// where none fits (`perf` then holds what was read before).
    fn replay<'t>(&self, text: &'t [u8], perf: &mut Perf<'t>) -> Option<(usize, u32, Option<u64>)> {
        let mut c = Cursor::new(text);
        let mut dump_ts = None;
        let (mut next, mut disc) = (&self.roots, self.roots_disc as usize);
        loop {
            // One byte, where the candidate steps differ, rules out all but the step that can
            // follow before any is compared whole: a step compared in vain until its first
            // differing byte, and the branch that then failed, were most of the replay.
            let k = next.iter().copied().find(|&k| {
                let n = &self.nodes[k as usize];
                let lit = &self.bytes[n.from as usize..(n.from + n.len) as usize];
                let can = match lit.get(disc) {
                    Some(b) => c.rest().get(disc) == Some(b),
                    None => true,
                };
                can && follows(&mut c, lit)
            })?;
            let node = &self.nodes[k as usize];
            match node.slot {
                Slot::Timestamp => dump_ts = c.opt_u64()?,
                Slot::Seq => perf.coll_sn = c.opt_u64()?,
                Slot::Peer => perf.p2p_peer = c.opt_u32()?,
                Slot::Bytes => perf.coll_msg_size_bytes = c.opt_u64()?,
                Slot::Time => perf.coll_exec_time_us = c.opt_f64()?,
                Slot::AlgBw => perf.coll_algobw_gbs = c.bandwidth()?,
                Slot::BusBw => perf.coll_busbw_gbs = c.bandwidth()?,
                Slot::Skip2 => c.skip(2)?,
                Slot::End => return Some((c.at(), k, dump_ts)),
                // Sticky fields are never a step's own slot.
                _ => return None,
            }
            (next, disc) = (&node.next, node.disc as usize);
        }
    }
}

/// Keeps what the records along the shape ending at `leaf` share, where `parsed` is a record.
fn remember<'a>(leaf: &mut Node<'a>, parsed: &Parsed<'a>) {
    if let (Parsed::Record(r, _), Some(p2p)) = (parsed, leaf.p2p) {
        leaf.shared = Some(Shared {
            source: r.source,
            p2p,
            op: r.op(),
            first: *r,
        });
    }
}

/// Holds a record read along a shape (the last in `tally`, or the reason `skip` for none) to
/// the same object read field by field (debug builds: the tests run with it).
#[cfg(debug_assertions)]
fn check(
    text: &[u8],
    file: &Arc<PathBuf>,
    len: usize,
    skip: Option<&Parsed<'_>>,
    tally: &Tally<'_>,
) {
    let (whole, raw) = super::raw(text).expect("a record along a shape reads field by field");
    assert_eq!(whole, len, "a shape's length differs");
    let arena = crate::analysis::inspector::Arena::new();
    let built = build(&raw, file, &mut Interner::new(&arena));
    match skip {
        Some(skip) => assert!(built == *skip, "{built:?} != {skip:?}"),
        None => {
            let along = tally.records.last().expect("a record");
            assert!(
                matches!(&built, Parsed::Record(r, false) if r == along),
                "{built:?} != {along:?}"
            );
        }
    }
}
