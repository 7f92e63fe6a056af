//! The forwarding adapter over the host backend: a wrapper changes only what it overrides
//! (here, where a real backend is at hand, since bench/backend/ itself may not use host/).

use crate::bench::backend::forward::Forward;
use crate::bench::backend::host::HostBackend;
use crate::bench::backend::{Backend, Buf};
use crate::core::error::Error;
use std::time::Instant;

/// Counts the waits it passes on; everything else goes to the host backend untouched.
struct CountWaits {
    inner: HostBackend,
    waits: usize,
}

impl Forward for CountWaits {
    fn inner(&self) -> &dyn Backend {
        &self.inner
    }
    fn inner_mut(&mut self) -> &mut dyn Backend {
        &mut self.inner
    }
    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        self.waits += 1;
        self.inner.wait(deadline)
    }
}

#[test]
fn a_wrapper_changes_only_what_it_overrides() {
    let mut b = CountWaits {
        inner: HostBackend::new(2).unwrap(),
        waits: 0,
    };
    let backend: &mut dyn Backend = &mut b;
    assert_eq!(backend.info().nranks, 2);
    assert_eq!(backend.devices().len(), 2);
    backend.allocate(16, 16).unwrap();
    backend
        .fill(1, Buf::Send, 0, 4, &mut |b| b.fill(7))
        .unwrap();
    let mut seen = Vec::new();
    backend
        .inspect(1, Buf::Send, 0, 4, &mut |b| seen.extend_from_slice(b))
        .unwrap();
    assert_eq!(seen, [7; 4]);
    backend.wait(None).unwrap();
    backend.wait(None).unwrap();
    backend.close().unwrap();
    assert_eq!(b.waits, 2);
}
