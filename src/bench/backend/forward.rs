//! [`Forward`]: a backend wrapper that changes a few calls and passes every other one to the
//! backend it wraps. Wrappers (the MPI job's hang tracker, the tests' fault injector) each
//! spelled out every [`Backend`] method by hand; with this trait they name only what they
//! change, and a method added to [`Backend`] is forwarded by every wrapper at once instead of
//! silently falling back to the trait's default in one of them.

use super::{Backend, BackendInfo, Buf, Call, DeviceInfo, DeviceKernels, EventId, GraphId, Split};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use std::time::{Duration, Instant};

/// A wrapper around another backend: every method defaults to calling the same method of
/// [`Forward::inner_mut`] (or [`Forward::inner`]); a wrapper overrides the ones it changes.
/// Every `Forward` is a [`Backend`].
pub trait Forward {
    /// The wrapped backend.
    fn inner(&self) -> &dyn Backend;

    /// The wrapped backend, for the calls that change it.
    fn inner_mut(&mut self) -> &mut dyn Backend;

    /// [`Backend::info`].
    fn info(&self) -> &BackendInfo {
        self.inner().info()
    }

    /// [`Backend::devices`].
    fn devices(&self) -> Vec<DeviceInfo> {
        self.inner().devices()
    }

    /// [`Backend::supports`].
    fn supports(&self, dtype: DataType, op: RedOp) -> bool {
        self.inner().supports(dtype, op)
    }

    /// [`Backend::allocate`].
    fn allocate(&mut self, send_bytes: usize, recv_bytes: usize) -> Result<(), Error> {
        self.inner_mut().allocate(send_bytes, recv_bytes)
    }

    /// [`Backend::fill`].
    fn fill(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), Error> {
        self.inner_mut().fill(local, buf, offset, len, f)
    }

    /// [`Backend::inspect`].
    fn inspect(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(), Error> {
        self.inner_mut().inspect(local, buf, offset, len, f)
    }

    /// [`Backend::group_start`].
    fn group_start(&mut self) -> Result<(), Error> {
        self.inner_mut().group_start()
    }

    /// [`Backend::group_end`].
    fn group_end(&mut self) -> Result<(), Error> {
        self.inner_mut().group_end()
    }

    /// [`Backend::launch`].
    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        self.inner_mut().launch(call)
    }

    /// [`Backend::wait`].
    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        self.inner_mut().wait(deadline)
    }

    /// [`Backend::reserve_events`].
    fn reserve_events(&mut self, n: usize) -> Result<(), Error> {
        self.inner_mut().reserve_events(n)
    }

    /// [`Backend::record_event`].
    fn record_event(&mut self) -> Result<EventId, Error> {
        self.inner_mut().record_event()
    }

    /// [`Backend::event_elapsed`].
    fn event_elapsed(&mut self, start: EventId, end: EventId) -> Result<Duration, Error> {
        self.inner_mut().event_elapsed(start, end)
    }

    /// [`Backend::begin_capture`].
    fn begin_capture(&mut self) -> Result<(), Error> {
        self.inner_mut().begin_capture()
    }

    /// [`Backend::end_capture`].
    fn end_capture(&mut self) -> Result<GraphId, Error> {
        self.inner_mut().end_capture()
    }

    /// [`Backend::launch_graph`].
    fn launch_graph(&mut self, graph: GraphId) -> Result<(), Error> {
        self.inner_mut().launch_graph(graph)
    }

    /// [`Backend::destroy_graphs`].
    fn destroy_graphs(&mut self) -> Result<(), Error> {
        self.inner_mut().destroy_graphs()
    }

    /// [`Backend::hold`].
    fn hold(&mut self) -> Result<(), Error> {
        self.inner_mut().hold()
    }

    /// [`Backend::release`].
    fn release(&mut self) -> Result<bool, Error> {
        self.inner_mut().release()
    }

    /// [`Backend::release_events`].
    fn release_events(&mut self) -> Result<(), Error> {
        self.inner_mut().release_events()
    }

    /// [`Backend::memory_report`].
    fn memory_report(&mut self) -> Result<Option<String>, Error> {
        self.inner_mut().memory_report()
    }

    /// [`Backend::close`].
    fn close(&mut self) -> Result<(), Error> {
        self.inner_mut().close()
    }

    /// [`Backend::kernels`].
    fn kernels(&mut self) -> Option<&mut dyn DeviceKernels> {
        self.inner_mut().kernels()
    }

    /// [`Backend::split`].
    fn split(&mut self, colors: &[Option<usize>]) -> Result<Split, Error> {
        self.inner_mut().split(colors)
    }
}

// Spelled out once here so that no wrapper has to: each call goes to the wrapper's `Forward`
// method, which is the inner backend's unless the wrapper overrides it.
impl<T: Forward> Backend for T {
    fn info(&self) -> &BackendInfo {
        Forward::info(self)
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        Forward::devices(self)
    }
    fn supports(&self, dtype: DataType, op: RedOp) -> bool {
        Forward::supports(self, dtype, op)
    }
    fn allocate(&mut self, send_bytes: usize, recv_bytes: usize) -> Result<(), Error> {
        Forward::allocate(self, send_bytes, recv_bytes)
    }
    fn fill(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), Error> {
        Forward::fill(self, local, buf, offset, len, f)
    }
    fn inspect(
        &mut self,
        local: usize,
        buf: Buf,
        offset: usize,
        len: usize,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(), Error> {
        Forward::inspect(self, local, buf, offset, len, f)
    }
    fn group_start(&mut self) -> Result<(), Error> {
        Forward::group_start(self)
    }
    fn group_end(&mut self) -> Result<(), Error> {
        Forward::group_end(self)
    }
    fn launch(&mut self, call: &Call) -> Result<(), Error> {
        Forward::launch(self, call)
    }
    fn wait(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        Forward::wait(self, deadline)
    }
    fn reserve_events(&mut self, n: usize) -> Result<(), Error> {
        Forward::reserve_events(self, n)
    }
    fn record_event(&mut self) -> Result<EventId, Error> {
        Forward::record_event(self)
    }
    fn event_elapsed(&mut self, start: EventId, end: EventId) -> Result<Duration, Error> {
        Forward::event_elapsed(self, start, end)
    }
    fn begin_capture(&mut self) -> Result<(), Error> {
        Forward::begin_capture(self)
    }
    fn end_capture(&mut self) -> Result<GraphId, Error> {
        Forward::end_capture(self)
    }
    fn launch_graph(&mut self, graph: GraphId) -> Result<(), Error> {
        Forward::launch_graph(self, graph)
    }
    fn destroy_graphs(&mut self) -> Result<(), Error> {
        Forward::destroy_graphs(self)
    }
    fn hold(&mut self) -> Result<(), Error> {
        Forward::hold(self)
    }
    fn release(&mut self) -> Result<bool, Error> {
        Forward::release(self)
    }
    fn release_events(&mut self) -> Result<(), Error> {
        Forward::release_events(self)
    }
    fn memory_report(&mut self) -> Result<Option<String>, Error> {
        Forward::memory_report(self)
    }
    fn close(&mut self) -> Result<(), Error> {
        Forward::close(self)
    }
    fn kernels(&mut self) -> Option<&mut dyn DeviceKernels> {
        Forward::kernels(self)
    }
    fn split(&mut self, colors: &[Option<usize>]) -> Result<Split, Error> {
        Forward::split(self, colors)
    }
}
