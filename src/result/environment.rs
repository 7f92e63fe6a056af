//! Where a run ran, as data: the `ncclbench env` report ([`EnvReport`]: this build, the libnccl,
//! the CUDA driver and devices, the launcher, selected variables) and the run's own record
//! ([`RunEnvironment`]: command line, times, rank layout, devices, NCCL's topology). The
//! probing that fills them lives in `crate::bench::environment`; here they are only held,
//! masked ([`RunEnvironment::redact`]) and serialised.

use super::topology::TopologySummary;
use serde::Serialize;

/// The JSON schema name of [`EnvReport`].
pub const SCHEMA: &str = "ncclbench-env/1";

/// Everything `ncclbench env` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvReport {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// This binary's version.
    pub ncclbench_version: &'static str,
    /// Whether this build can join an MPI job (cargo feature `mpi`).
    pub mpi_support: bool,
    /// Short host name.
    pub hostname: String,
    /// The NCCL side.
    pub nccl: NcclReport,
    /// The CUDA side.
    pub cuda: CudaReport,
    /// The launcher that started this process, if any.
    pub launcher: Option<Launcher>,
    /// `NCCL_*`, `CUDA_*`, `UCX_*`, `OMPI_*`, `SLURM_*`, `PMIX_*` variables (never the whole
    /// environment), sorted.
    pub variables: Vec<String>,
}

/// The libnccl a run would load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NcclReport {
    /// Version of the `nccl.h` the bindings came from.
    pub headers: String,
    /// Where the library request came from (`--nccl-lib`, the environment), if not the search.
    pub requested: Option<String>,
    /// The file actually loaded.
    pub path: Option<String>,
    /// The step of the library search that found it (`command_line`, `environment`,
    /// `dynamic_loader`, `conda_prefix`, `cuda_toolkit`, `python_nvidia_nccl`, `python_torch`).
    pub found_by: Option<String>,
    /// What that step asked for: the path before symlinks are resolved, or the soname.
    pub found_as: Option<String>,
    /// Its `ncclGetVersion`, as `2.x.y`.
    pub version: Option<String>,
    /// Its version code.
    pub version_code: Option<i32>,
    /// Optional entry points this library lacks (features that fall back or are disabled).
    pub missing_optional: Vec<&'static str>,
    /// Why it could not be loaded.
    pub error: Option<String>,
}

/// The CUDA driver and devices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CudaReport {
    /// `cuDriverGetVersion` as `12.4`.
    pub driver_version: Option<String>,
    /// Every visible device.
    pub devices: Vec<DeviceSummary>,
    /// Why the driver or the devices could not be read.
    pub error: Option<String>,
}

/// The JSON schema name of [`RunEnvironment`].
pub const RUN_SCHEMA: &str = "ncclbench-run-env/1";

/// What a run records about where it ran: the `env` report plus the run's command line,
/// times, rank layout and devices. Written into the JSON output (`ncclbench.environment`) and
/// next to CSV output (`<file>.env.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunEnvironment {
    /// [`RUN_SCHEMA`].
    pub schema: &'static str,
    /// The command line as given.
    pub command_line: Vec<String>,
    /// Local start time (`%Y-%m-%d %H:%M:%S`).
    pub start_time: String,
    /// Local end time, once the run finished.
    pub end_time: Option<String>,
    /// `host`, `nccl`, ...
    pub backend: String,
    /// Ranks and processes.
    pub layout: Layout,
    /// Distinct host names of the ranks.
    pub hostnames: Vec<String>,
    /// One entry per rank this process reports.
    pub ranks: Vec<RankPlacement>,
    /// Whether identifying text was masked (`--redact`).
    pub redacted: bool,
    /// The same report as `ncclbench env`.
    pub system: EnvReport,
    /// What NCCL's own log showed about the topology, when the run captured it (`--tuning`);
    /// omitted from the JSON otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologySummary>,
}

/// The rank layout of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Layout {
    /// Processes in the run.
    pub processes: usize,
    /// Ranks in the communicator.
    pub nranks: usize,
    /// Ranks this process drives.
    pub local_ranks: usize,
}

/// Where one rank ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankPlacement {
    /// Global rank.
    pub rank: usize,
    /// Host name.
    pub host: String,
    /// Process id (an ordinal when redacted).
    pub pid: String,
    /// CUDA device ordinal (0 on the host backend).
    pub device: i32,
    /// PCI bus id as nccl-tests prints it (`0000:18:00`).
    pub bus_id: String,
    /// Device name.
    pub name: String,
}

impl RunEnvironment {
    /// The record of a run starting now.
    pub fn new(meta: &crate::result::RunMeta, system: EnvReport, processes: usize) -> Self {
        let mut hostnames: Vec<String> = meta.devices.iter().map(|d| d.hostname.clone()).collect();
        hostnames.sort();
        hostnames.dedup();
        RunEnvironment {
            schema: RUN_SCHEMA,
            command_line: meta.argv.clone(),
            start_time: meta.start_time.clone(),
            end_time: None,
            backend: meta.backend.name().to_string(),
            layout: Layout {
                processes,
                nranks: meta.nranks,
                local_ranks: meta.devices.len(),
            },
            hostnames,
            ranks: meta
                .devices
                .iter()
                .map(|d| RankPlacement {
                    rank: d.rank,
                    host: d.hostname.clone(),
                    pid: d.pid.to_string(),
                    device: d.device,
                    bus_id: format!("{:04x}:{:02x}:{:02x}", d.pci.0, d.pci.1, d.pci.2),
                    name: d.name.clone(),
                })
                .collect(),
            redacted: false,
            system,
            topology: None,
        }
    }

    /// Masks identifying text (see [`crate::core::redact`]).
    pub fn redact(&mut self, r: &crate::core::redact::Redactor) {
        self.redacted = true;
        self.command_line = self.command_line.iter().map(|a| r.text(a)).collect();
        self.hostnames = self.hostnames.iter().map(|h| r.host(h)).collect();
        for p in &mut self.ranks {
            p.host = r.host(&p.host);
            p.pid = p.pid.parse().map_or_else(|_| r.text(&p.pid), |n| r.pid(n));
        }
        redact_report(&mut self.system, r);
        if let Some(t) = self.topology.as_mut() {
            t.redact(r);
        }
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// Masks identifying text in an `env` report.
pub fn redact_report(s: &mut EnvReport, r: &crate::core::redact::Redactor) {
    s.hostname = r.host(&s.hostname);
    for f in [
        &mut s.nccl.requested,
        &mut s.nccl.path,
        &mut s.nccl.found_as,
        &mut s.nccl.error,
        &mut s.cuda.error,
    ] {
        if let Some(v) = f.as_mut() {
            *v = r.text(v);
        }
    }
    if let Some(l) = s.launcher.as_mut() {
        l.evidence = l.evidence.iter().map(|e| r.env_entry(e)).collect();
    }
    s.variables = s.variables.iter().map(|v| r.env_entry(v)).collect();
}

/// What `ncclbench env` and `--backend auto` need to know about one device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceSummary {
    /// The CUDA ordinal.
    pub ordinal: usize,
    /// The device name.
    pub name: String,
    /// PCI domain.
    pub pci_domain: i32,
    /// PCI bus.
    pub pci_bus: i32,
    /// PCI device.
    pub pci_device: i32,
    /// Total memory in bytes.
    pub total_memory: usize,
    /// Compute capability `(major, minor)`.
    pub compute_capability: (i32, i32),
    /// The driver's CUDA version (`cuDriverGetVersion`, e.g. 12040).
    pub driver_version: i32,
}

impl DeviceSummary {
    /// The PCI bus id as nvidia-smi and NCCL print it, e.g. `0000:3b:00.0`.
    pub fn pci_bus_id(&self) -> String {
        format!(
            "{:04x}:{:02x}:{:02x}.0",
            self.pci_domain, self.pci_bus, self.pci_device
        )
    }
}

/// What the environment says about the job this process belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Launcher {
    /// `Open MPI mpirun`, `MPICH/Hydra (PMI)`, `MVAPICH`, `Slurm srun`, `PMIx`.
    pub kind: &'static str,
    /// Processes in the job, where the launcher says.
    pub world_size: Option<usize>,
    /// This process's rank, where the launcher says.
    pub rank: Option<usize>,
    /// This process's rank on its node, where the launcher says.
    pub local_rank: Option<usize>,
    /// The variables the answer came from.
    pub evidence: Vec<String>,
}
