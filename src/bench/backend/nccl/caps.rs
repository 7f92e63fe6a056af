//! What the loaded NCCL (and the devices) can do: version-gated entry points and data types,
//! decided once at start so every later choice (native alltoall or send/recv, `-R`, `-x`,
//! fp8) reads one table, and the header can say what was disabled and why.

use std::collections::BTreeMap;

use crate::bench::cuda::Context;
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use nccl_sys::bindings as b;
use nccl_sys::version::{self, version_string};
use nccl_sys::Nccl;

use super::error::cuda_err;
use super::setup::NcclOptions;

/// First versions of the features ncclbench uses beyond the 2.7 baseline.
const CONFIG_MIN: i32 = 21400;
const REGISTER_MIN: i32 = 21900;
const WINDOW_MIN: i32 = 22700;
const CTA_POLICY_MIN: i32 = 22700;
/// nccl-tests calls the native alltoall/gather/scatter from 2.28 on.
const NATIVE_ROOTED_MIN: i32 = 22800;
/// `ncclCommSplit`.
const SPLIT_MIN: i32 = 21800;

/// The loaded library's usable features.
#[derive(Debug, Clone, Copy)]
pub(super) struct Caps {
    /// `ncclGetVersion`.
    pub version: i32,
    /// `ncclCommInitRankConfig`, 2.14+.
    pub init_config: Option<b::PFN_ncclCommInitRankConfig>,
    /// `ncclConfig_t.CTAPolicy`, 2.27+.
    pub cta_policy: bool,
    /// Native `ncclAlltoAll` (else grouped send/recv).
    pub alltoall: Option<b::PFN_ncclAlltoAll>,
    /// Native `ncclGather`.
    pub gather: Option<b::PFN_ncclGather>,
    /// Native `ncclScatter`.
    pub scatter: Option<b::PFN_ncclScatter>,
    /// `ncclRedOpCreatePreMulSum` and `ncclRedOpDestroy` (mulsum).
    pub premulsum: Option<(b::PFN_ncclRedOpCreatePreMulSum, b::PFN_ncclRedOpDestroy)>,
    /// `ncclCommRegister`/`Deregister` (`-R 1`).
    pub register: Option<(b::PFN_ncclCommRegister, b::PFN_ncclCommDeregister)>,
    /// `ncclCommWindowRegister`/`Deregister` (`-R 2`).
    pub window: Option<(
        b::PFN_ncclCommWindowRegister,
        b::PFN_ncclCommWindowDeregister,
    )>,
    /// `ncclCommFinalize`, called before destroy where present.
    pub finalize: Option<b::PFN_ncclCommFinalize>,
    /// `ncclCommSplit`, 2.18+ (`locate`'s sub-communicators).
    pub split: Option<b::PFN_ncclCommSplit>,
    /// Every device has compute capability 9.0 or newer (fp8 types need it, as in nccl-tests).
    pub fp8_devices: bool,
    /// The communicator has one rank and the collective reduces: NCCL then runs the reduction
    /// as one local kernel, which it has no fp8 PreMulSum variant of ([`Caps::supports`]).
    pub one_rank_reduction: bool,
}

impl Caps {
    /// Reads the features of `nccl` and the devices of `contexts`, for a run of `opts`.
    pub fn of(
        nccl: &Nccl,
        contexts: &BTreeMap<usize, Context>,
        opts: &NcclOptions,
    ) -> Result<Self, Error> {
        let v = nccl.version();
        let gate = |min: i32| v >= min;
        let mut fp8_devices = true;
        for c in contexts.values() {
            let (major, _) = c.device().compute_capability().map_err(cuda_err)?;
            fp8_devices &= major >= 9;
        }
        Ok(Self {
            version: v,
            init_config: nccl.comm_init_rank_config().filter(|_| gate(CONFIG_MIN)),
            cta_policy: gate(CTA_POLICY_MIN),
            alltoall: nccl.alltoall().filter(|_| gate(NATIVE_ROOTED_MIN)),
            gather: nccl.gather().filter(|_| gate(NATIVE_ROOTED_MIN)),
            scatter: nccl.scatter().filter(|_| gate(NATIVE_ROOTED_MIN)),
            premulsum: (nccl.red_op_create_pre_mul_sum())
                .zip(nccl.red_op_destroy())
                .filter(|_| version::supports_premulsum(v)),
            register: (nccl.comm_register())
                .zip(nccl.comm_deregister())
                .filter(|_| gate(REGISTER_MIN)),
            window: (nccl.comm_window_register())
                .zip(nccl.comm_window_deregister())
                .filter(|_| gate(WINDOW_MIN)),
            finalize: nccl.comm_finalize(),
            split: nccl.comm_split().filter(|_| gate(SPLIT_MIN)),
            fp8_devices,
            one_rank_reduction: opts.nranks == 1 && opts.collective.spec().reduces,
        })
    }

    /// Whether `dtype` with `op` can run: the library's version and, for fp8, the devices,
    /// and not [`Caps::one_rank_fp8_premulsum`].
    pub fn supports(&self, dtype: DataType, op: RedOp) -> bool {
        let fp8 = matches!(dtype, DataType::F8e4m3 | DataType::F8e5m2);
        let dtype_ok = version::supports_dtype(self.version, super::launch::nccl_dtype(dtype))
            && (!fp8 || self.fp8_devices);
        let op_ok = match op {
            RedOp::MulSum => self.premulsum.is_some(),
            RedOp::Avg => self.version >= version::AVG_MIN_VERSION,
            _ => true,
        };
        dtype_ok && op_ok && !(fp8 && self.one_rank_fp8_premulsum(op))
    }

    /// Whether `op` on an fp8 type is refused because the communicator has one rank: NCCL
    /// reduces there with one local kernel whose fp8 PreMulSum variants its host code never
    /// registers (they sit behind a device-only compile guard, 2.24 through 2.30 and its
    /// master), so avg (a PreMulSum by 1/n on float types) and mulsum return
    /// ncclInvalidArgument at the launch. nccl-tests' `-d all -o all` stops there; ncclbench
    /// skips the two pairs and says why.
    pub fn one_rank_fp8_premulsum(&self, op: RedOp) -> bool {
        self.one_rank_reduction && matches!(op, RedOp::Avg | RedOp::MulSum)
    }

    /// Header notes for requested features this library lacks (the run goes on without them).
    pub fn notes(&self, opts: &NcclOptions) -> Vec<String> {
        let lib = version_string(self.version);
        let mut notes = Vec::new();
        let mut lacks = |what: String, min: i32| {
            notes.push(format!(
                "# {what} ignored: needs NCCL {} or newer, the loaded library is {lib}",
                version_string(min)
            ))
        };
        if opts.register == 1 && self.register.is_none() {
            lacks("-R 1 (ncclCommRegister)".into(), REGISTER_MIN);
        }
        if opts.register == 2 && self.window.is_none() {
            lacks("-R 2 (ncclCommWindowRegister)".into(), WINDOW_MIN);
        }
        if let (Some(p), false) = (
            opts.cta_policy,
            self.cta_policy && self.init_config.is_some(),
        ) {
            lacks(format!("-x {p} (ncclConfig_t.CTAPolicy)"), CTA_POLICY_MIN);
        }
        use crate::core::collective::Collective as C;
        let grouped = match opts.collective {
            C::AllToAll => self.alltoall.is_none(),
            C::Gather => self.gather.is_none(),
            C::Scatter => self.scatter.is_none(),
            _ => false,
        };
        if grouped {
            notes.push(format!(
                "# {} runs as grouped ncclSend/ncclRecv (native call needs NCCL {}; loaded {lib})",
                opts.collective.name(),
                version_string(NATIVE_ROOTED_MIN)
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    //! The table against real libraries (no GPU needed to load them): the 2.21.5 of
    //! `NCCLBENCH_TEST_NCCL_LIB_OLD` and the 2.32.3 of `NCCLBENCH_TEST_NCCL_LIB`, each skipped
    //! with a note when unset, except under `CI=true`, where `.ci/run` fetches both.

    use super::*;
    use crate::core::collective::Collective;

    /// A run of `collective` over `nranks` ranks, one of them in this process.
    fn opts(collective: Collective, nranks: usize) -> NcclOptions {
        NcclOptions {
            lib: None,
            devices: super::super::devices::DeviceChoice::ByLocalRank,
            local_process: 0,
            nranks,
            first_rank: 0,
            local_ranks: 1,
            group: 0,
            stream_null: false,
            device_timer: false,
            cta_policy: None,
            register: 0,
            collective,
            verify: crate::config::Verify::Auto,
            check: true,
            timeout: None,
        }
    }

    fn real(var: &str) -> Option<Nccl> {
        match std::env::var_os(var).filter(|v| !v.is_empty()) {
            Some(path) => Some(
                Nccl::open(Some(std::path::Path::new(&path)))
                    .unwrap_or_else(|e| panic!("{var}: {e}")),
            ),
            None if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!("CI=true but {var} is unset (.ci/run fetches it)")
            }
            None => {
                eprintln!("skipped: set {var} (scripts/fetch-nccl)");
                None
            }
        }
    }

    #[test]
    fn nccl_2_21_runs_alltoall_gather_scatter_as_send_recv_and_lacks_windows_and_fp8() {
        let Some(nccl) = real("NCCLBENCH_TEST_NCCL_LIB_OLD") else {
            return;
        };
        assert_eq!(nccl.version(), 22105);
        let caps = Caps::of(&nccl, &BTreeMap::new(), &opts(Collective::AllReduce, 2)).unwrap();
        assert!(caps.alltoall.is_none() && caps.gather.is_none() && caps.scatter.is_none());
        assert!(caps.window.is_none() && !caps.cta_policy);
        assert!(caps.register.is_some() && caps.init_config.is_some());
        assert!(caps.premulsum.is_some() && caps.finalize.is_some());
        assert!(caps.supports(DataType::Bfloat16, RedOp::Avg));
        assert!(caps.supports(DataType::Float, RedOp::MulSum));
        assert!(!caps.supports(DataType::F8e4m3, RedOp::Sum));
    }

    #[test]
    fn nccl_2_32_has_every_native_call_and_feature() {
        let Some(nccl) = real("NCCLBENCH_TEST_NCCL_LIB") else {
            return;
        };
        assert!(nccl.version() >= 22800, "{}", nccl.version());
        let caps = Caps::of(&nccl, &BTreeMap::new(), &opts(Collective::AllReduce, 2)).unwrap();
        assert!(caps.alltoall.is_some() && caps.gather.is_some() && caps.scatter.is_some());
        assert!(caps.window.is_some() && caps.cta_policy && caps.register.is_some());
        assert!(caps.supports(DataType::F8e4m3, RedOp::Sum));
        assert!(caps.supports(DataType::F8e4m3, RedOp::Avg));
        assert!(caps.supports(DataType::F8e5m2, RedOp::MulSum));
    }

    #[test]
    fn one_rank_reductions_lose_fp8_avg_and_mulsum_only() {
        let Some(nccl) = real("NCCLBENCH_TEST_NCCL_LIB") else {
            return;
        };
        let one = Caps::of(&nccl, &BTreeMap::new(), &opts(Collective::ReduceScatter, 1)).unwrap();
        for t in [DataType::F8e4m3, DataType::F8e5m2] {
            assert!(!one.supports(t, RedOp::Avg) && !one.supports(t, RedOp::MulSum));
            assert!(one.supports(t, RedOp::Sum) && one.supports(t, RedOp::Max));
        }
        assert!(one.supports(DataType::Bfloat16, RedOp::Avg));
        assert!(one.supports(DataType::Half, RedOp::MulSum));
        // Collectives that do not reduce never reach NCCL's one-rank reduction kernel.
        let bcast = Caps::of(&nccl, &BTreeMap::new(), &opts(Collective::Broadcast, 1)).unwrap();
        assert!(!bcast.one_rank_reduction);
        let sendrecv = Caps::of(&nccl, &BTreeMap::new(), &opts(Collective::SendRecv, 1)).unwrap();
        assert!(!sendrecv.one_rank_fp8_premulsum(RedOp::Avg));
    }
}
