//! Communicator creation: `ncclCommInitRank`, `ncclCommInitRankConfig` (the config is
//! validated: size, magic 0xcafebeef, version, CTAPolicy range) and `ncclCommInitAll`. A rank's
//! device is the calling thread's current context's; init never blocks (ops wait for ranks
//! that have not joined yet), so it works inside or outside a group. Two ranks of a
//! communicator on one device are refused as the impersonated NCCL refuses them
//! ([`State::shared_device_refusal`]), at the group's end when the init was grouped.

use std::ffi::{c_char, c_int, c_void};

use crate::comm::new_unique_id;
use crate::config::nccl_version;
use crate::nccl_api::{need_version, with_group, UniqueId};
use crate::state::*;

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

/// Reads a caller's non-NULL `ncclConfig_t`: the CTAPolicy as traced (`undef` or the value),
/// and the check's result: the policy to apply (older libraries ignore the field), or
/// ncclInvalidArgument for a bad size, magic, version or policy.
pub(crate) fn read_config(
    name: &str,
    c: *const c_void,
) -> (String, Result<Option<i32>, NcclError>) {
    let c = c as *const ConfigPrefix;
    // SAFETY: the caller passes a config of at least `size` bytes; read the prefix.
    let size = unsafe { std::ptr::addr_of!((*c).size).read_unaligned() };
    // Copy the prefix the caller's `size` covers into an aligned, unset one.
    let mut pre = ConfigPrefix::unset();
    let n = size.min(std::mem::size_of::<ConfigPrefix>());
    // SAFETY: the caller's config has `size` bytes; `pre` has room for `n`.
    unsafe {
        std::ptr::copy_nonoverlapping(c as *const u8, std::ptr::addr_of_mut!(pre) as *mut u8, n)
    };
    let (magic, version, raw) = (pre.magic, pre.version, pre.cta_policy);
    let traced = if raw == UNDEF {
        "undef".into()
    } else {
        raw.to_string()
    };
    let checked = if size < 16 || magic != 0xcafe_beef || version < 21400 {
        nccl_err(
            NCCL_INVALID_ARGUMENT,
            format!("{name}: invalid config (size {size}, magic {magic:#x}, version {version})"),
        )
    } else if raw != UNDEF && !(0..=2).contains(&raw) {
        nccl_err(
            NCCL_INVALID_ARGUMENT,
            format!("{name}: invalid CTAPolicy {raw}"),
        )
    } else {
        Ok((raw != UNDEF && nccl_version() >= 22700).then_some(raw))
    };
    (traced, checked)
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
                let (traced, checked) = read_config(name, c as *const c_void);
                fields.push(("cta_policy", traced));
                crate::trace::line(name, &with_group(fields));
                cta = checked?;
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
        // SAFETY: checked non-NULL.
        unsafe { out.write(handle(TAG_COMM, comm)) };
        refuse_shared_device(&mut st, comm)?;
        crate::debuglog::on_init(&st, comm, name);
        Ok(())
    })
}

/// NCCL's refusal of a rank on a GPU another rank of the communicator already uses. NCCL
/// finds it once every rank has joined: inside a group the init call succeeds and the group's
/// end fails; outside one the call fails. The comm handle stays valid (destroy or abort it).
fn refuse_shared_device(st: &mut State, comm: u64) -> Result<(), NcclError> {
    match st.shared_device_refusal(comm) {
        Some(e) if crate::group::depth() > 0 => {
            crate::group::defer(e);
            Ok(())
        }
        Some(e) => Err(e),
        None => Ok(()),
    }
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
            comms.add(r).write(handle(TAG_COMM, c));
            refuse_shared_device(&mut st, c)?;
            crate::debuglog::on_init(&st, c, "ncclCommInitAll");
        }
        Ok(())
    })
}
