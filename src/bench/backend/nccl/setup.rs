//! Bringing the NCCL backend up in two steps: [`probe`] loads libnccl and the CUDA driver,
//! picks each local rank's device (and, where ranks share a GPU, sets NCCL's switch for it or
//! refuses before any init) and retains its context; [`Probe::init`] creates each
//! rank's stream and initialises the communicators in one group, as nccl-tests' `initComms`
//! does (`ncclCommInitRankConfig` per rank, not `ncclCommInitAll`, so multi-process runs work
//! the same way).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::bench::backend::{BackendInfo, DeviceInfo};
use crate::bench::cuda::{Context, Driver, Stream};
use crate::config::Verify;
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;
use nccl_sys::bindings::{ncclComm_t, ncclConfig_t};
use nccl_sys::{Nccl, UniqueId};

use super::caps::Caps;
use super::devices::{self, DeviceChoice};
use super::error::{cuda_err, nccl_err};
use super::memory::{self, MemoryUse};
use super::{NcclBackend, Rank};
use crate::core::host::gethostname_short;

/// The wait limit of ranks that share a GPU when `-T` sets none: NCCL 2.30's shared-GPU mode
/// is experimental and can lock up, and a benchmark that hangs says nothing. Long enough for
/// any timed loop of the default sizes on a shared GPU. (`NCCLBENCH_TEST_SHARED_GPU_WAIT_S`
/// shortens it in test builds.)
pub const SHARED_GPU_WAIT: Duration = Duration::from_secs(300);

fn shared_gpu_wait() -> Duration {
    crate::core::test_hooks::var("NCCLBENCH_TEST_SHARED_GPU_WAIT_S")
        .and_then(|v| v.trim().parse().ok())
        .map_or(SHARED_GPU_WAIT, Duration::from_secs)
}

/// What the NCCL backend needs from the run configuration and the bootstrap.
#[derive(Debug, Clone)]
pub struct NcclOptions {
    /// The libnccl to load (`--nccl-lib`, then `NCCLBENCH_NCCL_LIB`); `None` searches.
    pub lib: Option<PathBuf>,
    /// How devices are chosen.
    pub devices: DeviceChoice,
    /// This process's rank among the processes of its host.
    pub local_process: usize,
    /// Ranks in the communicator.
    pub nranks: usize,
    /// Global rank of this process's first local rank.
    pub first_rank: usize,
    /// Ranks this process drives (`-t` x `-g`).
    pub local_ranks: usize,
    /// Split group (color) of this process, for the device lines.
    pub group: usize,
    /// `-y 1`: the legacy default stream instead of a non-blocking one.
    pub stream_null: bool,
    /// `--timer device`: refused at open where the streams cannot wait on a gate.
    pub device_timer: bool,
    /// `-x`: `ncclConfig_t.CTAPolicy`.
    pub cta_policy: Option<i32>,
    /// `-R`: 0 none, 1 `ncclCommRegister`, 2 symmetric windows.
    pub register: u8,
    /// The collective (sendrecv limits P2P peers on new libraries, as nccl-tests does).
    pub collective: Collective,
    /// `--verify`: where `-c` fills and checks buffers.
    pub verify: Verify,
    /// `-T`: the limit of each wait, `None` for none (ranks sharing a GPU then get
    /// `SHARED_GPU_WAIT`).
    pub timeout: Option<Duration>,
    /// `-c` > 0: whether anything is checked at all (without, no verification kernel is
    /// loaded and no counter allocated).
    pub check: bool,
}

/// The backend up to its communicators: library loaded, devices chosen, contexts retained,
/// capabilities read. Everything a plan depends on is known here, so the processes of a job
/// can agree on one plan before any of them creates a communicator (nccl-tests reduces memory
/// and compute capability before `ncclCommInitRank` too).
pub struct Probe {
    nccl: Nccl,
    driver: Driver,
    opts: NcclOptions,
    ordinals: Vec<usize>,
    contexts: BTreeMap<usize, Context>,
    caps: Caps,
    before_init: std::collections::BTreeMap<usize, u64>,
    info: BackendInfo,
    shared_gpu_wait: Option<Duration>,
}

/// Loads libnccl and the driver and reads this process's devices (no communicator yet).
pub fn probe(opts: &NcclOptions) -> Result<Probe, Error> {
    let nccl = Nccl::open(opts.lib.as_deref())
        .map_err(|e| Error::Backend(format!("{}: {e}", gethostname_short())))?;
    let driver = Driver::open().map_err(cuda_err)?;
    let visible = driver.device_count().map_err(cuda_err)?;
    let ordinals = opts
        .devices
        .resolve(opts.local_process, opts.local_ranks, visible)?;
    let sharing = devices::sharing(
        &ordinals,
        opts.first_rank,
        matches!(opts.devices, DeviceChoice::Explicit(_)),
        opts.nranks > opts.local_ranks,
        nccl.version(),
        std::env::var(devices::MULTI_RANK_GPU_ENV).ok().as_deref(),
    )?;
    if sharing.set_env {
        // Before ncclGetUniqueId and the first init: NCCL reads the variable once, at init,
        // and the library has started none of its threads yet.
        std::env::set_var(devices::MULTI_RANK_GPU_ENV, "1");
    }

    let mut contexts: BTreeMap<usize, Context> = BTreeMap::new();
    for &d in &ordinals {
        if let std::collections::btree_map::Entry::Vacant(slot) = contexts.entry(d) {
            let device = driver.device(d).map_err(cuda_err)?;
            slot.insert(Context::primary(&device).map_err(cuda_err)?);
        }
    }
    let before_init = memory::free_by_device(&contexts)?;
    let caps = Caps::of(&nccl, &contexts, opts)?;
    if opts.device_timer {
        super::gate::check_support(&driver, &contexts)?;
    }
    // Ranks sharing a GPU share its memory: the clamp of -e sees each device's total divided
    // by the local ranks on it, the tightest device deciding.
    let device_memory = contexts
        .iter()
        .map(|(d, c)| {
            let ranks = ordinals.iter().filter(|&o| o == d).count().max(1) as u64;
            c.device().total_memory().map(|m| m as u64 / ranks)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(cuda_err)?
        .into_iter()
        .min();
    let driver_version = driver.version().map_err(cuda_err)?;
    let mut header_lines = vec![format!(
        "# NCCL library {} ({}), CUDA driver {}",
        nccl.path().display(),
        nccl.version_string(),
        crate::bench::cuda::format_version(driver_version)
    )];
    header_lines.append(&mut caps.notes(opts));
    // A note means ranks share (or, across processes, may share) a GPU in NCCL's mode for it.
    let shared_gpu_wait = (sharing.note.is_some() && opts.timeout.is_none()).then(shared_gpu_wait);
    header_lines.extend(sharing.note);
    if let Some(limit) = shared_gpu_wait {
        header_lines.push(format!(
            "# ranks share a GPU: each wait times out after {} s (-T sets another limit), since \
             NCCL's shared-GPU mode is experimental and can lock up",
            limit.as_secs()
        ));
    }
    let info = BackendInfo {
        name: crate::result::BackendKind::Nccl,
        nranks: opts.nranks,
        first_rank: opts.first_rank,
        local_ranks: opts.local_ranks,
        header_lines,
        nccl_headers: Some(nccl_sys::HEADERS_VERSION_CODE),
        nccl_library: Some(nccl.version()),
        memory_per_rank: None,
        device_memory,
    };
    Ok(Probe {
        nccl,
        driver,
        opts: opts.clone(),
        ordinals,
        contexts,
        caps,
        before_init,
        info,
        shared_gpu_wait,
    })
}

impl Probe {
    /// The backend's facts (the same once it is initialised).
    pub fn info(&self) -> &BackendInfo {
        &self.info
    }

    /// Whether `dtype` with `op` can run with this library on these devices.
    pub fn supports(&self, dtype: DataType, op: RedOp) -> bool {
        self.caps.supports(dtype, op)
    }

    /// Why `dtype` with `op` cannot run, where the reason is more than a missing version or
    /// device feature: NCCL's one-rank fp8 PreMulSum refusal.
    pub fn skip_reason(&self, dtype: DataType, op: RedOp) -> Option<String> {
        let fp8 = matches!(dtype, DataType::F8e4m3 | DataType::F8e5m2);
        (fp8 && self.caps.one_rank_fp8_premulsum(op)).then(|| {
            format!(
                "NCCL {} has no fp8 {op} on a one-rank communicator (its one-rank kernel lacks \
                 fp8 PreMulSum: ncclInvalidArgument, where nccl-tests stops)",
                self.nccl.version_string()
            )
        })
    }

    /// Creates the streams and the communicators; `unique_id` provides the communicator id
    /// (made here in a single process, broadcast from rank 0 with MPI).
    pub fn init(
        self,
        unique_id: impl FnOnce(&Nccl) -> Result<UniqueId, Error>,
    ) -> Result<NcclBackend, Error> {
        let Probe {
            nccl,
            driver,
            opts,
            ordinals,
            contexts,
            caps,
            before_init,
            info,
            shared_gpu_wait,
        } = self;
        let id = unique_id(&nccl)?;
        let mut ranks = Vec::with_capacity(opts.local_ranks);
        for (i, &d) in ordinals.iter().enumerate() {
            let context = contexts[&d].clone();
            let stream = if opts.stream_null {
                Stream::legacy(&context)
            } else {
                Stream::new(&context, true).map_err(cuda_err)?
            };
            ranks.push(Rank {
                global: opts.first_rank + i,
                device: d,
                context,
                stream,
                comm: std::ptr::null_mut(),
                send: None,
                recv: None,
                registrations: Vec::new(),
                kernels: None,
            });
        }
        init_comms(&nccl, &caps, &opts, &id, &mut ranks)?;
        // -M 1's initialization figure is NCCL's: taken before the verification kernels load
        // (their module and counters count with the run's own allocations).
        let after_init = memory::free_by_device(&contexts)?;
        let devices = describe(&driver, &ranks, opts.group)?;
        let mut backend = NcclBackend::new(
            nccl,
            info,
            devices,
            ranks,
            caps,
            opts.register,
            MemoryUse {
                before_init,
                after_alloc: after_init.clone(),
                after_init,
            },
        );
        backend.shared_gpu_wait = shared_gpu_wait;
        // Loaded into the backend, so a refusal (--verify device) still tears the
        // communicators down in order.
        let verify = super::kernels::load_all(&mut backend.ranks, opts.verify, opts.check)?;
        backend.info.header_lines.push(verify);
        Ok(backend)
    }
}

/// The communicator id of a single-process run: made here with `ncclGetUniqueId`.
pub fn single_process_id(nccl: &Nccl) -> Result<UniqueId, Error> {
    nccl.get_unique_id().map_err(nccl_err)
}

/// `ncclCommInitRankConfig` (or `ncclCommInitRank` on libraries without configs) for every
/// local rank inside one group, each with its device's context current.
fn init_comms(
    nccl: &Nccl,
    caps: &Caps,
    opts: &NcclOptions,
    id: &UniqueId,
    ranks: &mut [Rank],
) -> Result<(), Error> {
    let api = nccl.api();
    let nranks = i32::try_from(opts.nranks)
        .map_err(|_| Error::usage(format!("{} ranks exceed NCCL's limit", opts.nranks)))?;
    let raw_id = id.to_raw();
    // SAFETY: group calls take no arguments.
    nccl.check("ncclGroupStart", unsafe { (api.ncclGroupStart)() })
        .map_err(nccl_err)?;
    let mut first_error = None;
    for r in ranks.iter_mut() {
        if let Err(e) = r.context.set_current() {
            first_error.get_or_insert(cuda_err(e));
            break;
        }
        let rank = r.global as i32;
        let mut comm: ncclComm_t = std::ptr::null_mut();
        let code = match (caps.init_config, config_for(caps, opts)) {
            (Some(init), Some(mut config)) => {
                // SAFETY: valid out-pointer, id and config; the rank's device is current.
                let code = unsafe { init(&mut comm, nranks, raw_id, rank, &mut config) };
                (code, "ncclCommInitRankConfig")
            }
            _ => {
                // SAFETY: as above, without a config.
                let code = unsafe { (api.ncclCommInitRank)(&mut comm, nranks, raw_id, rank) };
                (code, "ncclCommInitRank")
            }
        };
        r.comm = comm;
        if let Err(e) = nccl.check(code.1, code.0) {
            first_error.get_or_insert(nccl_err(e));
            break;
        }
    }
    // SAFETY: closes the group opened above (also after an error, so NCCL's state stays sane).
    let end = nccl.check("ncclGroupEnd", unsafe { (api.ncclGroupEnd)() });
    if let Some(e) = first_error {
        return Err(e);
    }
    end.map_err(nccl_err)
}

/// The communicator configuration nccl-tests passes: CTA policy (`-x`), NVLink-centric
/// scheduling on 2.28+, two P2P peers for sendrecv on 2.30+. `None` where the library takes no
/// configuration.
fn config_for(caps: &Caps, opts: &NcclOptions) -> Option<ncclConfig_t> {
    caps.init_config?;
    let mut config = nccl_sys::comm_config();
    if let (Some(policy), true) = (opts.cta_policy, caps.cta_policy) {
        config.CTAPolicy = policy;
    }
    if caps.version >= 22800 {
        config.nvlinkCentricSched = 1;
    }
    if caps.version >= 23000 && opts.collective == Collective::SendRecv {
        config.maxP2pPeers = 2;
    }
    Some(config)
}

/// The `# Using devices` entries of the local ranks.
fn describe(driver: &Driver, ranks: &[Rank], group: usize) -> Result<Vec<DeviceInfo>, Error> {
    let host = gethostname_short();
    ranks
        .iter()
        .map(|r| {
            let device = driver.device(r.device).map_err(cuda_err)?;
            let (domain, bus, dev) = device.pci().map_err(cuda_err)?;
            Ok(DeviceInfo {
                rank: r.global,
                group,
                pid: std::process::id(),
                hostname: host.clone(),
                device: r.device as i32,
                pci: (domain as u32, bus as u32, dev as u32),
                name: device.name().map_err(cuda_err)?,
            })
        })
        .collect()
}
