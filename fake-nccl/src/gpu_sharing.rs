//! NCCL's refusal of two ranks of a communicator on one GPU of one host ("Duplicate GPU
//! detected" from 2.5 to 2.29; from 2.30 unless `NCCL_MULTI_RANK_GPU_ENABLE` is set), within
//! a process and, through the rendezvous, across processes.

use std::cell::Cell;
use std::sync::OnceLock;

use crate::config::nccl_version;
use crate::state::*;

/// NCCL's switch (2.30+) that lets several ranks of a host share one GPU.
pub const MULTI_RANK_GPU_ENV: &str = "NCCL_MULTI_RANK_GPU_ENABLE";

thread_local! {
    static MULTI_RANK_OVERRIDE: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Makes this thread see `NCCL_MULTI_RANK_GPU_ENABLE` as given (tests only; `None` restores
/// the environment's).
pub fn set_multi_rank_gpu_override(enabled: Option<bool>) {
    MULTI_RANK_OVERRIDE.with(|v| v.set(enabled));
}

/// Whether `NCCL_MULTI_RANK_GPU_ENABLE` is a non-zero number. Read once per process, at the
/// first init, as NCCL reads its parameters: setting it after the first init changes nothing.
fn multi_rank_gpu_enabled() -> bool {
    static V: OnceLock<bool> = OnceLock::new();
    MULTI_RANK_OVERRIDE.with(Cell::get).unwrap_or_else(|| {
        *V.get_or_init(|| {
            std::env::var(MULTI_RANK_GPU_ENV)
                .ok()
                .and_then(|v| v.trim().parse::<i64>().ok())
                .is_some_and(|v| v != 0)
        })
    })
}

/// NCCL's int64 bus id of `device` (`0000:bb:00.0` with the bus `cuDeviceGetAttribute`
/// reports, 0x18 + ordinal), as its "Duplicate GPU" message prints it.
fn bus_id(device: usize) -> u64 {
    (0x18 + device as u64) << 12
}

impl State {
    /// NCCL's refusal of comm `id` when another rank of its communicator uses the same GPU
    /// (this process is one host): "Duplicate GPU detected" from 2.5 to 2.29; from 2.30 unless
    /// `NCCL_MULTI_RANK_GPU_ENABLE` is set. NCCL fails every rank's init, so both comms get
    /// ncclInvalidUsage as their asynchronous error too.
    pub fn shared_device_refusal(&mut self, id: u64) -> Option<NcclError> {
        let enabled = multi_rank_gpu_enabled();
        let me = &self.comms[&id];
        let local = self.communicators[&me.communicator]
            .members
            .iter()
            .flatten()
            .filter(|&&o| o != id)
            .map(|o| &self.comms[o])
            .find(|o| o.device == me.device)
            .map(|o| o.rank);
        let remote = || {
            let rdv = self.communicators[&me.communicator].rdv.as_ref()?;
            rdv.same_gpu_elsewhere(me.rank, me.device)
        };
        let other_rank = local.or_else(remote)?;
        let v = nccl_version();
        let message = if v >= 23000 && !enabled {
            "Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to \
             enable this configuration."
                .to_string()
        } else if (20500..23000).contains(&v) {
            format!(
                "Duplicate GPU detected : rank {} and rank {} both on CUDA device {:x}",
                me.rank,
                other_rank,
                bus_id(me.device)
            )
        } else {
            return None;
        };
        let communicator = &self.communicators[&me.communicator];
        if let Some(rdv) = &communicator.rdv {
            // The other rank's process learns of the refusal from the rendezvous.
            rdv.fail(&message);
        }
        let other = communicator.members[other_rank];
        for c in [Some(id), other].into_iter().flatten() {
            self.comms.get_mut(&c).expect("a member").async_error = NCCL_INVALID_USAGE;
        }
        Some(NcclError {
            code: NCCL_INVALID_USAGE,
            message,
        })
    }
}
