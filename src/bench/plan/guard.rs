//! The guard that every process of a job runs one plan. Processes whose plans differ (other
//! arguments on an MPMD launch line, an environment variable set on one node) would wait
//! forever in the first collective one of them skips; instead each process describes its plan
//! in named parts (a short summary and an FNV-1a digest of the whole part), rank 0 gathers and
//! compares them, and every process stops with exit status 2 before any collective, rank 0
//! naming the processes (and their hosts) and the parts that differ, the others quietly. The
//! parts are everything that decides the collective calls: the collective, sizes, types,
//! iterations, `-z`, `--timer`, `--verify`, `-u`, `-x`, `-R`, `-T` (the hang-diagnosis
//! channel is opened collectively), the backend, the `NCCL_TESTS_*` variables and alltoallv's
//! traffic ([`super::env`]). A malformed split variable is refused here too, once. A single
//! process only checks its split variables.

use super::Plan;
use crate::bench::job::bootstrap::Bootstrap;
use crate::config::{RunConfig, TimeReduce, Timer, Verify};
use crate::core::error::Error;
use crate::result::{BackendKind, Placement};
use std::collections::BTreeMap;

/// The part name of a process that could not build a plan.
const NO_PLAN: &str = "no plan";

/// Checks through `boot` that every process built the same plan (or failed the same way);
/// collective. `outcome` is this process's plan or the error that stopped it; `backend` the
/// backend it opened.
pub fn check(
    boot: &mut dyn Bootstrap,
    cfg: &RunConfig,
    backend: BackendKind,
    outcome: Result<&Plan, &Error>,
) -> Result<(), Error> {
    let split = super::env::check_split();
    if boot.world_size() == 1 {
        return split;
    }
    let rank = boot.world_rank();
    let host = one_line(&crate::core::host::short_hostname());
    // This process's failure: its split variables first (they are the job's), then its plan.
    let failure = match (&split, outcome) {
        (Err(e), _) | (_, Err(e)) => Some((e.exit_code(), one_line(&e.to_string()))),
        _ => None,
    };
    let lines: Vec<String> = match (&failure, outcome) {
        (None, Ok(plan)) => parts(plan, cfg, backend)
            .into_iter()
            .map(|(name, summary, digest)| {
                format!("{rank}\t{host}\t{name}\t{summary}\t{digest:016x}")
            })
            .collect(),
        (f, _) => vec![format!(
            "{rank}\t{host}\t{NO_PLAN}\t{}\t-",
            f.as_ref().map_or("", |(_, e)| e.as_str())
        )],
    };
    let all = boot.gather_lines(&lines)?;
    let found = if boot.is_root() { verdict(&all) } else { None };
    if boot.max_u64(u64::from(found.is_some()))? == 0 {
        // Every process failed alike (or none did): the one line a single process prints,
        // by rank 0 alone.
        if let Some((code, _)) = failure {
            boot.end(code);
            split?;
        }
        return Ok(());
    }
    boot.end(crate::core::error::exit::USAGE);
    Err(Error::usage(found.unwrap_or_else(|| {
        format!(
            "process {rank}: the processes of this job built different plans (process 0 names \
             the differences); nothing was run"
        )
    })))
}

/// The named parts of `plan` that must be equal on every process: (name, summary, digest).
pub(super) fn parts(
    plan: &Plan,
    cfg: &RunConfig,
    backend: BackendKind,
) -> Vec<(&'static str, String, u64)> {
    let placements: Vec<&str> = Placement::BOTH.iter().map(|p| p.name()).collect();
    let sweeps: Vec<String> = plan
        .sweeps
        .iter()
        .map(|s| match s.root {
            Some(r) => format!("{}/{}/root {r}", s.dtype, s.op),
            None => format!("{}/{}", s.dtype, s.op),
        })
        .collect();
    let shown = sweeps.iter().take(4).cloned().collect::<Vec<_>>().join(" ");
    let more = sweeps.len().saturating_sub(4);
    let average = match cfg.average {
        TimeReduce::Rank0 => 0,
        TimeReduce::Mean => 1,
        TimeReduce::Min => 2,
        TimeReduce::Max => 3,
    };
    let whole = |summary: String| {
        let d = digest(&summary);
        (summary, d)
    };
    let mut out = Vec::new();
    let (s, d) = whole(format!(
        "{} ({})",
        plan.collective.name(),
        placements.join(", ")
    ));
    out.push(("collective", s, d));
    let (s, d) = whole(format!("-t {} -g {}", cfg.nthreads, cfg.ngpus));
    out.push(("ranks per process", s, d));
    let summary = match more {
        0 => format!("{} sweeps: {shown}", sweeps.len()),
        n => format!("{} sweeps: {shown} and {n} more", sweeps.len()),
    };
    out.push(("types, ops and roots", summary, digest(&sweeps.join(" "))));
    out.push((
        "sizes",
        size_summary(&plan.sizes),
        digest_sizes(&plan.sizes),
    ));
    out.push((
        "warm-up sizes",
        size_summary(&plan.warmup_sizes),
        digest_sizes(&plan.warmup_sizes),
    ));
    let (s, d) = whole(format!(
        "-w {} -n {} -m {} -N {} -c {} -G {}",
        cfg.warmup_iters,
        cfg.iters,
        cfg.agg_iters,
        cfg.cycles.unwrap_or(0),
        cfg.check,
        cfg.graph
    ));
    out.push(("iterations", s, d));
    let (s, d) = whole(format!(
        "-a {average} -I {} -K {} -R {}{}",
        u8::from(cfg.per_iter),
        cfg.per_iter_skip,
        cfg.local_register,
        // Every process takes part in the per-group gather, or none.
        if cfg.per_group { " --per-group" } else { "" }
    ));
    out.push(("reductions and registration", s, d));
    let (s, d) = whole(format!(
        "-z {} --timer {} --verify {} -T {}",
        cfg.blocking,
        match cfg.timer {
            Timer::Host => "host",
            Timer::Device => "device",
        },
        match cfg.verify {
            Verify::Auto => "auto",
            Verify::Device => "device",
            Verify::Host => "host",
        },
        cfg.timeout
            .map_or("off".into(), |t| t.as_secs().to_string()),
    ));
    out.push(("blocking, timing and checking", s, d));
    let cta = cfg.cta_policy.map_or("default".into(), |x| x.to_string());
    let (s, d) = whole(format!("-u {} -x {cta}", cfg.unalign));
    out.push(("buffers and communicator", s, d));
    let (s, d) = whole(backend.to_string());
    out.push(("backend", s, d));
    for (name, value) in super::env::compared() {
        let (s, d) = whole(value);
        out.push((name, s, d));
    }
    let (s, d) = super::env::traffic(&plan.traffic);
    out.push(("alltoallv traffic", s, d));
    out
}

fn size_summary(sizes: &[u64]) -> String {
    match (sizes.first(), sizes.last()) {
        (Some(a), Some(b)) => format!("{} sizes {a}..{b} B", sizes.len()),
        _ => "no sizes".into(),
    }
}

fn digest_sizes(sizes: &[u64]) -> u64 {
    digest(
        &sizes
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// FNV-1a, 64 bits: the same on every build and machine (the std hasher is not).
pub(super) fn digest(text: &str) -> u64 {
    digest_more(0xcbf2_9ce4_8422_2325, text.as_bytes())
}

/// [`digest`] continued over `bytes`.
pub(super) fn digest_more(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn one_line(text: &str) -> String {
    text.replace(['\t', '\n'], " ")
}

/// Rank 0's error for the gathered `rank\thost\tpart\tsummary\tdigest` lines, or `None`
/// when every process has the same parts.
pub(super) fn verdict(lines: &[String]) -> Option<String> {
    // part -> (digest -> (summary, ranks)), parts in the order they first appear.
    let mut order: Vec<String> = Vec::new();
    let mut seen: BTreeMap<String, BTreeMap<String, (String, Vec<usize>)>> = BTreeMap::new();
    let mut failed: Vec<(usize, String)> = Vec::new();
    let mut ranks = std::collections::BTreeSet::new();
    let mut hosts: BTreeMap<usize, String> = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.splitn(5, '\t').collect();
        let [rank, host, part, summary, digest] = f[..] else {
            continue;
        };
        let Ok(rank) = rank.parse::<usize>() else {
            continue;
        };
        ranks.insert(rank);
        hosts.insert(rank, host.to_string());
        if part == NO_PLAN {
            failed.push((rank, summary.to_string()));
            continue;
        }
        if !seen.contains_key(part) {
            order.push(part.to_string());
        }
        let entry = seen.entry(part.to_string()).or_default();
        entry
            .entry(digest.to_string())
            .or_insert_with(|| (summary.to_string(), Vec::new()))
            .1
            .push(rank);
    }
    let mut what = Vec::new();
    if !failed.is_empty() && failed.len() < ranks.len() {
        for (r, e) in &failed {
            what.push(format!("{} could not build one ({e})", who(&[*r], &hosts)));
        }
    } else if !failed.is_empty() {
        // Every process failed: with one message each reports it itself.
        let first = &failed[0].1;
        if failed.iter().all(|(_, e)| e == first) {
            return None;
        }
        what.extend(
            failed
                .iter()
                .map(|(r, e)| format!("{} could not build one ({e})", who(&[*r], &hosts))),
        );
    }
    for part in &order {
        let groups = &seen[part];
        if groups.len() < 2 {
            continue;
        }
        let same_summary = {
            let mut s: Vec<&String> = groups.values().map(|(s, _)| s).collect();
            s.dedup();
            s.len() < groups.len()
        };
        let mut listed: Vec<(&Vec<usize>, String)> = groups
            .iter()
            .map(|(d, (s, rs))| {
                let s = if same_summary {
                    format!("{s} (digest {d})")
                } else {
                    s.clone()
                };
                (rs, s)
            })
            .collect();
        listed.sort_by_key(|(rs, _)| rs.first().copied());
        let text: Vec<String> = listed
            .iter()
            .map(|(rs, s)| format!("{} {s}", label(rs, &hosts)))
            .collect();
        what.push(format!("{part}: {}", text.join(", ")));
    }
    (!what.is_empty()).then(|| {
        format!(
            "the processes of this job built different plans, so the first collective one of \
             them skips would wait forever; nothing was run: {}",
            what.join("; ")
        )
    })
}

/// `process 3 (hostB) has` or `processes 0-2,5 (hostA, hostB) have` (ranks ascending).
fn label(ranks: &[usize], hosts: &BTreeMap<usize, String>) -> String {
    let verb = if ranks.len() == 1 { "has" } else { "have" };
    format!("{} {verb}", who(ranks, hosts))
}

/// `process 3 (hostB)` or `processes 0-2,5 (hostA, hostB)`, at most four hosts named.
fn who(ranks: &[usize], hosts: &BTreeMap<usize, String>) -> String {
    let mut names: Vec<&str> = Vec::new();
    for r in ranks {
        if let Some(h) = hosts.get(r).filter(|h| !names.contains(&h.as_str())) {
            names.push(h);
        }
    }
    let mut on = names.iter().take(4).copied().collect::<Vec<_>>().join(", ");
    if names.len() > 4 {
        on += &format!(" and {} more hosts", names.len() - 4);
    }
    let spans = crate::bench::job::failure::spans(ranks);
    match ranks.len() {
        1 => format!("process {spans} ({on})"),
        _ => format!("processes {spans} ({on})"),
    }
}
