//! The sources of one piece's records, each allocated once (in the read's [`Arena`]): a file
//! holds millions of records from a handful of communicators in one process, so each record
//! borrows a shared [`Source`] rather than holding its own strings. The interner also hands
//! out the arena for names outside the known ones.
//!
//! The last source given is tried first, because consecutive records mostly repeat it;
//! anything else is looked up by a hash of its fields.

use crate::analysis::inspector::record::{Origin, Source};
use crate::analysis::inspector::Arena;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

/// A source's fields as read, borrowed from the record's text.
pub(super) struct Probe<'a> {
    pub(super) file: &'a Arc<PathBuf>,
    pub(super) origin: Origin,
    pub(super) comm_id: &'a str,
    pub(super) comm_name: Option<&'a str>,
    pub(super) rank: Option<u32>,
    pub(super) nranks: u32,
    pub(super) nnodes: Option<u32>,
    pub(super) host: Option<&'a str>,
    pub(super) pid: Option<u32>,
    pub(super) format_version: Option<&'a str>,
}

impl Probe<'_> {
    /// Whether `s` holds exactly these fields (and no GPU or algorithm, which JSON records do
    /// not write).
    fn is(&self, s: &Source) -> bool {
        (Arc::ptr_eq(self.file, &s.file) || *self.file == s.file)
            && self.origin == s.origin
            && self.comm_id == s.comm_id
            && self.comm_name == s.comm_name.as_deref()
            && self.rank == s.rank
            && self.nranks == s.nranks
            && self.nnodes == s.nnodes
            && self.host == s.host.as_deref()
            && self.pid == s.pid
            && self.format_version == s.format_version.as_deref()
            && s.gpu.is_none()
            && s.algo_proto.is_none()
    }

    fn hash(&self) -> u64 {
        let mut h = FxHasher::default();
        (self.comm_id, self.comm_name, self.rank, self.nranks).hash(&mut h);
        (self.nnodes, self.host, self.pid, self.format_version).hash(&mut h);
        h.finish()
    }

    fn source(&self) -> Source {
        Source {
            file: Arc::clone(self.file),
            origin: self.origin.clone(),
            comm_id: self.comm_id.to_string(),
            comm_name: self.comm_name.map(str::to_string),
            rank: self.rank,
            nranks: self.nranks,
            nnodes: self.nnodes,
            host: self.host.map(str::to_string),
            pid: self.pid,
            gpu: None,
            algo_proto: None,
            format_version: self.format_version.map(str::to_string),
        }
    }
}

/// One piece's shared sources.
pub(super) struct Interner<'a> {
    pub(super) arena: &'a Arena,
    last: Option<&'a Source>,
    all: FxHashMap<u64, Vec<&'a Source>>,
}

impl<'a> Interner<'a> {
    /// An interner of no sources yet, keeping them in `arena`.
    pub(super) fn new(arena: &'a Arena) -> Self {
        Self {
            arena,
            last: None,
            all: FxHashMap::default(),
        }
    }

    /// The shared source holding `probe`'s fields.
    pub(super) fn get(&mut self, probe: &Probe<'_>) -> &'a Source {
        if let Some(last) = self.last {
            if probe.is(last) {
                return last;
            }
        }
        let bucket = self.all.entry(probe.hash()).or_default();
        let shared = match bucket.iter().find(|s| probe.is(s)) {
            Some(s) => *s,
            None => {
                let s = self.arena.source(probe.source());
                bucket.push(s);
                s
            }
        };
        self.last = Some(shared);
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_sources_share_one_allocation_and_any_field_tells_them_apart() {
        let file = Arc::new(PathBuf::from("f.log"));
        let probe = |comm_id, rank, host| Probe {
            file: &file,
            origin: Origin::Json,
            comm_id,
            comm_name: Some("DP"),
            rank,
            nranks: 8,
            nnodes: Some(1),
            host,
            pid: Some(7),
            format_version: Some("v4.0"),
        };
        let arena = Arena::new();
        let mut i = Interner::new(&arena);
        let a = i.get(&probe("0xa", Some(1), Some("h1")));
        let b = i.get(&probe("0xb", Some(1), Some("h1")));
        let c = i.get(&probe("0xa", Some(2), Some("h1")));
        let d = i.get(&probe("0xa", Some(1), None));
        let e = i.get(&probe("0xa", Some(1), Some("h1")));
        assert!(std::ptr::eq(a, e));
        for other in [b, c, d] {
            assert!(!std::ptr::eq(a, other) && *other != *a);
        }
        assert_eq!(
            (&*b.comm_id, c.rank, d.host.as_deref()),
            ("0xb", Some(2), None)
        );
        assert_eq!(*a, probe("0xa", Some(1), Some("h1")).source());
    }
}
