//! `-R 1` and `-R 2`: registering each rank's two buffers with its communicator
//! (`ncclCommRegister`, or `ncclCommWindowRegister` symmetric windows, which are collective and
//! so made in one group), and undoing it before communicators are destroyed and buffers freed.
//! From NCCL 2.28 a window registered inside a group gets its handle only at `ncclGroupEnd`:
//! each call writes into a slot that lives past the group's end, and the windows are recorded
//! from the slots afterwards (a handle read right after the call is NULL, and deregistering
//! NULL leaks the window while the library reports success).

use super::error::{cuda_err, nccl_err};
use super::memory::Registration;
use super::NcclBackend;
use crate::core::error::Error;

impl NcclBackend {
    /// Undoes `-R` registrations (before buffers are freed or communicators destroyed).
    pub(super) fn deregister(&mut self) -> Result<(), Error> {
        for r in &mut self.ranks {
            for reg in r.registrations.drain(..) {
                match (reg, self.caps.register, self.caps.window) {
                    (Registration::Local(h), Some((_, dereg)), _) => {
                        // SAFETY: a handle ncclCommRegister returned for this communicator.
                        let code = unsafe { dereg(r.comm, h) };
                        self.nccl
                            .check("ncclCommDeregister", code)
                            .map_err(nccl_err)?;
                    }
                    (Registration::Window(w), _, Some((_, dereg))) => {
                        // SAFETY: a window ncclCommWindowRegister returned for this comm.
                        let code = unsafe { dereg(r.comm, w) };
                        self.nccl
                            .check("ncclCommWindowDeregister", code)
                            .map_err(nccl_err)?;
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// `-R 1`/`-R 2` over each rank's two buffers (windows are collective: one group).
    pub(super) fn register_buffers(&mut self) -> Result<(), Error> {
        let api = *self.nccl.api();
        let window = self.register == 2;
        if (self.register == 1 && self.caps.register.is_none())
            || (window && self.caps.window.is_none())
            || self.register == 0
        {
            return Ok(());
        }
        if window {
            // SAFETY: no arguments.
            self.nccl
                .check("ncclGroupStart", unsafe { (api.ncclGroupStart)() })
                .map_err(nccl_err)?;
        }
        // One window slot per buffer of every rank, alive until after ncclGroupEnd.
        let mut slots: Vec<[nccl_sys::bindings::ncclWindow_t; 2]> =
            vec![[std::ptr::null_mut(); 2]; self.ranks.len()];
        let mut result = Ok(());
        'ranks: for (r, slot) in self.ranks.iter_mut().zip(slots.iter_mut()) {
            r.context.set_current().map_err(cuda_err)?;
            for (mem, win) in [&r.send, &r.recv]
                .into_iter()
                .flatten()
                .zip(slot.iter_mut())
            {
                let ptr = mem.ptr() as *mut std::ffi::c_void;
                let reg = match (window, self.caps.register, self.caps.window) {
                    (false, Some((reg, _)), _) => {
                        let mut handle = std::ptr::null_mut();
                        // SAFETY: a live allocation of this rank's device and communicator.
                        let code = unsafe { reg(r.comm, ptr, mem.len(), &mut handle) };
                        self.nccl
                            .check("ncclCommRegister", code)
                            .map(|_| Some(Registration::Local(handle)))
                    }
                    (true, _, Some((reg, _))) => {
                        let flags = nccl_sys::bindings::NCCL_WIN_COLL_SYMMETRIC as i32;
                        // SAFETY: as above; every rank registers in the same group, and `win`
                        // outlives its end, where NCCL 2.28+ writes the handle.
                        let code = unsafe { reg(r.comm, ptr, mem.len(), win, flags) };
                        // Recorded from the slot after the group's end.
                        self.nccl
                            .check("ncclCommWindowRegister", code)
                            .map(|_| None)
                    }
                    _ => continue,
                };
                match reg {
                    Ok(Some(reg)) => r.registrations.push(reg),
                    Ok(None) => {}
                    Err(e) => {
                        result = Err(nccl_err(e));
                        break 'ranks;
                    }
                }
            }
        }
        if window {
            // SAFETY: closes the group above.
            let end = self
                .nccl
                .check("ncclGroupEnd", unsafe { (api.ncclGroupEnd)() })
                .map_err(nccl_err);
            // Every window made, even when another failed, so that each is deregistered.
            for (r, slot) in self.ranks.iter_mut().zip(slots) {
                let made = slot.into_iter().filter(|w| !w.is_null());
                r.registrations.extend(made.map(Registration::Window));
            }
            result.and(end)
        } else {
            result
        }
    }
}
