//! Waiting for the local ranks' streams: poll each stream and its communicator's async error,
//! yield when nothing finished, and abort every communicator when an error appears or the
//! `-T` deadline passes (nccl-tests' `testStreamSynchronize`).

use std::time::Instant;

use nccl_sys::bindings::{ncclResult_t, ncclSuccess};

use super::error::cuda_err;
use super::NcclBackend;
use crate::core::error::Error;
use crate::core::host::gethostname_short;

impl NcclBackend {
    /// Blocks until every local stream is idle; see the module documentation.
    /// With no deadline, ranks sharing a GPU wait under the backend's own limit
    /// (`shared_gpu_wait`), which a timeout then names.
    pub(super) fn wait_all(&mut self, deadline: Option<Instant>) -> Result<(), Error> {
        let (deadline, limit_s) = match (deadline, self.shared_gpu_wait) {
            (None, Some(limit)) => (Some(Instant::now() + limit), limit.as_secs()),
            (deadline, _) => (deadline, 0),
        };
        // Kept from wait to wait: with -z each launch is waited for, inside the timed loop.
        let mut done = std::mem::take(&mut self.wait_done);
        done.clear();
        done.resize(self.ranks.len(), false);
        let result = self.poll(deadline, limit_s, &mut done);
        self.wait_done = done;
        result
    }

    /// Polls until every stream is idle (`done` marks those found so).
    fn poll(
        &mut self,
        deadline: Option<Instant>,
        limit_s: u64,
        done: &mut [bool],
    ) -> Result<(), Error> {
        loop {
            let mut progressed = false;
            for (i, r) in self.ranks.iter().enumerate() {
                if done[i] {
                    continue;
                }
                match r.stream.is_complete() {
                    Ok(true) => {
                        done[i] = true;
                        progressed = true;
                        continue;
                    }
                    Ok(false) => {}
                    Err(e) => {
                        // A stream that cannot be queried (a kernel fault poisons the whole
                        // context) leaves NCCL's work unfinishable: abort, never finalize.
                        self.abort();
                        return Err(cuda_err(e));
                    }
                }
                let mut async_err: ncclResult_t = ncclSuccess;
                // SAFETY: a live communicator and a valid out-pointer.
                let code =
                    unsafe { (self.nccl.api().ncclCommGetAsyncError)(r.comm, &mut async_err) };
                let failed = self
                    .nccl
                    .check("ncclCommGetAsyncError", code)
                    .and_then(|_| self.nccl.check("ncclCommGetAsyncError", async_err));
                if let Err(e) = failed {
                    let rank = r.global;
                    self.abort();
                    return Err(Error::Backend(format!(
                        "{}: NCCL failure on rank {rank} while waiting: {e}; communicators aborted",
                        gethostname_short()
                    )));
                }
            }
            if done.iter().all(|&d| d) {
                return Ok(());
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                let stuck: Vec<String> = self
                    .ranks
                    .iter()
                    .zip(done.iter())
                    .filter(|(_, &d)| !d)
                    .map(|(r, _)| r.global.to_string())
                    .collect();
                self.abort();
                return Err(Error::Timeout {
                    seconds: limit_s,
                    what: format!(
                        "rank(s) {} on {} (communicators aborted)",
                        stuck.join(","),
                        gethostname_short()
                    ),
                });
            }
            if !progressed {
                std::thread::yield_now();
            }
        }
    }
}
