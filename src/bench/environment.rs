//! `ncclbench env`: what a run would use — this build, the libnccl it would load and its
//! version, the CUDA driver and GPUs, the launcher that started it — as text or JSON
//! (`ncclbench-env/1`). Nothing here fails: each part reports its own error instead.

use serde::Serialize;
use std::io::Write;
use std::path::Path;

use crate::bench::cuda::{self, DeviceSummary};
use crate::bench::job::launcher::{self, Launcher};
use crate::logs::topology::TopologySummary;

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

/// Gathers the report; `nccl_lib` is `--nccl-lib`.
pub fn collect(nccl_lib: Option<&Path>) -> EnvReport {
    let requested = nccl_sys::resolve_request(nccl_lib);
    let mut nccl = NcclReport {
        headers: nccl_sys::HEADERS_VERSION.to_string(),
        requested: requested.as_ref().map(|p| p.display().to_string()),
        path: None,
        version: None,
        version_code: None,
        missing_optional: Vec::new(),
        error: None,
    };
    match nccl_sys::Nccl::open(requested.as_deref()) {
        Ok(lib) => {
            nccl.path = Some(lib.path().display().to_string());
            nccl.version = Some(lib.version_string());
            nccl.version_code = Some(lib.version());
            nccl.missing_optional = lib.optional().missing();
        }
        Err(e) => nccl.error = Some(e.to_string()),
    }
    let mut cuda = CudaReport {
        driver_version: None,
        devices: Vec::new(),
        error: None,
    };
    match cuda::Driver::load().and_then(|d| d.version()) {
        Ok(v) => {
            cuda.driver_version = Some(cuda::format_version(v));
            match cuda::probe() {
                Ok(devices) => cuda.devices = devices,
                Err(e) => cuda.error = Some(e.to_string()),
            }
        }
        Err(e) => cuda.error = Some(e.to_string()),
    }
    EnvReport {
        schema: SCHEMA,
        ncclbench_version: env!("CARGO_PKG_VERSION"),
        mpi_support: cfg!(feature = "mpi"),
        hostname: crate::bench::backend::nccl::hostname(),
        nccl,
        cuda,
        launcher: launcher::detect(),
        variables: recorded_env(),
    }
}

/// Writes the report as text.
pub fn write_text(r: &EnvReport, out: &mut dyn Write) -> std::io::Result<()> {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    writeln!(
        out,
        "ncclbench {} (MPI support: {})",
        r.ncclbench_version,
        yes_no(r.mpi_support)
    )?;
    writeln!(out, "host: {}", r.hostname)?;
    writeln!(out, "NCCL headers: {}", r.nccl.headers)?;
    if let Some(req) = &r.nccl.requested {
        writeln!(out, "NCCL requested: {req}")?;
    }
    match (&r.nccl.path, &r.nccl.version, &r.nccl.error) {
        (Some(p), Some(v), _) => writeln!(out, "NCCL library: {p} (version {v})")?,
        (_, _, Some(e)) => writeln!(out, "NCCL library: not loaded: {e}")?,
        _ => writeln!(out, "NCCL library: not loaded")?,
    }
    if r.nccl.path.is_some() && !r.nccl.missing_optional.is_empty() {
        writeln!(
            out,
            "NCCL entry points missing (features fall back or are off): {}",
            r.nccl.missing_optional.join(", ")
        )?;
    }
    match &r.cuda.driver_version {
        Some(v) => writeln!(out, "CUDA driver: {v}")?,
        None => writeln!(out, "CUDA driver: not available")?,
    }
    if let Some(e) = &r.cuda.error {
        writeln!(out, "CUDA error: {e}")?;
    }
    writeln!(out, "GPUs: {}", r.cuda.devices.len())?;
    for d in &r.cuda.devices {
        writeln!(
            out,
            "  {:>2}  {}  {}  {:.1} GiB  cc {}.{}",
            d.ordinal,
            d.name,
            d.pci_bus_id(),
            d.total_memory as f64 / (1u64 << 30) as f64,
            d.compute_capability.0,
            d.compute_capability.1
        )?;
    }
    match &r.launcher {
        None => writeln!(out, "launcher: none detected (single process)")?,
        Some(l) => writeln!(
            out,
            "launcher: {} (world size {}, rank {}, local rank {}; from {})",
            l.kind,
            opt(l.world_size),
            opt(l.rank),
            opt(l.local_rank),
            l.evidence.join(" ")
        )?,
    }
    writeln!(out, "variables: {}", r.variables.len())?;
    for v in &r.variables {
        writeln!(out, "  {v}")?;
    }
    Ok(())
}

fn opt(v: Option<usize>) -> String {
    v.map_or_else(|| "?".into(), |v| v.to_string())
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
            backend: meta.backend.clone(),
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

/// Environment variable prefixes recorded with every run (never the whole environment).
pub const ENV_PREFIXES: [&str; 6] = ["NCCL_", "CUDA_", "UCX_", "OMPI_", "SLURM_", "PMIX_"];

/// The environment variables recorded with a run (the [`ENV_PREFIXES`] families), sorted.
pub fn recorded_env() -> Vec<String> {
    let mut env: Vec<String> = std::env::vars()
        .filter(|(k, _)| ENV_PREFIXES.iter().any(|p| k.starts_with(p)))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    env.sort();
    env
}

/// This process's redactor (its host names and PID), for files written outside a run.
pub fn process_redactor() -> crate::core::redact::Redactor {
    redactor(&[])
}

/// The redactor of this process's outputs: its host names (short and full) and PIDs.
pub fn redactor(devices: &[crate::bench::backend::DeviceInfo]) -> crate::core::redact::Redactor {
    let mut hosts: Vec<String> = devices.iter().map(|d| d.hostname.clone()).collect();
    hosts.push(crate::bench::backend::nccl::hostname());
    hosts.push(full_hostname());
    let mut pids: Vec<u32> = devices.iter().map(|d| d.pid).collect();
    pids.push(std::process::id());
    crate::core::redact::Redactor::for_names(hosts, pids)
}

/// The host name as the system has it (possibly with its domain).
fn full_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::topology;

    /// A run record with this host name, no library and no devices.
    fn record(host: &str) -> RunEnvironment {
        RunEnvironment {
            schema: RUN_SCHEMA,
            command_line: vec!["ncclbench".into(), "--tuning".into()],
            start_time: "2026-01-01 00:00:00".into(),
            end_time: None,
            backend: "nccl".into(),
            layout: Layout {
                processes: 1,
                nranks: 2,
                local_ranks: 2,
            },
            hostnames: vec![host.into()],
            ranks: Vec::new(),
            redacted: false,
            system: EnvReport {
                schema: SCHEMA,
                ncclbench_version: "0",
                mpi_support: false,
                hostname: host.into(),
                nccl: NcclReport {
                    headers: "2.28.7".into(),
                    requested: None,
                    path: None,
                    version: None,
                    version_code: None,
                    missing_optional: Vec::new(),
                    error: None,
                },
                cuda: CudaReport {
                    driver_version: None,
                    devices: Vec::new(),
                    error: None,
                },
                launcher: None,
                variables: Vec::new(),
            },
            topology: None,
        }
    }

    fn topology_of(log: &str) -> TopologySummary {
        let s = crate::logs::parse_reader(log.as_bytes(), "t", &Default::default()).unwrap();
        topology::summarize(&s).unwrap()
    }

    /// Without a captured log the JSON has no `topology` key; with one it has the facts.
    #[test]
    fn topology_is_serialized_only_when_captured() {
        let mut e = record("n1");
        assert!(!e.to_json().contains("\"topology\""));
        e.topology = Some(topology_of(
            "n1:5:5 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 18000 commId 0x2 - Init COMPLETE\n\
             n1:5:6 [0] NCCL INFO Using network Socket\n",
        ));
        let v: serde_json::Value = serde_json::from_str(&e.to_json()).unwrap();
        assert_eq!(v["topology"]["comm"]["nranks"], 1);
        assert_eq!(v["topology"]["networks"][0], "Socket");
        assert_eq!(v["topology"]["comm"]["hosts"][0]["host"], "n1");
    }

    /// The run's redaction reaches the topology: its host names and addresses are masked
    /// with the same tokens as the rest of the record.
    #[test]
    fn redaction_covers_the_topology() {
        let mut e = record("gpu-node-17");
        e.topology = Some(topology_of(
            "gpu-node-17:5:5 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>\n\
             gpu-node-17:5:5 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 18000 commId 0x2 - Init COMPLETE\n\
             gpu-node-17:5:6 [0] NCCL INFO Connected all rings\n",
        ));
        let r = crate::core::redact::Redactor::for_names(["gpu-node-17".to_string()], [5]);
        e.redact(&r);
        let json = e.to_json();
        assert!(!json.contains("gpu-node-17"), "{json}");
        assert!(!json.contains("10.1.2.3"), "{json}");
        let t = e.topology.as_ref().unwrap();
        assert_eq!(t.comm.as_ref().unwrap().hosts[0].host, e.hostnames[0]);
        assert_eq!(t.comm.as_ref().unwrap().connected, ["Connected all rings"]);
    }
}
