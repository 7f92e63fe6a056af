//! A stage of `accept` is the run its recorded command line stands for: the configuration made
//! in code equals what the CLI makes of that command line, so a stage reruns by hand exactly.

use crate::accept::model::Stage;
use crate::accept::profile::{self, Suite};
use crate::accept::suite::{one, StagePlan};
use crate::cli::Command;
use crate::config::accept::StageFlags;
use crate::config::RunConfig;
use crate::core::collective::Collective;
use std::path::Path;

fn suite() -> Suite {
    profile::load(None).unwrap().suite
}

/// The stage flags of `ncclbench accept ARGS`.
fn flags(args: &[&str]) -> StageFlags {
    let argv: Vec<std::ffi::OsString> = ["ncclbench", "accept"]
        .iter()
        .chain(args)
        .map(Into::into)
        .collect();
    match crate::cli::parse(&argv) {
        Ok(Command::Accept(a)) => a.flags,
        other => panic!("accept {args:?}: {other:?}"),
    }
}

/// The stage's configuration, checked against the CLI's reading of its command line.
fn config(p: &StagePlan) -> RunConfig {
    let argv: Vec<std::ffi::OsString> = p.argv.iter().map(Into::into).collect();
    match crate::cli::parse(&argv) {
        Ok(Command::Run(parsed)) => assert_eq!(parsed, p.config, "{:?}", p.argv),
        other => panic!("{:?} is not a run: {other:?}", p.argv),
    }
    p.config.clone()
}

#[test]
fn correctness_checks_every_type_and_op_and_performance_only_measures() {
    let flags = flags(&["--backend", "host", "-g", "2", "-T", "9"]);
    let out = Path::new("/tmp/acc");
    let c = one(
        &suite(),
        &flags,
        out,
        Stage::Correctness,
        Collective::Reduce,
        1 << 20,
    );
    let cfg = config(&c);
    assert_eq!(cfg.check, 1);
    assert_eq!(cfg.dtypes.len(), crate::core::dtype::DataType::ALL.len());
    assert_eq!(cfg.ngpus, 2);
    assert_eq!(cfg.timeout, Some(std::time::Duration::from_secs(9)));
    assert_eq!(c.csv, "correctness/reduce.csv");
    assert_eq!(
        cfg.csv.as_deref(),
        Some(out.join("correctness/reduce.csv").as_path())
    );
    let p = one(
        &suite(),
        &flags,
        out,
        Stage::Performance,
        Collective::Reduce,
        1 << 20,
    );
    let cfg = config(&p);
    assert_eq!((cfg.check, cfg.max_bytes, cfg.min_bytes), (0, 1 << 20, 8));
    assert_eq!(cfg.iters, suite().iters);
}

#[test]
fn every_benchmark_flag_reaches_the_stage_as_given() {
    let flags = flags(&[
        "--backend",
        "nccl",
        "-t",
        "2",
        "-g",
        "1",
        "--nccl-lib",
        "/opt/nccl/libnccl.so.2",
        "--devices",
        "3,1",
        "--redact",
    ]);
    let p = one(
        &suite(),
        &flags,
        Path::new("out"),
        Stage::Performance,
        Collective::AllToAll,
        1 << 30,
    );
    let cfg = config(&p);
    assert_eq!(
        cfg.backend,
        crate::config::BackendChoice::Use(crate::result::BackendKind::Nccl)
    );
    assert_eq!((cfg.nthreads, cfg.ngpus), (2, 1));
    assert_eq!(cfg.devices, Some(vec![3, 1]));
    assert!(cfg.redact);
    assert_eq!(
        p.argv[p.argv.len() - 11..],
        [
            "--backend",
            "nccl",
            "-t",
            "2",
            "-g",
            "1",
            "--nccl-lib",
            "/opt/nccl/libnccl.so.2",
            "--devices",
            "3,1",
            "--redact"
        ]
    );
}
