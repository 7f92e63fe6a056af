//! `ncclbench locate`: join the job, start its backend over every rank, agree on the output
//! directory, run the locate protocol ([`crate::locate::run`]), and on rank 0 print and
//! write the report; every process exits with rank 0's status (0 no suspect, 1 suspects).
//!
//! Here: the command and what it needs before the job runs. `joined`: the run inside an opened
//! job and its ending, which `accept`'s locate stage uses too.

mod joined;

use crate::bench::job::join::Join;
use crate::config::locate::LocateConfig;
use crate::config::RunConfig;
use crate::core::error::Error;
use crate::locate::verdict::Floors;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) use joined::{end, measure, redactor, Located};

/// Runs `ncclbench locate`; returns the exit status.
pub fn run(cfg: &LocateConfig) -> Result<u8, Error> {
    for var in ["NCCL_TESTS_SPLIT", "NCCL_TESTS_SPLIT_MASK"] {
        if std::env::var_os(var).is_some() {
            return Err(Error::usage(format!(
                "locate makes its own groups over the whole job; unset {var}"
            )));
        }
    }
    // Every input is checked before the job opens: a mistyped log or profile found after
    // every round was measured would cost the whole measurement.
    check_logs(&cfg.nccl_logs)?;
    let procs = crate::bench::job::launcher::detect()
        .and_then(|l| l.world_size)
        .unwrap_or(1);
    let nranks = procs * cfg.base.config.local_ranks();
    if nranks < 2 {
        return Err(Error::usage(format!(
            "locate: a job of {nranks} rank cannot be judged: locate compares ranks with each \
             other (give -g/-t or a launcher 2 ranks or more)"
        )));
    }
    let floors = floors(cfg.profile.as_deref())?;
    let run_cfg = job_config(cfg);
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
    measure(cfg, &run_cfg, &join, &out, floors)
        .and_then(|located| end(&join, &located, located.status, cfg.timeout_s))
        .map_err(|e| join.failed(e))
}

/// The benchmark configuration the job and its backend are opened with: the benchmark flags'
/// configuration, running the collective with every wait bounded by `-T`.
pub(crate) fn job_config(cfg: &LocateConfig) -> RunConfig {
    let mut run = cfg.base.config.clone();
    run.collective = cfg.collective;
    run.timeout = Some(Duration::from_secs(cfg.timeout_s));
    run.argv = ["ncclbench", cfg.collective.name(), "-T"]
        .map(String::from)
        .into_iter()
        .chain([cfg.timeout_s.to_string()])
        .chain(cfg.base.given.args())
        .collect();
    run
}

/// The output directory: new or empty, made here.
pub(crate) fn prepare_dir(out: &Path) -> Result<(), Error> {
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

/// Every `--nccl-log` is a file that can be read (one line naming the first that is not).
fn check_logs(logs: &[PathBuf]) -> Result<(), Error> {
    for log in logs {
        let readable = std::fs::File::open(log).and_then(|f| {
            if f.metadata()?.is_dir() {
                Err(std::io::Error::new(
                    std::io::ErrorKind::IsADirectory,
                    "is a directory (name a log file)",
                ))
            } else {
                Ok(())
            }
        });
        readable.map_err(|e| Error::usage(format!("locate: --nccl-log {}: {e}", log.display())))?;
    }
    Ok(())
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
