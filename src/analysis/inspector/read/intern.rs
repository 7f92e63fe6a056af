//! The strings of one piece's records, each allocated once: a file names a handful of
//! communicators, one host and one format version over millions of records, so each record's
//! strings are clones of a shared [`Arc<str>`] (a count increment) rather than allocations.
//!
//! Each field remembers the last string it was given, because consecutive records mostly
//! repeat it; anything else is looked up in one set for the piece.

use rustc_hash::FxHashSet;
use std::sync::Arc;

/// The fields whose strings are shared.
#[derive(Clone, Copy)]
pub(super) enum Field {
    CommId = 0,
    CommName = 1,
    Host = 2,
    Version = 3,
}

/// One piece's shared strings.
#[derive(Default)]
pub(super) struct Interner {
    last: [Option<Arc<str>>; 4],
    all: FxHashSet<Arc<str>>,
}

impl Interner {
    /// `text` as a shared string.
    pub(super) fn get(&mut self, field: Field, text: &str) -> Arc<str> {
        let slot = &mut self.last[field as usize];
        if let Some(last) = slot {
            if **last == *text {
                return Arc::clone(last);
            }
        }
        let shared = match self.all.get(text) {
            Some(s) => Arc::clone(s),
            None => {
                let s: Arc<str> = Arc::from(text);
                self.all.insert(Arc::clone(&s));
                s
            }
        };
        *slot = Some(Arc::clone(&shared));
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_strings_share_one_allocation_whatever_the_field() {
        let mut i = Interner::default();
        let a = i.get(Field::CommId, "0xabc");
        let b = i.get(Field::Host, "h1");
        let c = i.get(Field::CommId, "0xdef");
        let d = i.get(Field::CommId, "0xabc");
        let e = i.get(Field::CommName, "0xabc");
        assert!(Arc::ptr_eq(&a, &d) && Arc::ptr_eq(&a, &e));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!((&*b, &*c), ("h1", "0xdef"));
    }
}
