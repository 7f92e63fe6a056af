//! The guard that every process of a job runs one plan. Processes whose plans differ (other
//! arguments on an MPMD launch line, an environment variable set on one node) would wait
//! forever in the first collective one of them skips; instead each process describes its plan
//! in named parts (a short summary and an FNV-1a digest of the whole part), rank 0 gathers and
//! compares them, and every process stops with exit status 2 before any collective, rank 0
//! naming the processes and the parts that differ. A single process skips it.

use super::Plan;
use crate::bench::job::bootstrap::Bootstrap;
use crate::config::{RunConfig, TimeReduce};
use crate::core::error::Error;
use crate::result::Placement;
use std::collections::BTreeMap;

/// The part name of a process that could not build a plan.
const NO_PLAN: &str = "no plan";

/// Checks through `boot` that every process built the same plan (or failed the same way);
/// collective. `outcome` is this process's plan or the error that stopped it.
pub fn check(
    boot: &mut dyn Bootstrap,
    cfg: &RunConfig,
    outcome: Result<&Plan, &Error>,
) -> Result<(), Error> {
    if boot.world_size() == 1 {
        return Ok(());
    }
    let rank = boot.world_rank();
    let lines: Vec<String> = match outcome {
        Ok(plan) => parts(plan, cfg)
            .into_iter()
            .map(|(name, summary, digest)| format!("{rank}\t{name}\t{summary}\t{digest:016x}"))
            .collect(),
        Err(e) => vec![format!(
            "{rank}\t{NO_PLAN}\t{}\t-",
            one_line(&e.to_string())
        )],
    };
    let all = boot.gather_lines(&lines)?;
    let found = if boot.is_root() { verdict(&all) } else { None };
    if boot.max_u64(u64::from(found.is_some()))? == 0 {
        return Ok(());
    }
    if !boot.is_root() {
        // Process 0 names the differences; leaving at once could have the launcher kill it
        // (or its hang watch report this process as dead) before its line is out.
        std::thread::sleep(crate::bench::job::launcher::OTHER_RANKS_WAIT);
    }
    Err(Error::usage(found.unwrap_or_else(|| {
        format!(
            "process {rank}: the processes of this job built different plans (process 0 names \
             the differences); nothing was run"
        )
    })))
}

/// The named parts of `plan` that must be equal on every process: (name, summary, digest).
pub(super) fn parts(plan: &Plan, cfg: &RunConfig) -> Vec<(&'static str, String, u64)> {
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
fn digest(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn one_line(text: &str) -> String {
    text.replace(['\t', '\n'], " ")
}

/// Rank 0's error for the gathered `rank\tpart\tsummary\tdigest` lines, or `None` when every
/// process has the same parts.
pub(super) fn verdict(lines: &[String]) -> Option<String> {
    // part -> (digest -> (summary, ranks)), parts in the order they first appear.
    let mut order: Vec<String> = Vec::new();
    let mut seen: BTreeMap<String, BTreeMap<String, (String, Vec<usize>)>> = BTreeMap::new();
    let mut failed: Vec<(usize, String)> = Vec::new();
    let mut ranks = std::collections::BTreeSet::new();
    for l in lines {
        let f: Vec<&str> = l.splitn(4, '\t').collect();
        let [rank, part, summary, digest] = f[..] else {
            continue;
        };
        let Ok(rank) = rank.parse::<usize>() else {
            continue;
        };
        ranks.insert(rank);
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
            what.push(format!("process {r} could not build one ({e})"));
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
                .map(|(r, e)| format!("process {r} could not build one ({e})")),
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
            .map(|(rs, s)| format!("{} {s}", label(rs)))
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

/// `process 3 has` or `processes 0-2,5 have` (ranks ascending).
fn label(ranks: &[usize]) -> String {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for &r in ranks {
        match spans.last_mut() {
            Some((_, hi)) if *hi + 1 == r => *hi = r,
            _ => spans.push((r, r)),
        }
    }
    let text: Vec<String> = spans
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    if ranks.len() == 1 {
        format!("process {} has", text[0])
    } else {
        format!("processes {} have", text.join(","))
    }
}
