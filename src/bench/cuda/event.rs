//! CUDA events for per-iteration timing ([`Event`]) and graph capture and replay on a stream
//! ([`Graph`], [`GraphExec`]) for `-G`.

use std::ffi::c_float;

use super::api::{
    CUevent, CUgraph, CUgraphExec, GraphInstantiate, CUDA_ERROR_NOT_READY, CU_EVENT_DEFAULT,
    CU_EVENT_DISABLE_TIMING, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
};
use super::{Context, CudaError, Stream};

/// An event of one context, destroyed on drop.
#[derive(Debug)]
pub struct Event {
    context: Context,
    raw: CUevent,
}

// SAFETY: a CUevent may be recorded, queried and destroyed from any thread.
unsafe impl Send for Event {}
// SAFETY: as above; `Event` has no interior mutability of its own.
unsafe impl Sync for Event {}

impl Event {
    /// Creates an event; `timing` false makes one for ordering only (cheaper to record).
    pub fn new(context: &Context, timing: bool) -> Result<Self, CudaError> {
        context.set_current()?;
        let flags = if timing {
            CU_EVENT_DEFAULT
        } else {
            CU_EVENT_DISABLE_TIMING
        };
        let mut raw: CUevent = std::ptr::null_mut();
        // SAFETY: a valid out-pointer, with the context current.
        let code = unsafe { (context.driver().api().event_create)(&mut raw, flags) };
        context.driver().check("cuEventCreate", code)?;
        Ok(Self {
            context: context.clone(),
            raw,
        })
    }

    /// Queues the event on `stream`: it completes when the work queued before it has.
    pub fn record(&self, stream: &Stream) -> Result<(), CudaError> {
        self.context.set_current()?;
        // SAFETY: a live event and stream (the legacy NULL stream uses the current context).
        let code = unsafe { (self.context.driver().api().event_record)(self.raw, stream.raw()) };
        self.context.driver().check("cuEventRecord", code)
    }

    /// Whether the recorded work has completed, without blocking.
    pub fn is_complete(&self) -> Result<bool, CudaError> {
        // SAFETY: a live event.
        let code = unsafe { (self.context.driver().api().event_query)(self.raw) };
        if code == CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        self.context.driver().check("cuEventQuery", code)?;
        Ok(true)
    }

    /// Milliseconds from `start` to `end`, both recorded, completed timing events.
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32, CudaError> {
        let mut ms: c_float = 0.0;
        // SAFETY: a valid out-pointer and two live events.
        let code = unsafe {
            (start.context.driver().api().event_elapsed_time)(&mut ms, start.raw, end.raw)
        };
        start.context.driver().check("cuEventElapsedTime", code)?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: an event this value created and nobody else destroys. A failure cannot be
        // reported from drop.
        let _ = unsafe { (self.context.driver().api().event_destroy)(self.raw) };
    }
}

impl Stream {
    /// Starts capturing the work this thread queues on the stream into a graph (thread-local
    /// mode: other threads' CUDA calls do not disturb it). End it with [`Stream::end_capture`].
    pub fn begin_capture(&self) -> Result<(), CudaError> {
        self.context().set_current()?;
        let api = self.context().driver().api();
        // SAFETY: a live stream; the driver refuses the legacy stream and nested captures.
        let code =
            unsafe { (api.stream_begin_capture)(self.raw(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) };
        self.context()
            .driver()
            .check("cuStreamBeginCapture_v2", code)
    }

    /// Ends the capture begun with [`Stream::begin_capture`], returning what was captured. A
    /// capture invalidated by a disallowed call fails here and leaves the stream usable.
    pub fn end_capture(&self) -> Result<Graph, CudaError> {
        self.context().set_current()?;
        let mut raw: CUgraph = std::ptr::null_mut();
        // SAFETY: a live stream and a valid out-pointer.
        let code =
            unsafe { (self.context().driver().api().stream_end_capture)(self.raw(), &mut raw) };
        self.context().driver().check("cuStreamEndCapture", code)?;
        Ok(Graph {
            context: self.context().clone(),
            raw,
        })
    }
}

/// A captured graph, destroyed on drop; instantiate it to launch it.
#[derive(Debug)]
pub struct Graph {
    context: Context,
    raw: CUgraph,
}

// SAFETY: a graph may be moved to and used from another thread; it is not `Sync` because the
// driver does not synchronise concurrent calls on one graph.
unsafe impl Send for Graph {}

impl Graph {
    /// Makes an executable graph, with whichever instantiation entry point the driver has.
    pub fn instantiate(&self) -> Result<GraphExec, CudaError> {
        self.context.set_current()?;
        let driver = self.context.driver();
        let mut exec: CUgraphExec = std::ptr::null_mut();
        // SAFETY: a live graph and a valid out-pointer; the legacy form is given no error-node
        // or log buffer (NULL, 0), which it accepts.
        let (call, code) = unsafe {
            match driver.api().graph_instantiate {
                GraphInstantiate::WithFlags(f) => {
                    ("cuGraphInstantiateWithFlags", f(&mut exec, self.raw, 0))
                }
                GraphInstantiate::Legacy(f, name) => (
                    name,
                    f(
                        &mut exec,
                        self.raw,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        0,
                    ),
                ),
            }
        };
        driver.check(call, code)?;
        Ok(GraphExec {
            context: self.context.clone(),
            raw: exec,
        })
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: a graph this value owns; executable graphs made from it are independent.
        let _ = unsafe { (self.context.driver().api().graph_destroy)(self.raw) };
    }
}

/// An executable graph, destroyed on drop.
#[derive(Debug)]
pub struct GraphExec {
    context: Context,
    raw: CUgraphExec,
}

// SAFETY: as for [`Graph`].
unsafe impl Send for GraphExec {}

impl GraphExec {
    /// Queues one replay of the graph on `stream`.
    pub fn launch(&self, stream: &Stream) -> Result<(), CudaError> {
        self.context.set_current()?;
        // SAFETY: a live executable graph and stream.
        let code = unsafe { (self.context.driver().api().graph_launch)(self.raw, stream.raw()) };
        self.context.driver().check("cuGraphLaunch", code)
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        // SAFETY: an executable graph this value owns; launches already queued still run.
        let _ = unsafe { (self.context.driver().api().graph_exec_destroy)(self.raw) };
    }
}
