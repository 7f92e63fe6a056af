//! The sources of one piece's records, each allocated once: a file holds millions of records
//! from a handful of communicators in one process, so each record shares an [`Arc`] of its
//! [`Source`] rather than holding its own strings; names outside the known ones (an unknown
//! function or timing source) are shared the same way.
//!
//! The last source given is tried first, because consecutive records mostly repeat it;
//! anything else is looked up by a hash of its fields. Each piece of a file has its own
//! interner (pieces are parsed in parallel): equal sources of two pieces are equal values in
//! two allocations.

use crate::analysis::inspector::record::{Origin, Source};
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

/// One piece's shared sources and names.
#[derive(Default)]
pub(super) struct Interner {
    last: Option<Arc<Source>>,
    all: FxHashMap<u64, Vec<Arc<Source>>>,
    names: FxHashMap<Box<str>, Arc<str>>,
}

impl Interner {
    /// The shared source holding `probe`'s fields.
    pub(super) fn get(&mut self, probe: &Probe<'_>) -> Arc<Source> {
        if let Some(last) = &self.last {
            if probe.is(last) {
                return Arc::clone(last);
            }
        }
        let bucket = self.all.entry(probe.hash()).or_default();
        let shared = match bucket.iter().find(|s| probe.is(s)) {
            Some(s) => Arc::clone(s),
            None => {
                let s = Arc::new(probe.source());
                bucket.push(Arc::clone(&s));
                s
            }
        };
        self.last = Some(Arc::clone(&shared));
        shared
    }

    /// The shared copy of `name`.
    pub(super) fn name(&mut self, name: &str) -> Arc<str> {
        if let Some(shared) = self.names.get(name) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = Arc::from(name);
        self.names.insert(name.into(), Arc::clone(&shared));
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
        let mut i = Interner::default();
        let a = i.get(&probe("0xa", Some(1), Some("h1")));
        let b = i.get(&probe("0xb", Some(1), Some("h1")));
        let c = i.get(&probe("0xa", Some(2), Some("h1")));
        let d = i.get(&probe("0xa", Some(1), None));
        let e = i.get(&probe("0xa", Some(1), Some("h1")));
        assert!(Arc::ptr_eq(&a, &e));
        for other in [&b, &c, &d] {
            assert!(!Arc::ptr_eq(&a, other) && **other != *a);
        }
        assert!(Arc::ptr_eq(&i.name("SendRecv"), &i.name("SendRecv")));
        assert_eq!(
            (&*b.comm_id, c.rank, d.host.as_deref()),
            ("0xb", Some(2), None)
        );
        assert_eq!(*a, probe("0xa", Some(1), Some("h1")).source());
    }
}
