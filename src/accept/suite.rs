//! The stages of an acceptance run: per collective a correctness stage (`-c 1 -d all -o all`
//! over the profile's small sizes, one iteration) and a performance stage (the profile's
//! sweep, float/sum, no checking, so verification never slows the measurement). Each stage is
//! the run configuration the `accept` command line starts every stage from, with the stage's
//! own settings made in code, and the equivalent `ncclbench <collective>` command line,
//! recorded in `accept.json` so that any stage can be rerun by hand.

use super::model::Stage;
use super::profile::Suite;
use crate::config::accept::StageFlags;
use crate::config::{RootChoice, RunConfig};
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::result::Step;
use std::path::Path;
use std::time::Duration;

/// One stage to run.
#[derive(Debug, Clone, PartialEq)]
pub struct StagePlan {
    /// Stage.
    pub stage: Stage,
    /// Collective.
    pub collective: Collective,
    /// What the stage runs.
    pub config: RunConfig,
    /// The equivalent command line, program name first.
    pub argv: Vec<String>,
    /// The text table file, relative to the output directory.
    pub text: String,
    /// The CSV file, relative to the output directory.
    pub csv: String,
}

/// The timeout the stages use.
pub fn timeout_s(suite: &Suite, flags: &StageFlags) -> u64 {
    flags.timeout_s.unwrap_or(suite.timeout_s)
}

/// The performance sweep's end before any memory bound.
pub fn perf_max_bytes(suite: &Suite, flags: &StageFlags) -> u64 {
    flags.perf_max_bytes.unwrap_or(suite.perf_max_bytes)
}

/// Where the performance sweep of the host (and MPI) backend ends unless `-e` says otherwise.
pub const HOST_PERF_MAX_BYTES: u64 = 64 << 20;

/// Where the correctness stages of the host (and MPI) backend end unless `-e` is given.
pub const HOST_CORRECTNESS_MAX_BYTES: u64 = 1 << 20;

/// Bounds `suite` and the performance sweep's end (returned) for a host-memory backend.
pub fn bound_for_host(suite: &mut Suite, perf_max: u64) -> u64 {
    suite.correctness_max_bytes = suite.correctness_max_bytes.min(HOST_CORRECTNESS_MAX_BYTES);
    suite.correctness_min_bytes = suite.correctness_min_bytes.min(suite.correctness_max_bytes);
    perf_max.min(HOST_PERF_MAX_BYTES)
}

/// What the suite will run, and on a host-memory backend roughly how long it takes, for the
/// first lines of an acceptance run.
pub fn describe(suite: &Suite, perf_max: u64, on_host: bool) -> String {
    let size = crate::core::units::iec_bytes_whole;
    let mut s = format!(
        "# suite: {} collectives, each a correctness stage ({}..{}, every type and op) then a \
         performance stage ({}..{}, {} iterations)",
        suite.collectives.len(),
        size(suite.correctness_min_bytes),
        size(suite.correctness_max_bytes),
        size(suite.perf_min_bytes.min(perf_max)),
        size(perf_max),
        suite.iters
    );
    if on_host {
        s.push_str("; buffers in host memory, sizes bounded unless -e is given");
        if perf_max <= HOST_PERF_MAX_BYTES {
            s.push_str(&format!(", {HOST_ESTIMATE}"));
        }
    }
    s
}

/// How long the default suite took on the host backend, measured on a 2-core machine.
const HOST_ESTIMATE: &str = "about a minute on 2 cores";

/// The plan of one stage.
pub fn one(
    suite: &Suite,
    flags: &StageFlags,
    out: &Path,
    stage: Stage,
    coll: Collective,
    perf_max: u64,
) -> StagePlan {
    let dir = stage.name();
    let text = format!("{dir}/{}.txt", coll.name());
    let csv = format!("{dir}/{}.csv", coll.name());
    let timeout = timeout_s(suite, flags);
    let mut cfg = flags.base.config.clone();
    cfg.collective = coll;
    let factor = match stage {
        Stage::Correctness => {
            cfg.min_bytes = suite.correctness_min_bytes;
            cfg.max_bytes = suite.correctness_max_bytes;
            cfg.check = 1;
            cfg.dtypes = DataType::ALL.to_vec();
            cfg.ops = RedOp::ALL.to_vec();
            cfg.warmup_iters = 1;
            cfg.iters = 1;
            suite.correctness_step_factor
        }
        Stage::Performance | Stage::Baseline | Stage::Locate => {
            cfg.min_bytes = suite.perf_min_bytes.min(perf_max);
            cfg.max_bytes = perf_max;
            cfg.check = 0;
            cfg.warmup_iters = suite.warmup_iters;
            cfg.iters = suite.iters;
            suite.perf_step_factor
        }
    };
    // A profile's step factors are at least 2 (checked when it is loaded).
    cfg.step = Step::Factor(factor);
    cfg.timeout = Some(Duration::from_secs(timeout));
    cfg.csv = Some(out.join(&csv));
    cfg.argv = command_line(&cfg, stage, flags);
    StagePlan {
        stage,
        collective: coll,
        argv: cfg.argv.clone(),
        config: cfg,
        text,
        csv,
    }
}

/// The command line that runs `cfg`, a `stage` of the suite, by hand.
fn command_line(cfg: &RunConfig, stage: Stage, flags: &StageFlags) -> Vec<String> {
    let mut argv: Vec<String> = vec!["ncclbench".into(), cfg.collective.name().into()];
    let mut flag = |f: &str, v: String| {
        argv.push(f.into());
        argv.push(v);
    };
    let factor = match cfg.step {
        Step::Factor(f) => f,
        Step::Bytes(_) => 1,
    };
    flag("-b", cfg.min_bytes.to_string());
    flag("-e", cfg.max_bytes.to_string());
    flag("-f", factor.to_string());
    flag("-c", cfg.check.to_string());
    if stage == Stage::Correctness {
        flag("-d", "all".into());
        flag("-o", "all".into());
    }
    flag("-w", cfg.warmup_iters.to_string());
    flag("-n", cfg.iters.to_string());
    let timeout = cfg.timeout.map_or(0, |t| t.as_secs());
    flag("-T", timeout.to_string());
    if let Some(csv) = &cfg.csv {
        flag("--csv", csv.display().to_string());
    }
    argv.extend(flags.base.given.args());
    argv
}

/// Why `coll` cannot run on `nranks` ranks with the stages' `-r` (`root`), found before the
/// first stage rather than after the ones before it: hypercube needs a power of two, a rooted
/// collective's `-r` must name a rank of the job. `None`: it can.
pub fn cannot_run(coll: Collective, root: RootChoice, nranks: usize) -> Option<String> {
    if coll.needs_power_of_two_ranks() && !nranks.is_power_of_two() {
        return Some(format!(
            "{} needs a power-of-two number of ranks, this job has {nranks}",
            coll.name()
        ));
    }
    match root {
        RootChoice::One(r) if coll.rooted() && r >= nranks => Some(format!(
            "{} with -r {r} needs more than {r} ranks, this job has {nranks}",
            coll.name()
        )),
        _ => None,
    }
}

/// The sweep end that fits in host memory for backends whose buffers live there: `avail`
/// bytes shared by `ranks_here` ranks, three buffers each (send, receive, expected), with
/// nccl-tests' reserve. `None` when `max` fits.
pub fn host_memory_cap(max: u64, avail: u64, ranks_here: usize) -> Option<u64> {
    let per_rank = avail / ranks_here.max(1) as u64;
    crate::bench::plan::clamp_max_bytes(max, per_rank, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn stages_that_cannot_run_at_a_rank_count_are_found_before_any_runs() {
        let all = RootChoice::All;
        for n in [3, 6, 12] {
            let why = cannot_run(Collective::Hypercube, all, n).unwrap();
            assert!(
                why.contains("power-of-two") && why.contains(&n.to_string()),
                "{why}"
            );
            assert_eq!(cannot_run(Collective::AllReduce, all, n), None);
            assert_eq!(cannot_run(Collective::Broadcast, all, n), None);
        }
        assert_eq!(cannot_run(Collective::Hypercube, all, 8), None);
        let four = RootChoice::One(4);
        assert!(cannot_run(Collective::Broadcast, four, 3).is_some());
        assert_eq!(cannot_run(Collective::Broadcast, four, 6), None);
        assert_eq!(cannot_run(Collective::AllReduce, four, 3), None);
    }

    #[test]
    fn host_memory_bounds_the_sweep_per_rank() {
        const GIB: u64 = 1 << 30;
        assert_eq!(host_memory_cap(GIB, 64 * GIB, 2), None);
        let cap = host_memory_cap(8 * GIB, 16 * GIB, 2).unwrap();
        assert!(cap < 8 * GIB / 3 && cap > GIB, "{cap}");
    }
}
