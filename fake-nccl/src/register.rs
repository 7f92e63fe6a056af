//! Buffer registration (`ncclCommRegister`, `ncclCommWindowRegister`) and NCCL's allocator
//! (`ncclMemAlloc`/`ncclMemFree`). Registration checks the range lies in one device
//! allocation of the comm's device and keeps a count per comm; the handles are opaque. From
//! NCCL 2.28 a window registered inside a group gets its handle at the group's end, so a
//! caller that reads it earlier holds NULL; deregistering NULL or an unknown handle is
//! ncclInvalidArgument here (the real library may return success and leak the window).
//! `ncclMemFree` of memory still registered is ncclInvalidUsage, and its trace line says how
//! many communicators were still alive on the memory's device (nccl-tests destroys them first).

use std::ffi::{c_int, c_void};

use crate::memory::AllocKind;
use crate::nccl_api::need_version;
use crate::state::*;

#[allow(clippy::too_many_arguments)]
fn register(
    name: &str,
    min: i32,
    comm: *mut c_void,
    buff: *mut c_void,
    size: usize,
    out: *mut *mut c_void,
    window: bool,
    flags: c_int,
) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let id = st.comm_id(comm)?;
        let c = &st.comms[&id];
        let (rank, device) = (c.rank, c.device);
        let mut fields = vec![
            ("rank", rank.to_string()),
            ("nranks", c.nranks.to_string()),
            ("dev", device.to_string()),
        ];
        fields.extend([
            ("buff", st.describe_ptr(buff as usize as u64)),
            ("size", size.to_string()),
        ]);
        if window {
            fields.push(("flags", flags.to_string()));
        }
        fields.push(("group", crate::group::depth().to_string()));
        crate::trace::line(name, &fields);
        need_version(min, name)?;
        let p = buff as usize as u64;
        let base = match st.alloc_holding(p, size) {
            Some(a) if a.kind == AllocKind::Device && a.device == device && size > 0 => a.base,
            _ => return nccl_err(NCCL_INVALID_ARGUMENT, format!("{name}: rank {rank}: [{p:#x}, +{size}) is not inside one device allocation of device {device}")),
        };
        if out.is_null() {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("{name}: handle out-pointer is NULL"),
            );
        }
        let h = st.fresh_id();
        st.registrations.insert(h, (id, window));
        st.registered_allocs.insert(h, base);
        let c = st.comms.get_mut(&id).expect("resolved");
        if window {
            c.windows += 1;
        } else {
            c.registered += 1;
        }
        if window && crate::group::depth() > 0 && crate::config::nccl_version() >= 22800 {
            crate::group::write_at_end(out, handle(TAG_REG, h));
        } else {
            // SAFETY: checked non-NULL.
            unsafe { out.write(handle(TAG_REG, h)) };
        }
        Ok(())
    })
}

fn deregister(name: &str, comm: *mut c_void, h: *mut c_void, window: bool) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let id = st.comm_id(comm);
        if let Ok(id) = &id {
            let c = &st.comms[id];
            let live =
                unhandle(TAG_REG, h).filter(|k| st.registrations.get(k) == Some(&(*id, window)));
            let fields = vec![
                ("rank", c.rank.to_string()),
                ("nranks", c.nranks.to_string()),
                ("dev", c.device.to_string()),
                (
                    "handle",
                    if h.is_null() {
                        "null".into()
                    } else {
                        format!("{:#x}", h as usize)
                    },
                ),
                ("live", u8::from(live.is_some()).to_string()),
                ("group", crate::group::depth().to_string()),
            ];
            crate::trace::line(name, &fields);
        }
        let id = id?;
        let key = unhandle(TAG_REG, h).filter(|k| st.registrations.get(k) == Some(&(id, window)));
        let Some(key) = key else {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("{name}: not a live registration of this comm"),
            );
        };
        st.registrations.remove(&key);
        st.registered_allocs.remove(&key);
        let c = st.comms.get_mut(&id).expect("resolved");
        if window {
            c.windows -= 1;
        } else {
            c.registered -= 1;
        }
        Ok(())
    })
}

/// `ncclCommRegister(comm, buff, size, void** handle)` (2.19+).
#[no_mangle]
pub extern "C" fn ncclCommRegister(
    comm: *mut c_void,
    buff: *mut c_void,
    size: usize,
    h: *mut *mut c_void,
) -> NcclResult {
    register("ncclCommRegister", 21900, comm, buff, size, h, false, 0)
}

/// `ncclCommDeregister(comm, void* handle)`.
#[no_mangle]
pub extern "C" fn ncclCommDeregister(comm: *mut c_void, h: *mut c_void) -> NcclResult {
    deregister("ncclCommDeregister", comm, h, false)
}

/// `ncclCommWindowRegister(comm, buff, size, ncclWindow_t*, int flags)` (2.27+).
#[no_mangle]
pub extern "C" fn ncclCommWindowRegister(
    comm: *mut c_void,
    buff: *mut c_void,
    size: usize,
    win: *mut *mut c_void,
    flags: c_int,
) -> NcclResult {
    register(
        "ncclCommWindowRegister",
        22700,
        comm,
        buff,
        size,
        win,
        true,
        flags,
    )
}

/// `ncclCommWindowDeregister(comm, ncclWindow_t)`.
#[no_mangle]
pub extern "C" fn ncclCommWindowDeregister(comm: *mut c_void, win: *mut c_void) -> NcclResult {
    deregister("ncclCommWindowDeregister", comm, win, true)
}

/// `ncclMemAlloc(void**, size_t)` (2.19+): device memory of the current device.
#[no_mangle]
pub unsafe extern "C" fn ncclMemAlloc(ptr: *mut *mut c_void, size: usize) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let dev = crate::cuda_api::current_device_opt(&st);
        let fields = vec![
            ("dev", dev.map_or("-1".into(), |d| d.to_string())),
            ("size", size.to_string()),
        ];
        crate::trace::line("ncclMemAlloc", &fields);
        need_version(21900, "ncclMemAlloc")?;
        let Some(dev) = dev else {
            return nccl_err(
                NCCL_UNHANDLED_CUDA_ERROR,
                "ncclMemAlloc: no current CUDA context",
            );
        };
        if ptr.is_null() || size == 0 {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                "ncclMemAlloc: NULL out-pointer or size 0",
            );
        }
        match st.allocate(AllocKind::Device, dev, size) {
            Ok(base) => {
                ptr.write(base as usize as *mut c_void);
                Ok(())
            }
            Err(code) => nccl_err(
                NCCL_UNHANDLED_CUDA_ERROR,
                format!("ncclMemAlloc: cuMemAlloc failed with {code}"),
            ),
        }
    })
}

/// `ncclMemFree(void*)`: NULL is a no-op; memory still registered is refused.
#[no_mangle]
pub extern "C" fn ncclMemFree(ptr: *mut c_void) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let base = ptr as usize as u64;
        let dev = st.alloc_at(base).map(|a| a.device);
        let live = |d: usize| st.comms.values().filter(|c| c.device == d).count();
        let fields = vec![
            ("dev", dev.map_or("-1".into(), |d| d.to_string())),
            ("ptr", st.describe_ptr(base)),
            ("live_comms", dev.map_or(0, live).to_string()),
            ("registered", st.registered_users(base).to_string()),
        ];
        crate::trace::line("ncclMemFree", &fields);
        if ptr.is_null() {
            return Ok(());
        }
        if st.registered_users(base) > 0 {
            return nccl_err(
                NCCL_INVALID_USAGE,
                "ncclMemFree: the buffer is still registered with a communicator",
            );
        }
        st.free(AllocKind::Device, ptr as usize as u64)
            .or_else(|_| {
                nccl_err(
                    NCCL_INVALID_ARGUMENT,
                    "ncclMemFree: not an allocation's base address",
                )
            })
    })
}
