//! NCCL's management calls: version, unique ids, communicator life cycle, errors and queries
//! (creation is in [`crate::init`], PreMulSum ops in [`crate::premulsum`]). Every call goes
//! through [`nccl_guard`], which records a failure's text as the thread's last error
//! (`ncclGetLastError`).

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CString};

use crate::comm::UID_BYTES;
use crate::config::{nccl_version, split_version};
use crate::state::*;

/// `ncclUniqueId`, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct UniqueId {
    pub internal: [c_char; UID_BYTES],
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Sets the calling thread's `ncclGetLastError` text.
pub fn set_last_error(text: &str) {
    let c = CString::new(text.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// ncclInvalidUsage unless the impersonated version is at least `min`.
pub fn need_version(min: i32, what: &str) -> Result<(), NcclError> {
    let v = nccl_version();
    if v >= min {
        return Ok(());
    }
    let ((a, b, c), (x, y, z)) = (split_version(min), split_version(v));
    nccl_err(
        NCCL_INVALID_USAGE,
        format!("{what} needs NCCL {a}.{b}.{c} or newer; this is NCCL {x}.{y}.{z}"),
    )
}

/// ncclInvalidArgument for a dtype code this version does not have.
pub fn check_dtype(dtype: u32) -> Result<(), NcclError> {
    let min = match dtype {
        0..=8 => 0,
        9 => 21000,
        10 | 11 => 22400,
        _ => return nccl_err(NCCL_INVALID_ARGUMENT, format!("invalid data type {dtype}")),
    };
    need_version(min, &format!("data type {dtype}")).map_err(|e| NcclError {
        code: NCCL_INVALID_ARGUMENT,
        ..e
    })
}

pub fn comm_fields(st: &State, id: u64) -> Vec<(&'static str, String)> {
    let c = &st.comms[&id];
    vec![
        ("rank", c.rank.to_string()),
        ("nranks", c.nranks.to_string()),
        ("dev", c.device.to_string()),
    ]
}

/// `ncclGetVersion(int*)`: `FAKE_NCCL_VERSION`.
#[no_mangle]
pub unsafe extern "C" fn ncclGetVersion(version: *mut c_int) -> NcclResult {
    nccl_guard(|| {
        put(
            version,
            nccl_version(),
            NcclError {
                code: NCCL_INVALID_ARGUMENT,
                message: "version is NULL".into(),
            },
        )
    })
}

/// `ncclGetUniqueId(ncclUniqueId*)`.
#[no_mangle]
pub unsafe extern "C" fn ncclGetUniqueId(out: *mut UniqueId) -> NcclResult {
    nccl_guard(|| {
        let id = crate::comm::unique_id_at(&crate::rendezvous::fresh())?.map(|b| b as c_char);
        put(
            out,
            UniqueId { internal: id },
            NcclError {
                code: NCCL_INVALID_ARGUMENT,
                message: "uniqueId is NULL".into(),
            },
        )
    })
}

fn lifecycle(
    name: &str,
    comm: *mut c_void,
    f: impl FnOnce(&mut State, u64) -> Result<(), NcclError>,
) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let id = st.comm_id(comm);
        if let Ok(id) = id {
            crate::trace::line(name, &with_group(comm_fields(&st, id)));
        }
        f(&mut st, id?)
    })
}

/// `ncclCommFinalize(ncclComm_t)`: flushes; later calls on the comm are refused.
#[no_mangle]
pub extern "C" fn ncclCommFinalize(comm: *mut c_void) -> NcclResult {
    lifecycle("ncclCommFinalize", comm, |st, id| {
        // Finalizing flushes work through CUDA calls that fail on a poisoned context.
        if crate::sticky::poisoned().is_err() {
            return nccl_err(
                NCCL_UNHANDLED_CUDA_ERROR,
                "Cuda failure 719 'unspecified launch failure' (poisoned context)",
            );
        }
        crate::engine::progress(st);
        st.comms.get_mut(&id).expect("resolved").finalized = true;
        Ok(())
    })
}

/// `ncclCommDestroy(ncclComm_t)`: ops still pending are dropped.
#[no_mangle]
pub extern "C" fn ncclCommDestroy(comm: *mut c_void) -> NcclResult {
    let code = lifecycle("ncclCommDestroy", comm, |st, id| {
        crate::engine::progress(st);
        crate::debuglog::on_destroy(st, id, "Destroy");
        st.leave(id);
        crate::engine::progress(st);
        Ok(())
    });
    departed();
    code
}

/// After a rank left: wakes this process's waits and sends what other processes must hear
/// (results, the departure) before the caller may exit.
fn departed() {
    wake();
    crate::link::flush(std::time::Duration::from_secs(5));
}

/// `ncclCommAbort(ncclComm_t)`: drops the comm's pending ops so its streams drain.
#[no_mangle]
pub extern "C" fn ncclCommAbort(comm: *mut c_void) -> NcclResult {
    let code = lifecycle("ncclCommAbort", comm, |st, id| {
        crate::debuglog::on_destroy(st, id, "Abort");
        st.leave(id);
        crate::engine::progress(st);
        Ok(())
    });
    departed();
    code
}

/// `ncclCommGetAsyncError(ncclComm_t, ncclResult_t*)`.
#[no_mangle]
pub unsafe extern "C" fn ncclCommGetAsyncError(
    comm: *mut c_void,
    err: *mut NcclResult,
) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let id = st.comm_id(comm)?;
        crate::engine::progress(&mut st);
        let v = st.comms[&id].async_error;
        put(
            err,
            v,
            NcclError {
                code: NCCL_INVALID_ARGUMENT,
                message: "asyncError is NULL".into(),
            },
        )
    })
}

/// `ncclGetErrorString(ncclResult_t)`: NCCL's texts.
#[no_mangle]
pub extern "C" fn ncclGetErrorString(code: NcclResult) -> *const c_char {
    let text = match code {
        0 => c"no error",
        1 => c"unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
        2 => c"unhandled system error (run with NCCL_DEBUG=INFO for details)",
        3 => c"internal error - please report this issue to the NCCL developers",
        4 => c"invalid argument (run with NCCL_DEBUG=WARN for details)",
        5 => c"invalid usage (run with NCCL_DEBUG=WARN for details)",
        6 => c"remote process exited or there was a network error",
        7 => c"NCCL operation in progress",
        8 => c"NCCL operation timed out",
        _ => c"unknown result code",
    };
    text.as_ptr()
}

/// `ncclGetLastError(ncclComm_t)`: the calling thread's last error text (any comm, or NULL).
#[no_mangle]
pub extern "C" fn ncclGetLastError(_comm: *mut c_void) -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

fn query(
    comm: *mut c_void,
    out: *mut c_int,
    f: impl FnOnce(&crate::comm::Comm) -> usize,
) -> NcclResult {
    nccl_guard(|| {
        let st = state();
        let id = st.comm_id(comm)?;
        let v = f(&st.comms[&id]) as c_int;
        // SAFETY: NULL is refused by `put`; otherwise the caller's int.
        unsafe {
            put(
                out,
                v,
                NcclError {
                    code: NCCL_INVALID_ARGUMENT,
                    message: "out-pointer is NULL".into(),
                },
            )
        }
    })
}

/// `ncclCommCount(ncclComm_t, int*)`.
#[no_mangle]
pub extern "C" fn ncclCommCount(comm: *mut c_void, count: *mut c_int) -> NcclResult {
    query(comm, count, |c| c.nranks)
}

/// `ncclCommCuDevice(ncclComm_t, int*)`.
#[no_mangle]
pub extern "C" fn ncclCommCuDevice(comm: *mut c_void, device: *mut c_int) -> NcclResult {
    query(comm, device, |c| c.device)
}

/// `ncclCommUserRank(ncclComm_t, int*)`.
#[no_mangle]
pub extern "C" fn ncclCommUserRank(comm: *mut c_void, rank: *mut c_int) -> NcclResult {
    query(comm, rank, |c| c.rank)
}

/// `fields` plus the caller's group depth.
pub fn with_group(mut fields: Vec<(&'static str, String)>) -> Vec<(&'static str, String)> {
    fields.push(("group", crate::group::depth().to_string()));
    fields
}
