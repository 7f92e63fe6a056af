//! Probing this machine for what a run would use — this build, the libnccl it would load and
//! its version, the CUDA driver and GPUs, the launcher that started it, the recorded
//! variables — into the [`EnvReport`] of `ncclbench env` and every run's record; its text form;
//! and this process's redactor. Nothing here fails: each part reports its own error instead.

use std::io::Write;
use std::path::Path;

use crate::bench::cuda;
use crate::bench::job::launcher;
use crate::result::environment::{CudaReport, EnvReport, NcclReport, SCHEMA};

/// Gathers the report; `nccl_lib` is `--nccl-lib`.
pub fn collect(nccl_lib: Option<&Path>) -> EnvReport {
    let requested = nccl_sys::resolve_request(nccl_lib);
    let mut nccl = NcclReport {
        headers: nccl_sys::HEADERS_VERSION.to_string(),
        requested: requested.as_ref().map(|p| p.display().to_string()),
        path: None,
        found_by: None,
        found_as: None,
        version: None,
        version_code: None,
        missing_optional: Vec::new(),
        error: None,
    };
    // The same search a run makes, so the report names the library a run would load.
    match nccl_sys::Nccl::find(nccl_lib) {
        Ok(lib) => {
            nccl.path = Some(lib.path().display().to_string());
            if let Some(found) = lib.found() {
                nccl.found_by = Some(found.step.key().to_owned());
                nccl.found_as = Some(found.target.to_string());
            }
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
        hostname: crate::core::host::gethostname_short(),
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
        (_, _, Some(e)) => writeln!(out, "NCCL library: not loaded: {}", e.replace('\n', "\n  "))?,
        _ => writeln!(out, "NCCL library: not loaded")?,
    }
    if let (Some(_), Some(by)) = (&r.nccl.path, &r.nccl.found_by) {
        writeln!(
            out,
            "NCCL library found by: {} ({})",
            step_label(by),
            r.nccl.found_as.as_deref().unwrap_or("?")
        )?;
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

/// The reader's name of a library search step recorded by its key.
fn step_label(key: &str) -> &str {
    nccl_sys::Step::ORDER
        .iter()
        .find(|s| s.key() == key)
        .map_or(key, |s| s.label())
}

fn opt(v: Option<usize>) -> String {
    v.map_or_else(|| "?".into(), |v| v.to_string())
}

/// Environment variable prefixes recorded with every run (never the whole environment).
pub const ENV_PREFIXES: [&str; 6] = ["NCCL_", "CUDA_", "UCX_", "OMPI_", "SLURM_", "PMIX_"];

/// The environment variables recorded with a run (the [`ENV_PREFIXES`] families), sorted. A
/// name or value that is not UTF-8 (any byte string is a valid variable) is kept with its
/// invalid bytes written `\xNN` and the entry marked [`NOT_UTF8`], never dropped or a panic.
pub fn recorded_env() -> Vec<String> {
    let mut env: Vec<String> = std::env::vars_os()
        .filter_map(|(k, v)| {
            let key = k.as_encoded_bytes();
            ENV_PREFIXES
                .iter()
                .any(|p| key.starts_with(p.as_bytes()))
                .then(|| env_entry(key, v.as_encoded_bytes()))
        })
        .collect();
    env.sort();
    env
}

/// What ends a recorded `NAME=value` entry whose name or value is not UTF-8.
pub const NOT_UTF8: &str = " [not UTF-8]";

/// `NAME=value`, invalid UTF-8 escaped and marked.
fn env_entry(name: &[u8], value: &[u8]) -> String {
    let (name, bad_name) = escape(name);
    let (value, bad_value) = escape(value);
    let mark = if bad_name || bad_value { NOT_UTF8 } else { "" };
    format!("{name}={value}{mark}")
}

/// The bytes as text, each byte of an invalid UTF-8 sequence as `\xNN`; whether any was.
fn escape(bytes: &[u8]) -> (String, bool) {
    let mut out = String::with_capacity(bytes.len());
    let mut bad = false;
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
            bad = true;
        }
    }
    (out, bad)
}

/// This process's redactor (its host names and PID), for files written outside a run.
pub fn process_redactor() -> crate::core::redact::Redactor {
    redactor(&[])
}

/// The redactor of this process's outputs: its host names (short and full) and PIDs.
pub fn redactor(devices: &[crate::bench::backend::DeviceInfo]) -> crate::core::redact::Redactor {
    let mut hosts: Vec<String> = devices.iter().map(|d| d.hostname.clone()).collect();
    hosts.push(crate::core::host::gethostname_short());
    hosts.push(crate::core::host::full_hostname());
    let mut pids: Vec<u32> = devices.iter().map(|d| d.pid).collect();
    pids.push(std::process::id());
    crate::core::redact::Redactor::for_names(hosts, pids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::topology;
    use crate::result::environment::{Layout, RunEnvironment, RUN_SCHEMA};
    use crate::result::topology::TopologySummary;

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
                    found_by: None,
                    found_as: None,
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
