//! Learning a shape: the steps of one record read field by field, from where its reader
//! noted each value, and their place in the tree of a piece's shapes.

use super::{Mark, Node, Shapes, Slot, MAX_BYTES, MAX_NODES};

/// Whether a field's value is taken into its step's bytes: those a communicator's records in
/// one process all repeat (its header, its process's metadata but the time, and the start of
/// each section), and those that take a few values (the function name and the timing
/// source), so that a record of a learned communicator and function compares them in one run
/// of bytes instead of reading each. A record of another communicator or function then takes
/// another branch of the tree, learned once.
pub(super) fn sticky(slot: Slot, section: Slot) -> bool {
    match slot {
        Slot::Header | Slot::Meta | Slot::Coll | Slot::P2p => true,
        Slot::Id | Slot::CommName | Slot::Rank | Slot::NRanks | Slot::NNodes => true,
        Slot::Version | Slot::Host | Slot::Pid => true,
        Slot::Name | Slot::Timing => true,
        Slot::Skip2 => matches!(section, Slot::Header | Slot::Meta),
        _ => false,
    }
}

impl Shapes<'_> {
    /// Adds the shape of `text` (one whole object), read field by field with these `marks`;
    /// its last step, or `None` where it is not learned.
    pub(super) fn add_shape(&mut self, text: &[u8], marks: &[Mark]) -> Option<usize> {
        if marks.iter().any(|m| m.slot == Slot::Never)
            || self.nodes.len() + marks.len() + 1 > MAX_NODES
            || self.bytes.len() + text.len() > MAX_BYTES
        {
            return None;
        }
        let sections = |slot| marks.iter().filter(|m| m.slot == slot).count();
        let p2p = match (sections(Slot::Coll), sections(Slot::P2p)) {
            (1, 0) => Some(false),
            (0, 1) => Some(true),
            _ => None,
        };
        let mut parent: Option<usize> = None;
        for (lit, slot) in steps(marks, text.len()) {
            let lit = &text[lit];
            let siblings = match parent {
                Some(p) => &self.nodes[p].next,
                None => &self.roots,
            };
            let found = siblings.iter().copied().find(|&k| {
                let n = &self.nodes[k as usize];
                n.slot == slot && self.bytes[n.from as usize..(n.from + n.len) as usize] == *lit
            });
            let k = match found {
                Some(k) => k,
                None => {
                    let k = self.nodes.len() as u32;
                    self.nodes.push(Node {
                        from: self.bytes.len() as u32,
                        len: lit.len() as u32,
                        slot,
                        next: Vec::new(),
                        disc: u32::MAX,
                        // Equal bytes up to the end hold the same sections.
                        p2p: if slot == Slot::End { p2p } else { None },
                        shared: None,
                    });
                    self.bytes.extend_from_slice(lit);
                    match parent {
                        Some(p) => {
                            self.nodes[p].next.push(k);
                            self.nodes[p].disc = self.discriminator(&self.nodes[p].next);
                        }
                        None => {
                            self.roots.push(k);
                            self.roots_disc = self.discriminator(&self.roots);
                        }
                    }
                    k
                }
            };
            parent = Some(k as usize);
        }
        parent
    }
}

/// The most bytes of steps a piece's shapes may hold to be handed to the next block's pieces.
const SEED_BYTES: usize = 64 << 10;

impl<'a> Shapes<'a> {
    /// These shapes for a piece to start from, where they are small enough that copying them
    /// costs less than learning them again (each piece learning every shape anew through
    /// serde was a few percent of the reading time); `None` otherwise.
    pub(in crate::analysis::inspector::read) fn seed(&self) -> Option<Shapes<'a>> {
        (self.bytes.len() <= SEED_BYTES).then(|| self.clone())
    }

    /// The first offset at which the bytes of the steps `next` are not all equal (among those
    /// long enough to have a byte there); `u32::MAX` where there is none. Checking the byte
    /// there first never rules out a step that follows, as a step that follows has the
    /// record's byte at every offset.
    pub(super) fn discriminator(&self, next: &[u32]) -> u32 {
        let lits: Vec<&[u8]> = next
            .iter()
            .map(|&k| {
                let n = &self.nodes[k as usize];
                &self.bytes[n.from as usize..(n.from + n.len) as usize]
            })
            .collect();
        let longest = lits.iter().map(|l| l.len()).max().unwrap_or(0);
        (0..longest)
            .find(|&d| {
                let mut at = lits.iter().filter_map(|l| l.get(d));
                let first = at.next();
                at.any(|b| Some(b) != first)
            })
            .map_or(u32::MAX, |d| d as u32)
    }
}

/// The steps of an object of `len` bytes read field by field with these `marks`: the bytes
/// up to each value that is not [`sticky`] (sticky values are part of them), and that value's
/// slot; the last step's bytes run to the object's end.
fn steps(marks: &[Mark], len: usize) -> Vec<(std::ops::Range<usize>, Slot)> {
    let mut steps = Vec::new();
    let (mut at, mut section) = (0, Slot::End);
    for m in marks {
        if matches!(m.slot, Slot::Header | Slot::Meta | Slot::Coll | Slot::P2p) {
            section = m.slot;
        }
        if !sticky(m.slot, section) {
            steps.push((at..m.start, m.slot));
            at = m.end;
        }
    }
    steps.push((at..len, Slot::End));
    steps
}
