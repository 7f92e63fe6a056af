//! Rank 0's report of a locate run: the ranked suspects table with the evidence of each
//! (measured against the job's reference, per pairing), the scheduler's exclude list in Slurm
//! hostlist form, a hostfile without the suspects, and the JSON document (schema
//! `ncclbench-locate/1`).

use super::groups::{ref_key, Judged, Status};
use super::hostlist;
use super::run::Finding;
use super::schedule::Kind;
use super::suspects::Suspect;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// What the report says about the run besides the finding.
#[derive(Debug, Clone)]
pub struct Context {
    /// `all_reduce` or `sendrecv`.
    pub collective: String,
    /// Bytes per rank buffer.
    pub bytes: u64,
    /// Backend name.
    pub backend: String,
    /// `-T` seconds.
    pub timeout_s: u64,
    /// When the run started and finished.
    pub started: String,
    /// When it finished.
    pub finished: String,
    /// NIC names per (host, rail) from NCCL logs, where given.
    pub nics: std::collections::BTreeMap<(String, usize), String>,
}

/// A duration for people.
fn us(t: f64) -> String {
    if t >= 1e6 {
        format!("{:.2} s", t / 1e6)
    } else if t >= 1e3 {
        format!("{:.2} ms", t / 1e3)
    } else {
        format!("{t:.1} us")
    }
}

/// Where a group is, in words.
pub fn place(f: &Finding, g: &Judged) -> String {
    let host = |n: usize| f.layout.nodes[n].host.as_str();
    match g.kind {
        Kind::Intra => format!("intra-node {}", host(g.nodes[0])),
        Kind::Rail => format!(
            "rail {} {} - {}",
            g.rail.unwrap_or(0),
            host(g.nodes[0]),
            host(g.nodes[1])
        ),
        Kind::Pair => format!(
            "pair {} GPU {}-GPU {}",
            host(g.nodes[0]),
            f.layout.ranks[g.members[0]].gpu,
            f.layout.ranks[g.members[1]].gpu
        ),
    }
}

/// One group's evidence line: what it measured against its reference.
pub fn evidence(f: &Finding, g: &Judged, timeout_s: u64) -> String {
    let what = format!("{} (round {})", place(f, g), g.round + 1);
    match &g.status {
        Status::Ok => {
            let reference = f.verdict.references.get(&ref_key(g)).copied();
            format!(
                "{what}: {} vs {} reference, {:.1}x{}",
                us(g.time_us.unwrap_or(0.0)),
                reference.map_or("no".into(), us),
                g.ratio.unwrap_or(0.0),
                g.busbw_gbs
                    .map_or(String::new(), |b| format!(", busbw {b:.2} GB/s"))
            )
        }
        Status::TimedOut => format!("{what}: timed out (a wait passed -T {timeout_s} s)"),
        Status::Failed(m) => format!("{what}: failed: {m}"),
        Status::Missing(r) => format!(
            "{what}: rank {} stopped answering; partners' waits passed -T {timeout_s} s",
            r.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
        ),
    }
}

/// The hosts without the excluded ones, one per line (a plain hostfile).
pub fn hostfile(f: &Finding) -> String {
    let out = f.verdict.excluded_hosts(&f.layout);
    f.layout
        .nodes
        .iter()
        .filter(|n| !out.contains(&n.host))
        .map(|n| format!("{}\n", n.host))
        .collect()
}

/// `--exclude=...` for Slurm, or `None` when no host is excluded.
pub fn slurm_exclude(f: &Finding) -> Option<String> {
    let out = f.verdict.excluded_hosts(&f.layout);
    (!out.is_empty()).then(|| format!("--exclude={}", hostlist::compress(&out)))
}

fn nic(ctx: &Context, s: &Suspect) -> String {
    let Some(rail) = s.rail else {
        return String::new();
    };
    let names: Vec<String> = s
        .hosts
        .iter()
        .filter_map(|h| ctx.nics.get(&(h.clone(), rail)).map(|n| format!("{h}:{n}")))
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!(" (NIC {})", names.join(", "))
    }
}

/// The text report: suspects table, exclude line and hostfile note.
pub fn text(f: &Finding, ctx: &Context, hostfile_path: Option<&str>) -> String {
    let mut s = String::new();
    let refs: Vec<String> = f
        .verdict
        .references
        .iter()
        .map(|(&(kind, node), &t)| match node {
            Some(n) => format!("{} {}: {}", kind.name(), f.layout.nodes[n].host, us(t)),
            None => format!("{}: {}", kind.name(), us(t)),
        })
        .collect();
    let _ = writeln!(
        s,
        "# job reference (lower median) per kind: {}",
        if refs.is_empty() {
            "none".to_string()
        } else {
            refs.join(", ")
        }
    );
    let slow = f.verdict.groups.iter().filter(|g| g.slow).count();
    let _ = writeln!(
        s,
        "# {} groups measured in {} rounds, {slow} slow (at least {}x the reference, below a \
         floor, timed out or failed)",
        f.verdict.groups.len(),
        f.rounds.len(),
        super::groups::SLOW_RATIO
    );
    for n in &f.notes {
        let _ = writeln!(s, "# note: {n}");
    }
    let suspects = &f.verdict.suspects;
    if suspects.is_empty() {
        let _ = writeln!(s, "# locate: no suspect");
        return s;
    }
    let _ = writeln!(s, "#");
    let _ = writeln!(
        s,
        "# {:>4}  {:<5} {:<36} {:>7}  evidence (measured vs the job's reference)",
        "no.", "what", "where", "worst"
    );
    for (i, sus) in suspects.iter().enumerate() {
        let worst = if sus.score.is_finite() {
            format!("{:.1}x", sus.score)
        } else {
            "-T".to_string()
        };
        let place = format!("{}{}", sus.place, nic(ctx, sus));
        let mut ev = sus
            .evidence
            .iter()
            .map(|&k| evidence(f, &f.verdict.groups[k], ctx.timeout_s));
        let _ = writeln!(
            s,
            "# {:>4}  {:<5} {:<36} {:>7}  {}",
            i + 1,
            sus.what.name(),
            place,
            worst,
            ev.next().unwrap_or_else(|| "stopped answering".into())
        );
        for line in ev {
            let _ = writeln!(s, "# {:>4}  {:<5} {:<36} {:>7}  {line}", "", "", "", "");
        }
    }
    let _ = writeln!(s, "#");
    let _ = writeln!(
        s,
        "# locate: {} suspect{}",
        suspects.len(),
        if suspects.len() == 1 { "" } else { "s" }
    );
    match slurm_exclude(f) {
        Some(x) => {
            let _ = writeln!(s, "# slurm: {x}");
        }
        None => {
            let _ = writeln!(
                s,
                "# slurm: no host to exclude (links between healthy nodes: excluding either \
                 end avoids the link; check its cable and switch ports)"
            );
        }
    }
    if let Some(p) = hostfile_path {
        let n = f.layout.nodes.len() - f.verdict.excluded_hosts(&f.layout).len();
        let hosts = if n == 1 { "host" } else { "hosts" };
        let _ = writeln!(s, "# hostfile without the suspects: {p} ({n} {hosts})");
    }
    s
}

fn group_json(f: &Finding, g: &Judged) -> Value {
    let finite = |x: Option<f64>| x.filter(|v| v.is_finite());
    let (status, detail) = match &g.status {
        Status::Ok => ("ok", Value::Null),
        Status::TimedOut => ("timed_out", Value::Null),
        Status::Failed(m) => ("failed", json!(m)),
        Status::Missing(r) => ("rank_stopped_answering", json!(r)),
    };
    json!({
        "round": g.round + 1,
        "group": g.group,
        "kind": g.kind.name(),
        "members": g.members,
        "hosts": g.nodes.iter().map(|&n| f.layout.nodes[n].host.clone()).collect::<Vec<_>>(),
        "rail": g.rail,
        "time_us": finite(g.time_us),
        "busbw_gbs": finite(g.busbw_gbs),
        "ratio": finite(g.ratio),
        "slow": g.slow,
        "status": status,
        "detail": detail,
    })
}

/// The JSON document (schema `ncclbench-locate/1`).
pub fn json(f: &Finding, ctx: &Context, status: u8) -> Value {
    let suspects: Vec<Value> = f
        .verdict
        .suspects
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({
                "rank": i + 1,
                "what": s.what.name(),
                "where": s.place,
                "hosts": s.hosts,
                "ranks": s.ranks,
                "rail": s.rail,
                "nic": s.rail.map(|r| s.hosts.iter().filter_map(|h| ctx.nics.get(&(h.clone(), r)).cloned()).collect::<Vec<_>>()),
                "worst_ratio": Some(s.score).filter(|x| x.is_finite()),
                "exclude": s.exclude,
                "evidence": s.evidence.iter().map(|&k| {
                    let g = &f.verdict.groups[k];
                    json!({"round": g.round + 1, "group": g.group, "text": evidence(f, g, ctx.timeout_s)})
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let references: Vec<Value> = f
        .verdict
        .references
        .iter()
        .map(|(&(kind, node), &t)| {
            json!({"kind": kind.name(), "host": node.map(|n| f.layout.nodes[n].host.clone()), "time_us": t})
        })
        .collect();
    json!({
        "schema": "ncclbench-locate/1",
        "started": ctx.started,
        "finished": ctx.finished,
        "collective": ctx.collective,
        "bytes": ctx.bytes,
        "backend": ctx.backend,
        "timeout_s": ctx.timeout_s,
        "nranks": f.layout.ranks.len(),
        "nodes": f.layout.nodes.iter().map(|n| json!({"host": n.host, "ranks": n.ranks})).collect::<Vec<_>>(),
        "slow_ratio": super::groups::SLOW_RATIO,
        "references": references,
        "groups": f.verdict.groups.iter().map(|g| group_json(f, g)).collect::<Vec<_>>(),
        "silent": f.silent.iter().map(|(r, k)| json!({"rank": r, "round": k + 1})).collect::<Vec<_>>(),
        "suspects": suspects,
        "exclude": f.verdict.excluded_hosts(&f.layout),
        "slurm_exclude": slurm_exclude(f),
        "notes": f.notes,
        "status": status,
    })
}
