//! NCCL's management calls: version, unique ids, communicator life cycle, errors, PreMulSum
//! operators. Every call goes through [`nccl_guard`], which records a failure's text as the
//! thread's last error (`ncclGetLastError`).

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CString};

use crate::comm::{new_unique_id, PreMul, Scalar, UID_BYTES};
use crate::config::{nccl_version, split_version};
use crate::state::*;

/// `ncclUniqueId`, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct UniqueId {
    pub internal: [c_char; UID_BYTES],
}

/// The fields of `ncclConfig_t` this double reads (a prefix of every version's layout).
#[repr(C)]
struct ConfigPrefix {
    size: usize,
    magic: u32,
    version: u32,
    blocking: c_int,
    cga_cluster_size: c_int,
    min_ctas: c_int,
    max_ctas: c_int,
    net_name: *const c_char,
    split_share: c_int,
    traffic_class: c_int,
    comm_name: *const c_char,
    collnet_enable: c_int,
    cta_policy: c_int,
}

const UNDEF: c_int = i32::MIN;

impl ConfigPrefix {
    fn unset() -> ConfigPrefix {
        ConfigPrefix {
            size: 0,
            magic: 0,
            version: 0,
            blocking: UNDEF,
            cga_cluster_size: UNDEF,
            min_ctas: UNDEF,
            max_ctas: UNDEF,
            net_name: std::ptr::null(),
            split_share: UNDEF,
            traffic_class: UNDEF,
            comm_name: std::ptr::null(),
            collnet_enable: UNDEF,
            cta_policy: UNDEF,
        }
    }
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

fn comm_fields(st: &State, id: u64) -> Vec<(&'static str, String)> {
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
        let id = new_unique_id().map(|b| b as c_char);
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

fn init(
    name: &str,
    out: *mut *mut c_void,
    nranks: c_int,
    id: UniqueId,
    rank: c_int,
    config: Option<*const ConfigPrefix>,
) -> NcclResult {
    nccl_guard(|| {
        let mut cta = None;
        let mut fields = vec![("rank", rank.to_string()), ("nranks", nranks.to_string())];
        let mut st = state();
        st.initialized = true;
        let dev = crate::cuda_api::current_device_opt(&st);
        fields.push(("dev", dev.map_or("-1".into(), |d| d.to_string())));
        match config {
            Some(c) if !c.is_null() => {
                // SAFETY: the caller passes a config of at least `size` bytes; read the prefix.
                let size = unsafe { std::ptr::addr_of!((*c).size).read_unaligned() };
                // Copy the prefix the caller's `size` covers into an aligned, unset one.
                let mut pre = ConfigPrefix::unset();
                let n = size.min(std::mem::size_of::<ConfigPrefix>());
                // SAFETY: the caller's config has `size` bytes; `pre` has room for `n`.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        c as *const u8,
                        std::ptr::addr_of_mut!(pre) as *mut u8,
                        n,
                    )
                };
                let (magic, version, raw) = (pre.magic, pre.version, pre.cta_policy);
                fields.push((
                    "cta_policy",
                    if raw == UNDEF {
                        "undef".into()
                    } else {
                        raw.to_string()
                    },
                ));
                crate::trace::line(name, &with_group(fields));
                if size < 16 || magic != 0xcafe_beef || version < 21400 {
                    return nccl_err(NCCL_INVALID_ARGUMENT, format!("{name}: invalid config (size {size}, magic {magic:#x}, version {version})"));
                }
                if raw != UNDEF && !(0..=2).contains(&raw) {
                    return nccl_err(
                        NCCL_INVALID_ARGUMENT,
                        format!("{name}: invalid CTAPolicy {raw}"),
                    );
                }
                // Older libraries do not know the field and ignore it.
                cta = (raw != UNDEF && nccl_version() >= 22700).then_some(raw);
            }
            _ => {
                fields.push(("config", "none".into()));
                crate::trace::line(name, &with_group(fields));
            }
        }
        if config.is_some() {
            need_version(21400, name)?;
        }
        let Some(dev) = dev else {
            return nccl_err(
                NCCL_INVALID_USAGE,
                format!("{name}: no current CUDA context on this thread (cuCtxSetCurrent first)"),
            );
        };
        if out.is_null() {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("{name}: comm out-pointer is NULL"),
            );
        }
        let uid = id.internal.map(|b| b as u8);
        let comm = st.join(uid, nranks, rank, dev, cta)?;
        crate::debuglog::on_init(&st, comm, name);
        // SAFETY: checked non-NULL.
        unsafe { out.write(handle(TAG_COMM, comm)) };
        Ok(())
    })
}

fn with_group(mut fields: Vec<(&'static str, String)>) -> Vec<(&'static str, String)> {
    fields.push(("group", crate::group::depth().to_string()));
    fields
}

/// `ncclCommInitRank(ncclComm_t*, int nranks, ncclUniqueId, int rank)`.
#[no_mangle]
pub extern "C" fn ncclCommInitRank(
    comm: *mut *mut c_void,
    nranks: c_int,
    id: UniqueId,
    rank: c_int,
) -> NcclResult {
    init("ncclCommInitRank", comm, nranks, id, rank, None)
}

/// `ncclCommInitRankConfig(ncclComm_t*, int nranks, ncclUniqueId, int rank, ncclConfig_t*)`.
#[no_mangle]
pub extern "C" fn ncclCommInitRankConfig(
    comm: *mut *mut c_void,
    nranks: c_int,
    id: UniqueId,
    rank: c_int,
    config: *mut c_void,
) -> NcclResult {
    init(
        "ncclCommInitRankConfig",
        comm,
        nranks,
        id,
        rank,
        Some(config as *const ConfigPrefix),
    )
}

/// `ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist)`: one communicator of
/// `ndev` ranks owned by the calling thread.
#[no_mangle]
pub unsafe extern "C" fn ncclCommInitAll(
    comms: *mut *mut c_void,
    ndev: c_int,
    devlist: *const c_int,
) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        st.initialized = true;
        let n = usize::try_from(ndev).unwrap_or(0);
        let devs: Vec<i64> = (0..n)
            .map(|i| {
                if devlist.is_null() {
                    i as i64
                } else {
                    *devlist.add(i) as i64
                }
            })
            .collect();
        let list = devs
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        crate::trace::line(
            "ncclCommInitAll",
            &with_group(vec![
                ("ndev", ndev.to_string()),
                ("devs", list),
                ("config", "none".into()),
            ]),
        );
        if n == 0
            || comms.is_null()
            || devs
                .iter()
                .any(|&d| d < 0 || d as usize >= st.devices.len())
        {
            return nccl_err(
                NCCL_INVALID_ARGUMENT,
                "ncclCommInitAll: bad ndev, devlist or comms",
            );
        }
        let uid = new_unique_id();
        for (r, &d) in devs.iter().enumerate() {
            let c = st.join(uid, ndev, r as c_int, d as usize, None)?;
            crate::debuglog::on_init(&st, c, "ncclCommInitAll");
            comms.add(r).write(handle(TAG_COMM, c));
        }
        Ok(())
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
        crate::engine::progress(st);
        st.comms.get_mut(&id).expect("resolved").finalized = true;
        Ok(())
    })
}

/// `ncclCommDestroy(ncclComm_t)`: ops still pending are dropped.
#[no_mangle]
pub extern "C" fn ncclCommDestroy(comm: *mut c_void) -> NcclResult {
    lifecycle("ncclCommDestroy", comm, |st, id| {
        crate::engine::progress(st);
        crate::debuglog::on_destroy(st, id, "Destroy");
        st.leave(id);
        crate::engine::progress(st);
        Ok(())
    })
}

/// `ncclCommAbort(ncclComm_t)`: drops the comm's pending ops so its streams drain.
#[no_mangle]
pub extern "C" fn ncclCommAbort(comm: *mut c_void) -> NcclResult {
    lifecycle("ncclCommAbort", comm, |st, id| {
        crate::debuglog::on_destroy(st, id, "Abort");
        st.leave(id);
        crate::engine::progress(st);
        Ok(())
    })
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

/// `ncclRedOpCreatePreMulSum(ncclRedOp_t*, void* scalar, ncclDataType_t, residence, comm)`.
#[no_mangle]
pub unsafe extern "C" fn ncclRedOpCreatePreMulSum(
    op: *mut u32,
    scalar: *mut c_void,
    dtype: u32,
    residence: u32,
    comm: *mut c_void,
) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let id = st.comm_id(comm)?;
        need_version(21100, "ncclRedOpCreatePreMulSum")?;
        check_dtype(dtype)?;
        let size = crate::reduce::dtype_size(dtype);
        let s = match residence {
            _ if scalar.is_null() || op.is_null() => {
                return nccl_err(
                    NCCL_INVALID_ARGUMENT,
                    "ncclRedOpCreatePreMulSum: NULL scalar or op",
                )
            }
            0 => {
                let p = scalar as usize as u64;
                match st.alloc_holding(p, size) {
                    Some(a) if a.kind == crate::memory::AllocKind::Device && a.device == st.comms[&id].device => Scalar::Device(p),
                    _ => return nccl_err(NCCL_INVALID_ARGUMENT, "ncclRedOpCreatePreMulSum: device scalar is not in a device allocation of the comm's device"),
                }
            }
            1 => {
                let mut b = [0u8; 8];
                std::ptr::copy_nonoverlapping(scalar as *const u8, b.as_mut_ptr(), size);
                Scalar::Host(b)
            }
            _ => {
                return nccl_err(
                    NCCL_INVALID_ARGUMENT,
                    format!("ncclRedOpCreatePreMulSum: bad residence {residence}"),
                )
            }
        };
        let pm = PreMul { dtype, scalar: s };
        let comm = st.comms.get_mut(&id).expect("resolved");
        comm.premulsum.push(Some(pm));
        let code = 4 + comm.premulsum.len() as u32;
        let mut fields = comm_fields(&st, id);
        fields.extend([
            ("dtype", dtype.to_string()),
            ("residence", residence.to_string()),
        ]);
        fields.extend([
            ("scalar", crate::trace::premulsum_value(&st, &pm)),
            ("op", code.to_string()),
        ]);
        crate::trace::line("ncclRedOpCreatePreMulSum", &with_group(fields));
        op.write(code);
        Ok(())
    })
}

/// `ncclRedOpDestroy(ncclRedOp_t, ncclComm_t)`.
#[no_mangle]
pub extern "C" fn ncclRedOpDestroy(op: u32, comm: *mut c_void) -> NcclResult {
    nccl_guard(|| {
        let mut st = state();
        let id = st.comm_id(comm)?;
        need_version(21100, "ncclRedOpDestroy")?;
        let c = st.comms.get_mut(&id).expect("resolved");
        match op
            .checked_sub(5)
            .and_then(|i| c.premulsum.get_mut(i as usize))
        {
            Some(slot @ Some(_)) => {
                *slot = None;
                Ok(())
            }
            _ => nccl_err(
                NCCL_INVALID_ARGUMENT,
                format!("ncclRedOpDestroy: op {op} is not a live op of this comm"),
            ),
        }
    })
}
