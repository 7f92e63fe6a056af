//! `ncclbench locate`: join the job, start its backend over every rank, agree on the output
//! directory, run the locate protocol ([`crate::bench::locate::run`]), and on rank 0 print and
//! write the report; every process exits with rank 0's status (0 no suspect, 1 suspects).

use crate::bench::job::join::Join;
use crate::bench::locate::inject::Switches;
use crate::bench::locate::measure::Spec;
use crate::bench::locate::render::{self, Context};
use crate::bench::locate::run::{self, Finding, Options, Role};
use crate::bench::locate::verdict::Floors;
use crate::cli::Command;
use crate::config::locate::LocateConfig;
use crate::config::RunConfig;
use crate::core::error::Error;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Exit status when some suspect was found.
pub const SUSPECTS: u8 = 1;

/// Runs `ncclbench locate`; returns the exit status.
pub fn run(cfg: &LocateConfig) -> Result<u8, Error> {
    for var in ["NCCL_TESTS_SPLIT", "NCCL_TESTS_SPLIT_MASK"] {
        if std::env::var_os(var).is_some() {
            return Err(Error::usage(format!(
                "locate makes its own groups over the whole job; unset {var}"
            )));
        }
    }
    let run_cfg = job_config(cfg)?;
    let join = Join::open(&run_cfg)?;
    let out = cfg.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "ncclbench-locate-{}",
            chrono::Local::now().format("%Y%m%d-%H%M%S")
        ))
    });
    let mut boot = join.bootstrap();
    let root = boot.is_root();
    let prepared = if root { prepare_dir(&out) } else { Ok(()) };
    if boot.max_u64(u64::from(prepared.is_err()))? > 0 {
        prepared?;
        return Ok(crate::core::error::exit::USAGE);
    }
    drop(boot);
    let floors = floors(cfg.profile.as_deref())?;
    locate_joined(cfg, &run_cfg, &join, &out, floors).map_err(|e| join.failed(e))
}

/// The benchmark configuration the job and its backend are opened with.
fn job_config(cfg: &LocateConfig) -> Result<RunConfig, Error> {
    let mut argv: Vec<String> = vec!["ncclbench".into(), cfg.collective.name().into()];
    argv.extend(["-T".into(), cfg.timeout_s.to_string()]);
    argv.extend(cfg.passthrough.iter().cloned());
    let argv: Vec<std::ffi::OsString> = argv.iter().map(Into::into).collect();
    match crate::cli::parse(&argv)? {
        Command::Run(c) => Ok(c),
        _ => Err(Error::usage(
            "locate: its flags do not make a benchmark job",
        )),
    }
}

/// The output directory: new or empty, made here.
fn prepare_dir(out: &Path) -> Result<(), Error> {
    let io = |source| Error::Io {
        path: out.to_path_buf(),
        source,
    };
    if out.exists() && std::fs::read_dir(out).map_err(io)?.next().is_some() {
        return Err(Error::usage(format!(
            "locate: --out {} is not empty (results are never overwritten; give a new \
             directory)",
            out.display()
        )));
    }
    std::fs::create_dir_all(out).map_err(io)
}

/// The `[locate]` floors of `--profile`, if one is given.
fn floors(profile: Option<&str>) -> Result<Floors, Error> {
    let Some(name) = profile else {
        return Ok(Floors::default());
    };
    let p = crate::accept::profile::load(Some(name))?;
    Ok(p.locate.map_or_else(Floors::default, |l| Floors {
        intra_gbs: l.intra_node_min_gbs,
        inter_gbs: l.inter_node_min_gbs,
    }))
}

/// The run inside the joined job.
fn locate_joined(
    cfg: &LocateConfig,
    run_cfg: &RunConfig,
    join: &Join,
    out: &Path,
    floors: Floors,
) -> Result<u8, Error> {
    let started = crate::bench::runner::local_time();
    let (mut backend, notes) = crate::commands::bench::start_backend(run_cfg, join)?;
    let backend_name = backend.info().name;
    let on_host = backend_name != "nccl";
    let bytes = cfg
        .bytes
        .unwrap_or(if on_host { 1 << 20 } else { 256 << 20 });
    let timeout = Duration::from_secs(cfg.timeout_s);
    let opts = Options {
        spec: Spec {
            coll: cfg.collective,
            bytes: usize::try_from(bytes).map_err(|_| Error::usage("-b is too large"))?,
            warmup: cfg.warmup,
            iters: cfg.iters,
            timeout,
        },
        rounds: cfg.rounds,
        pair_rounds: 3,
        floors,
    };
    let switches = Switches::from(|k| std::env::var(k).ok()).map_err(Error::Usage)?;
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
    let (status, silent) = match &role {
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
                nics: nics(&cfg.nccl_logs, f)?,
            };
            report(f, &ctx, out, status)?;
            (status, !f.silent.is_empty())
        }
        Role::Member { anyone_silent } => (0, *anyone_silent),
        Role::LeftOut => (0, true),
    };
    if !silent {
        // A sub-communicator of a rank that stopped answering may never close: only a job
        // whose every rank answered shuts its backend down together.
        backend.close()?;
    }
    join.finished();
    let wait = match role {
        // Left out: nothing more to do than wait for rank 0 to end the job.
        Role::LeftOut => Duration::from_secs(24 * 3600),
        _ => timeout * 2,
    };
    let status = run::finish(coord.as_mut(), status, silent, wait)?;
    if silent {
        // Rank 0 ends this job (its ranks that stopped answering cannot shut MPI down with the
        // rest): wait for that here rather than in MPI's shutdown, then go anyway.
        std::thread::sleep(timeout * 2 + Duration::from_secs(5));
        let _ = std::io::stdout().flush();
        std::process::exit(i32::from(status));
    }
    Ok(status)
}

/// Prints the report and writes `locate.txt`, `locate.json` and `hostfile`.
fn report(f: &Finding, ctx: &Context, out: &Path, status: u8) -> Result<(), Error> {
    let hostfile = out.join("hostfile");
    let text = render::text(f, ctx, Some(&hostfile.display().to_string()));
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
        &(serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"),
    )?;
    write("hostfile", &render::hostfile(f))
}

/// The NIC of each (host, rail) the NCCL logs show, for naming a slow rail's NIC.
fn nics(
    logs: &[PathBuf],
    f: &Finding,
) -> Result<std::collections::BTreeMap<(String, usize), String>, Error> {
    if logs.is_empty() {
        return Ok(Default::default());
    }
    crate::bench::locate::nics::from_logs(logs, &f.layout)
}
