//! Learning a shape: the steps of one record read field by field, from where its reader
//! noted each value, and their place in the tree of a piece's shapes.

use super::super::cursor::Cursor;
use super::{Known, Mark, Node, Shapes, Slot, MAX_BYTES, MAX_NODES};
use std::borrow::Cow;

/// Whether a field's value is taken into its step's bytes: those a communicator's records in
/// one process all repeat (its header, its process's metadata but the time, and the start of
/// each section), so that a record of a learned communicator compares them in one run of
/// bytes instead of reading each. A record of another communicator then takes another branch
/// of the tree, learned once.
pub(super) fn sticky(slot: Slot, section: Slot) -> bool {
    match slot {
        Slot::Header | Slot::Meta | Slot::Coll | Slot::P2p => true,
        Slot::Id | Slot::CommName | Slot::Rank | Slot::NRanks | Slot::NNodes => true,
        Slot::Version | Slot::Host | Slot::Pid => true,
        Slot::Skip2 => matches!(section, Slot::Header | Slot::Meta),
        _ => false,
    }
}

impl Shapes {
    /// Adds the shape of `text` (one whole object), read field by field with these `marks`.
    pub(super) fn add_shape(&mut self, text: &[u8], marks: &[Mark]) {
        if marks.iter().any(|m| m.slot == Slot::Never)
            || self.nodes.len() + marks.len() + 1 > MAX_NODES
            || self.bytes.len() + text.len() > MAX_BYTES
        {
            return;
        }
        let Some(steps) = steps(text, marks) else {
            return;
        };
        let mut parent: Option<usize> = None;
        for (lit, known, slot) in steps {
            let lit = &text[lit];
            let siblings = match parent {
                Some(p) => &self.nodes[p].next,
                None => &self.roots,
            };
            // Equal bytes in the same place hold the same known fields.
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
                        known,
                        slot,
                        next: Vec::new(),
                        source: None,
                    });
                    self.bytes.extend_from_slice(lit);
                    match parent {
                        Some(p) => self.nodes[p].next.push(k),
                        None => self.roots.push(k),
                    }
                    k
                }
            };
            parent = Some(k as usize);
        }
    }
}

/// A step of a learned shape: its bytes (a range of the record), the sticky fields they
/// hold, and the slot after them.
type Step = (std::ops::Range<usize>, Vec<Known>, Slot);

/// The steps of `text` read field by field with these `marks`: each value that is not
/// [`sticky`] ends a step; `None` where a sticky value cannot be known.
fn steps(text: &[u8], marks: &[Mark]) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let (mut at, mut known, mut section) = (0, Vec::new(), Slot::End);
    for m in marks {
        if matches!(m.slot, Slot::Header | Slot::Meta | Slot::Coll | Slot::P2p) {
            section = m.slot;
        }
        if !sticky(m.slot, section) {
            steps.push((at..m.start, std::mem::take(&mut known), m.slot));
            at = m.end;
            continue;
        }
        let mut c = Cursor::new(text);
        c.advance(m.start);
        known.push(match m.slot {
            Slot::Header | Slot::Meta | Slot::Coll | Slot::P2p => Known::Begin(m.slot),
            Slot::Skip2 => Known::Skip,
            Slot::Id | Slot::CommName | Slot::Version | Slot::Host => {
                let at_content = match c.opt_str()? {
                    Some(Cow::Borrowed(s)) => {
                        let from = s.as_ptr() as usize - text.as_ptr() as usize - at;
                        Some((u32::try_from(from).ok()?, u32::try_from(s.len()).ok()?))
                    }
                    Some(Cow::Owned(_)) => return None,
                    None => None,
                };
                Known::Str(m.slot, at_content)
            }
            _ => Known::Num(m.slot, c.opt_u32()?),
        });
    }
    steps.push((at..text.len(), known, Slot::End));
    Some(steps)
}
