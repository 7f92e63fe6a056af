//! Where what a read's records share lives: each [`Source`] (who wrote a run of records),
//! each name outside the known ones (an unknown function or timing source) and each [`Rare`]
//! (what few records have), allocated once and borrowed by every record that has it.
//!
//! Records only borrow, so a record is plain bytes: millions of them are written, moved and
//! freed without a reference count touched per record (a count shared by the threads that
//! parse in parallel is a cache line they all write, and dropping a dump's records was a walk
//! through all of their memory).

use super::record::{Rare, Source};
use rustc_hash::FxHashMap;
use std::ptr::NonNull;
use std::sync::{Mutex, PoisonError};

/// The shared values of one read: [`read_paths`](super::read_paths) borrows it, and the
/// records it gives borrow from it, so it outlives them.
#[derive(Default)]
pub struct Arena {
    /// Owned allocations, freed when the arena is dropped (held as raw pointers: what was
    /// handed out is borrowed while the list grows, so no owner may move it).
    sources: Mutex<Vec<NonNull<Source>>>,
    names: Mutex<FxHashMap<String, NonNull<String>>>,
    /// By the addresses of their names (each name is kept once) and the bucket's end.
    rares: Mutex<FxHashMap<RareKey, NonNull<Rare>>>,
}

/// A [`Rare`]'s names' addresses (0 for none) and its bucket's end.
type RareKey = (usize, usize, Option<u64>);

// SAFETY: the arena owns what its pointers point to (`Source`s, `String`s and `Rare`s, which
// are `Send` and `Sync`) and only hands out shared references to it; its lists are behind locks.
unsafe impl Send for Arena {}
// SAFETY: as for `Send`.
unsafe impl Sync for Arena {}

impl Arena {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps `source` for as long as the arena lives.
    pub fn source(&self, source: Source) -> &Source {
        let at = NonNull::from(Box::leak(Box::new(source)));
        self.sources
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(at);
        // SAFETY: `at` came from a box that only `drop` frees, after every borrow of the
        // arena ended; nothing writes through it.
        unsafe { at.as_ref() }
    }

    /// The name `name` kept for as long as the arena lives (one allocation per distinct name).
    pub fn name(&self, name: &str) -> &String {
        let mut names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        let at = match names.get(name) {
            Some(&at) => at,
            None => {
                let at = NonNull::from(Box::leak(Box::new(name.to_string())));
                names.insert(name.to_string(), at);
                at
            }
        };
        // SAFETY: as in `source`.
        unsafe { at.as_ref() }
    }

    /// The [`Rare`] of a record with these names outside the known ones and this bucket end.
    pub fn rare(&self, op: Option<&str>, timing: Option<&str>, hi: Option<u64>) -> &Rare {
        let name = |n: Option<&str>| -> Option<&'static String> {
            // SAFETY: the name is the arena's own, which lives until the arena is dropped;
            // `Rare`'s fields are only read through a borrow of a record, which borrows the
            // arena, so the `'static` never outlives it.
            n.map(|n| unsafe { &*(self.name(n) as *const String) })
        };
        let (op, timing) = (name(op), name(timing));
        let address = |n: Option<&String>| n.map_or(0, |n| n as *const String as usize);
        let key = (address(op), address(timing), hi);
        let mut rares = self.rares.lock().unwrap_or_else(PoisonError::into_inner);
        let at = *rares
            .entry(key)
            .or_insert_with(|| NonNull::from(Box::leak(Box::new(Rare { op, timing, hi }))));
        // SAFETY: as in `source`.
        unsafe { at.as_ref() }
    }

    /// How many sources the arena holds (for tests).
    pub fn sources(&self) -> usize {
        self.sources
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let sources = self
            .sources
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for at in sources.drain(..) {
            // SAFETY: each pointer is a leaked box, freed once, here; `&mut self` means no
            // borrow of the arena (and so no record) is left.
            drop(unsafe { Box::from_raw(at.as_ptr()) });
        }
        let rares = self.rares.get_mut().unwrap_or_else(PoisonError::into_inner);
        for (_, at) in rares.drain() {
            // SAFETY: as above.
            drop(unsafe { Box::from_raw(at.as_ptr()) });
        }
        let names = self.names.get_mut().unwrap_or_else(PoisonError::into_inner);
        for (_, at) in names.drain() {
            // SAFETY: as above.
            drop(unsafe { Box::from_raw(at.as_ptr()) });
        }
    }
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arena")
            .field("sources", &self.sources())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::inspector::record::Origin;
    use std::path::PathBuf;
    use std::sync::Arc;

    #[test]
    fn what_is_handed_out_stays_put_while_more_is_added_and_names_are_kept_once() {
        let arena = Arena::new();
        let source = |rank| Source {
            file: Arc::new(PathBuf::from("f.log")),
            origin: Origin::Json,
            comm_id: "0xa".into(),
            comm_name: None,
            rank: Some(rank),
            nranks: 8,
            nnodes: None,
            host: None,
            pid: None,
            gpu: None,
            algo_proto: None,
            format_version: None,
        };
        let first = arena.source(source(0));
        let name = arena.name("SendRecv");
        let more: Vec<&Source> = (1..5000).map(|r| arena.source(source(r))).collect();
        let names: Vec<&String> = (0..5000).map(|i| arena.name(&format!("n{i}"))).collect();
        assert_eq!(first.rank, Some(0));
        assert_eq!(more[4998].rank, Some(4999));
        assert_eq!(name, "SendRecv");
        assert!(std::ptr::eq(name, arena.name("SendRecv")));
        assert_eq!(names[17], "n17");
        assert_eq!(arena.sources(), 5000);
        let rare = arena.rare(Some("SendRecv"), None, Some(8));
        assert!(std::ptr::eq(
            rare,
            arena.rare(Some("SendRecv"), None, Some(8))
        ));
        assert!(!std::ptr::eq(
            rare,
            arena.rare(Some("SendRecv"), None, Some(9))
        ));
        assert!(std::ptr::eq(rare.op.unwrap(), name));
        assert_eq!((rare.timing, rare.hi), (None, Some(8)));
    }
}
