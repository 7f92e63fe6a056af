//! The plan of a job: machine facts reduced over the processes, and the guard that stops
//! processes whose plans still differ, both before any collective.

use super::{config, info, World};
use crate::bench::job::bootstrap::SingleProcess;
use crate::bench::plan::{build, build_for_job, clamp_max_bytes, facts, guard};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::op::RedOp;

/// An 80 GB H100's and a 141 GB H200's `totalGlobalMem`.
const MEM_80: u64 = 85_017_624_576;
const MEM_141: u64 = 150_754_820_096;

fn all(_: DataType, _: RedOp) -> bool {
    true
}

fn no_fp8(d: DataType, _: RedOp) -> bool {
    !matches!(d, DataType::F8e4m3 | DataType::F8e5m2)
}

/// What a process with `mem` and `supports` contributes to the facts' reduction.
fn contribution(mem: Option<u64>, supports: fn(DataType, RedOp) -> bool) -> Vec<u64> {
    let mut w = World {
        rank: 1,
        size: 2,
        ..World::default()
    };
    facts::agree(&info(mem), supports, &mut w).unwrap();
    w.sent_min
}

#[test]
fn the_job_plans_with_the_smallest_memory_and_fp8_only_where_every_process_has_it() {
    let mut cfg = config();
    cfg.max_bytes = 64 << 30;
    // Rank 0 (this process) is an H200 with fp8; rank 1 an 80 GB A100-class node without.
    let mut world = World {
        rank: 0,
        size: 2,
        others_min: vec![contribution(Some(MEM_80), no_fp8)],
        ..World::default()
    };
    let (plan, skipped) = build_for_job(&cfg, &info(Some(MEM_141)), all, &mut world).unwrap();
    assert_eq!(
        plan.reduced_max_bytes,
        clamp_max_bytes(64 << 30, MEM_80, true)
    );
    assert_eq!(plan.sweeps.len(), 1);
    assert_eq!(plan.sweeps[0].dtype, DataType::Float);
    assert_eq!(skipped, [(DataType::F8e4m3, RedOp::Sum)]);
    // Alone, the same process would have planned more sizes and fp8: the plans that deadlocked.
    let (alone, _) = build(&cfg, &info(Some(MEM_141)), all).unwrap();
    assert_eq!(alone.sweeps.len(), 2);
    assert!(alone.sizes.len() > plan.sizes.len());
}

#[test]
fn unknown_memory_leaves_the_known_minimum_and_none_stays_none() {
    let mut w = World {
        size: 2,
        others_min: vec![contribution(None, all)],
        ..World::default()
    };
    let job = facts::agree(&info(Some(MEM_80)), all, &mut w).unwrap();
    assert_eq!(job.info.device_memory, Some(MEM_80));
    let mut w = World {
        size: 2,
        others_min: vec![contribution(None, all)],
        ..World::default()
    };
    let job = facts::agree(&info(None), no_fp8, &mut w).unwrap();
    assert_eq!(job.info.device_memory, None);
    assert!(job.supports(DataType::Half, RedOp::Avg));
    assert!(!job.supports(DataType::F8e5m2, RedOp::Sum));
}

#[test]
fn a_single_process_builds_exactly_what_build_builds() {
    let cfg = config();
    let (a, sa) = build_for_job(&cfg, &info(Some(MEM_80)), no_fp8, &mut SingleProcess).unwrap();
    let (b, sb) = build(&cfg, &info(Some(MEM_80)), no_fp8).unwrap();
    assert_eq!((a, sa), (b, sb));
}

/// Rank 1's guard lines for `cfg`'s plan (rank 0 found nothing, so rank 1 passes).
fn rank1_lines(cfg: &crate::config::RunConfig) -> Vec<String> {
    let (plan, _) = build(cfg, &info(None), all).unwrap();
    let mut w = World {
        rank: 1,
        size: 2,
        ..World::default()
    };
    guard::check(&mut w, cfg, crate::result::BackendKind::Host, Ok(&plan)).unwrap();
    w.sent_lines
}

#[test]
fn processes_with_different_plans_are_named_with_what_differs() {
    let cfg = config();
    let mut other = config();
    other.max_bytes = 4 << 20;
    other.iters = 5;
    let (plan, _) = build(&cfg, &info(None), all).unwrap();
    let mut root = World {
        size: 2,
        others_lines: rank1_lines(&other),
        ..World::default()
    };
    let e = guard::check(&mut root, &cfg, crate::result::BackendKind::Host, Ok(&plan)).unwrap_err();
    assert!(matches!(e, Error::Usage(_)), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("built different plans"), "{e}");
    assert!(
        e.contains(&format!(
            "sizes: process 0 ({h}) has 7 sizes 1048576..67108864 B, process 1 ({h}) has 3 \
             sizes 1048576..4194304 B",
            h = crate::core::host::short_hostname()
        )),
        "{e}"
    );
    assert!(e.contains("iterations: process 0 ("), "{e}");
    assert!(e.contains(") has -w 5 -n 20"), "{e}");
    assert!(!e.contains("types, ops and roots"), "{e}");
    // The other process learns from rank 0 that the job stops, and says so in one line.
    let mut member = World {
        rank: 1,
        size: 2,
        others_max: 1,
        ..World::default()
    };
    let e = guard::check(
        &mut member,
        &other,
        crate::result::BackendKind::Host,
        Ok(&plan),
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("process 1: "), "{e}");
}

#[test]
fn equal_plans_pass_and_a_failure_everywhere_reports_itself() {
    let cfg = config();
    let (plan, _) = build(&cfg, &info(None), all).unwrap();
    let mut root = World {
        size: 2,
        others_lines: rank1_lines(&cfg),
        ..World::default()
    };
    guard::check(&mut root, &cfg, crate::result::BackendKind::Host, Ok(&plan)).unwrap();
    // Every process fails alike: no guard error, each process reports its own.
    let failure = Error::usage("nothing to run");
    let mut w = World {
        rank: 1,
        size: 2,
        ..World::default()
    };
    guard::check(
        &mut w,
        &cfg,
        crate::result::BackendKind::Host,
        Err(&failure),
    )
    .unwrap();
    let mut root = World {
        size: 2,
        others_lines: w.sent_lines.clone(),
        ..World::default()
    };
    guard::check(
        &mut root,
        &cfg,
        crate::result::BackendKind::Host,
        Err(&failure),
    )
    .unwrap();
    // Only one fails: rank 0 names it.
    let mut root = World {
        size: 2,
        others_lines: w.sent_lines,
        ..World::default()
    };
    let e = guard::check(&mut root, &cfg, crate::result::BackendKind::Host, Ok(&plan)).unwrap_err();
    assert!(
        e.to_string()
            .contains(") could not build one (nothing to run)"),
        "{e}"
    );
}

#[test]
fn groups_of_processes_are_named_as_ranges() {
    let line = |r: usize, d: &str| format!("{r}\th{}\tsizes\t{d} sizes\t{d}", r / 3);
    let lines: Vec<String> = [0, 1, 2, 5]
        .iter()
        .map(|&r| line(r, "1"))
        .chain([line(3, "2"), line(4, "2")])
        .collect();
    let v = guard::verdict(&lines).unwrap();
    assert!(
        v.ends_with(
            "sizes: processes 0-2,5 (h0, h1) have 1 sizes, processes 3-4 (h1) have 2 sizes"
        ),
        "{v}"
    );
    // Equal summaries with different digests show the digests.
    let v = guard::verdict(&[
        "0\ta\tsizes\tsame\t01".into(),
        "1\tb\tsizes\tsame\t02".into(),
    ])
    .unwrap();
    assert!(v.contains("process 0 (a) has same (digest 01)"), "{v}");
}
