//! A locate run inside a job that is already open: the backend started over every rank, the
//! protocol run, rank 0's report printed and written into the output directory ([`measure`]);
//! then the ending every process takes part in ([`end`]). `ncclbench locate` runs both back
//! to back; `accept`'s locate stage writes its own report in between.

use crate::bench::job::join::Join;
use crate::config::locate::LocateConfig;
use crate::config::RunConfig;
use crate::core::error::Error;
use crate::core::redact::Redactor;
use crate::locate::inject::Switches;
use crate::locate::measure::Spec;
use crate::locate::render::{self, Context};
use crate::locate::run::{self, Finding, Options, Role};
use crate::locate::verdict::Floors;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// Exit status when some suspect was found.
pub const SUSPECTS: u8 = 1;

/// What one process knows once the protocol has run.
#[derive(Debug)]
pub(crate) struct Located {
    /// Rank 0's judgement (`None` on every other process).
    pub finding: Option<Box<Finding>>,
    /// Rank 0's status: 0 no suspect, 1 suspects (0 on every other process).
    pub status: u8,
    /// Some rank stopped answering: the job cannot shut down together.
    silent: bool,
    /// Rank 0 left this process out (it reported too late).
    left_out: bool,
}

/// Runs the protocol in the opened `join` with the backend `run_cfg` asks for; rank 0 prints
/// the report and writes `locate.txt`, `locate.json` and `hostfile` into `out` (which exists).
pub(crate) fn measure(
    cfg: &LocateConfig,
    run_cfg: &RunConfig,
    join: &Join,
    out: &Path,
    floors: Floors,
) -> Result<Located, Error> {
    let started = crate::bench::runner::local_time();
    let (mut backend, notes) = crate::commands::bench::start_backend(run_cfg, join)?;
    let backend_name = backend.info().name;
    let on_host = backend_name != crate::result::BackendKind::Nccl;
    let bytes = cfg
        .bytes
        .unwrap_or(if on_host { 1 << 20 } else { 256 << 20 });
    let opts = Options {
        spec: Spec {
            coll: cfg.collective,
            bytes: usize::try_from(bytes).map_err(|_| Error::usage("-b is too large"))?,
            warmup: cfg.warmup,
            iters: cfg.iters,
            timeout: Duration::from_secs(cfg.timeout_s),
        },
        rounds: cfg.rounds,
        pair_rounds: 3,
        floors,
    };
    let switches = Switches::from(crate::core::test_hooks::var).map_err(Error::Usage)?;
    let mut coord = join.coordinator();
    let root = coord.rank() == 0;
    let mut say = |line: &str| {
        if root {
            let mut o = std::io::stdout().lock();
            let _ = writeln!(o, "{line}").and_then(|()| o.flush());
        }
    };
    say(&format!(
        "# ncclbench locate: {} ranks, {} {} per rank, backend {backend_name}, -T {} s, results \
         in {}",
        backend.info().nranks,
        cfg.collective.name(),
        crate::core::units::iec_bytes_whole(bytes),
        cfg.timeout_s,
        out.display()
    ));
    for n in &notes {
        say(n);
    }
    let role = run::run(&opts, backend.as_mut(), coord.as_mut(), &switches, &mut say)?;
    let located = match role {
        Role::Judge(f) => {
            let status = if f.verdict.suspects.is_empty() {
                crate::core::error::exit::OK
            } else {
                SUSPECTS
            };
            let ctx = Context {
                collective: cfg.collective.name().to_string(),
                bytes,
                backend: backend_name.to_string(),
                timeout_s: cfg.timeout_s,
                started,
                finished: crate::bench::runner::local_time(),
                nics: nics(&cfg.nccl_logs, &f)?,
            };
            report(&f, &ctx, out, status, cfg.redact)?;
            Located {
                silent: !f.silent.is_empty(),
                finding: Some(f),
                status,
                left_out: false,
            }
        }
        Role::Member { anyone_silent } => Located {
            finding: None,
            status: 0,
            silent: anyone_silent,
            left_out: false,
        },
        Role::LeftOut => Located {
            finding: None,
            status: 0,
            silent: true,
            left_out: true,
        },
    };
    if !located.silent {
        // A sub-communicator of a rank that stopped answering may never close: only a job
        // whose every rank answered shuts its backend down together.
        backend.close()?;
    }
    Ok(located)
}

/// Every process learns rank 0's `status` and returns it. A job with a rank that stopped
/// answering cannot shut down together: rank 0 ends it, and this process exits here.
pub(crate) fn end(join: &Join, located: &Located, status: u8, timeout_s: u64) -> Result<u8, Error> {
    let timeout = Duration::from_secs(timeout_s);
    join.finished();
    let wait = if located.left_out {
        // Left out: nothing more to do than wait for rank 0 to end the job.
        Duration::from_secs(24 * 3600)
    } else {
        timeout * 2
    };
    let mut coord = join.coordinator();
    let status = run::finish(coord.as_mut(), status, located.silent, wait)?;
    if located.silent {
        // Rank 0 ends this job (its ranks that stopped answering cannot shut MPI down with the
        // rest): wait for that here rather than in MPI's shutdown, then go anyway.
        std::thread::sleep(timeout * 2 + Duration::from_secs(5));
        let _ = std::io::stdout().flush();
        std::process::exit(i32::from(status));
    }
    Ok(status)
}

/// Prints the report and writes `locate.txt`, `locate.json` and `hostfile`; with `redact`,
/// every host of the job and this process's PID masked in all three.
fn report(f: &Finding, ctx: &Context, out: &Path, status: u8, redact: bool) -> Result<(), Error> {
    let redactor = redactor(f);
    let mask = |s: String| if redact { redactor.text(&s) } else { s };
    let hostfile = out.join("hostfile");
    let text = mask(render::text(f, ctx, Some(&hostfile.display().to_string())));
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())?;
    o.flush()?;
    let write = |name: &str, body: &str| {
        let path = out.join(name);
        std::fs::write(&path, body).map_err(|source| Error::Io { path, source })
    };
    write("locate.txt", &text)?;
    let doc = render::json(f, ctx, status);
    write(
        "locate.json",
        &mask(serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"),
    )?;
    write("hostfile", &mask(render::hostfile(f)))
}

/// The redactor of a locate report: every host of the job, this host's names, this PID.
pub(crate) fn redactor(f: &Finding) -> Redactor {
    let mut hosts: Vec<String> = f.layout.nodes.iter().map(|n| n.host.clone()).collect();
    hosts.push(crate::core::host::gethostname_short());
    hosts.push(crate::core::host::full_hostname());
    Redactor::for_names(hosts, [std::process::id()])
}

/// The NIC of each (host, rail) the NCCL logs show, for naming a slow rail's NIC.
fn nics(
    logs: &[std::path::PathBuf],
    f: &Finding,
) -> Result<std::collections::BTreeMap<(String, usize), String>, Error> {
    if logs.is_empty() {
        return Ok(Default::default());
    }
    crate::locate::nics::from_logs(logs, &f.layout)
}
