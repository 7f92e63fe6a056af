//! `--timer device` on GPUs: each rank's stream waits (`cuStreamWaitValue32`) on a word of
//! pinned, device-mapped host memory until the host writes the gate's generation into it, so
//! the whole timed loop is queued before any of it runs and CUDA events around it measure the
//! device alone (the technique nvbandwidth uses). A watchdog thread opens the gate after
//! [`HOLD_LIMIT`] in case enqueueing blocks (a full launch queue), so nothing can hang.
//!
//! Where the driver or a device cannot run that wait ([`crate::bench::cuda::memops`]),
//! [`check_support`] refuses the run at open, in one line that says why.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::bench::backend::HOLD_LIMIT;
use crate::bench::cuda::api::{
    CUdeviceptr, CU_MEMHOSTALLOC_PORTABLE_DEVICEMAP, CU_STREAM_WAIT_VALUE_GEQ,
};
use crate::bench::cuda::{memops, Context, Driver, WaitValue32};
use crate::core::error::Error;
use crate::core::host::gethostname_short;

use super::error::cuda_err;

/// One rank's gate word.
struct Word {
    context: Context,
    host: *mut u32,
    device: CUdeviceptr,
}

/// The gate words of every local rank and the current hold.
#[derive(Default)]
pub(super) struct Gates {
    /// The wait entry point, chosen at the first hold.
    wait: Option<WaitValue32>,
    words: Vec<Word>,
    generation: u32,
    watchdog: Option<(Arc<AtomicBool>, Arc<AtomicBool>, JoinHandle<()>)>,
}

/// The host addresses the watchdog writes through (plain numbers, so they cross threads; the
/// memory outlives the thread, which `release` and `free` join first).
struct Addresses(Vec<usize>);

impl Gates {
    /// Queues a wait for the next generation on each stream; allocates the words on first use.
    pub(super) fn hold(
        &mut self,
        streams: &[(&Context, &crate::bench::cuda::Stream)],
    ) -> Result<(), Error> {
        self.release();
        let wait = match self.wait {
            Some(wait) => wait,
            None => {
                let contexts = streams
                    .iter()
                    .map(|(c, _)| (c.device().ordinal(), (*c).clone()));
                let contexts: BTreeMap<usize, Context> = contexts.collect();
                let driver = streams.first().map(|(c, _)| *c.driver());
                let Some(driver) = driver else {
                    return Ok(());
                };
                *self.wait.insert(check_support(&driver, &contexts)?)
            }
        };
        if self.words.is_empty() {
            for (context, _) in streams {
                self.words.push(alloc_word(context)?);
            }
        }
        self.generation = self.generation.wrapping_add(1);
        for (word, (_, stream)) in self.words.iter().zip(streams) {
            stream
                .wait_value32(wait, word.device, self.generation, CU_STREAM_WAIT_VALUE_GEQ)
                .map_err(cuda_err)?;
        }
        let done = Arc::new(AtomicBool::new(false));
        let expired = Arc::new(AtomicBool::new(false));
        let addresses = Addresses(self.words.iter().map(|w| w.host as usize).collect());
        let generation = self.generation;
        let (d, e) = (done.clone(), expired.clone());
        let thread = std::thread::Builder::new()
            .name("ncclbench-gate".into())
            .spawn(move || {
                let deadline = Instant::now() + HOLD_LIMIT;
                while !d.load(Ordering::Acquire) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                if !d.load(Ordering::Acquire) {
                    e.store(true, Ordering::Release);
                    write_all(&addresses, generation);
                }
            })
            .map_err(|e| Error::Backend(format!("cannot start the gate watchdog: {e}")))?;
        self.watchdog = Some((done, expired, thread));
        Ok(())
    }

    /// Opens the gate; `false` when the watchdog had opened it already.
    pub(super) fn release(&mut self) -> bool {
        let Some((done, expired, thread)) = self.watchdog.take() else {
            return true;
        };
        done.store(true, Ordering::Release);
        write_all(
            &Addresses(self.words.iter().map(|w| w.host as usize).collect()),
            self.generation,
        );
        let _ = thread.join();
        !expired.load(Ordering::Acquire)
    }

    /// Opens any hold and frees the words.
    pub(super) fn free(&mut self) {
        self.release();
        for w in self.words.drain(..) {
            if w.context.set_current().is_ok() {
                // SAFETY: memory from cuMemHostAlloc, freed once, no thread writes it anymore.
                let _ = unsafe { (w.context.driver().api().mem_free_host)(w.host.cast()) };
            }
        }
    }
}

impl Drop for Gates {
    fn drop(&mut self) {
        self.free();
    }
}

/// The wait entry point for the devices of `contexts`, or the one-line reason (exit 2) why
/// `--timer device` cannot run on them.
pub(super) fn check_support(
    driver: &Driver,
    contexts: &BTreeMap<usize, Context>,
) -> Result<WaitValue32, Error> {
    let devices: Vec<_> = contexts.values().map(|c| *c.device()).collect();
    memops::wait_value32(driver, &devices)
        .map_err(cuda_err)?
        .map_err(|why| {
            Error::Cuda(format!(
                "{}: --timer device cannot run: its gate needs cuStreamWaitValue32, but {why}",
                gethostname_short()
            ))
        })
}

fn write_all(addresses: &Addresses, generation: u32) {
    for &a in &addresses.0 {
        // SAFETY: a live, aligned pinned host word (see `Addresses`); volatile because the
        // device reads it behind the compiler's back.
        unsafe { std::ptr::write_volatile(a as *mut u32, generation) };
    }
}

/// One pinned, device-mapped word, zeroed, in `context`.
fn alloc_word(context: &Context) -> Result<Word, Error> {
    context.set_current().map_err(cuda_err)?;
    let api = context.driver().api();
    let mut host: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid out-pointer with the context current.
    let code = unsafe { (api.mem_host_alloc)(&mut host, 4, CU_MEMHOSTALLOC_PORTABLE_DEVICEMAP) };
    context
        .driver()
        .check("cuMemHostAlloc", code)
        .map_err(cuda_err)?;
    // SAFETY: 4 fresh bytes of pinned memory.
    unsafe { std::ptr::write_volatile(host as *mut u32, 0) };
    let mut device: CUdeviceptr = 0;
    // SAFETY: a host pointer returned by cuMemHostAlloc with DEVICEMAP.
    let code = unsafe { (api.mem_host_get_device_pointer)(&mut device, host, 0) };
    if let Err(e) = context.driver().check("cuMemHostGetDevicePointer_v2", code) {
        // SAFETY: freeing what was just allocated.
        let _ = unsafe { (api.mem_free_host)(host) };
        return Err(cuda_err(e));
    }
    Ok(Word {
        context: context.clone(),
        host: host.cast(),
        device,
    })
}
