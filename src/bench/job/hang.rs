//! Hang diagnosis of `-T`: every rank numbers the collective operations it runs (backend calls
//! and bootstrap barriers/reductions alike, so the numbers agree across ranks), and when a wait
//! exceeds the deadline rank 0 collects each rank's progress out of band and prints a table and
//! a verdict: all ranks inside the same op (the network or the library is stuck) or some ranks
//! behind the rest (those are the culprits). This file holds the progress record, its wire
//! line and the verdict; the channel is `crate::bench::job::mpi::oob`.

use std::fmt::Write as _;

/// One rank's position in the op sequence.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Progress {
    /// World rank.
    pub rank: usize,
    /// Short host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// Sequence number of the last completed op (0: none yet).
    pub completed: u64,
    /// The op this rank is inside (posted, not yet completed), if any.
    pub inside: Option<u64>,
    /// The current or last op: collective or bootstrap step.
    pub what: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Where the rank is: `waiting in MPI_Iallgather`, `host`, ...
    pub phase: String,
}

impl Progress {
    /// Distance along the sequence: inside op k ranks after having completed k-1.
    pub fn position(&self) -> u64 {
        match self.inside {
            Some(k) => 2 * k,
            None => 2 * self.completed + 1,
        }
    }

    /// The tab-separated wire form (no tabs or newlines inside fields).
    pub fn to_line(&self) -> String {
        let clean = |s: &str| s.replace(['\t', '\n'], " ");
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            self.rank,
            clean(&self.host),
            self.pid,
            self.completed,
            self.inside.map_or("-".to_string(), |k| k.to_string()),
            clean(&self.what),
            self.bytes,
            clean(&self.phase)
        )
    }

    /// Parses [`Progress::to_line`].
    pub fn from_line(line: &str) -> Option<Progress> {
        let f: Vec<&str> = line.trim_end_matches('\n').split('\t').collect();
        if f.len() != 8 {
            return None;
        }
        Some(Progress {
            rank: f[0].parse().ok()?,
            host: f[1].to_string(),
            pid: f[2].parse().ok()?,
            completed: f[3].parse().ok()?,
            inside: if f[4] == "-" {
                None
            } else {
                Some(f[4].parse().ok()?)
            },
            what: f[5].to_string(),
            bytes: f[6].parse().ok()?,
            phase: f[7].to_string(),
        })
    }
}

/// The verdict over every rank's report (`None`: the rank did not report).
pub fn verdict(reports: &[Option<Progress>]) -> String {
    let silent: Vec<usize> = (0..reports.len())
        .filter(|&r| reports[r].is_none())
        .collect();
    if !silent.is_empty() {
        return format!(
            "rank(s) {} did not report (process dead or unreachable): culprit",
            list(&silent)
        );
    }
    let got: Vec<&Progress> = reports.iter().flatten().collect();
    let (Some(lo), Some(hi)) = (
        got.iter().map(|p| p.position()).min(),
        got.iter().map(|p| p.position()).max(),
    ) else {
        return "no rank reported".to_string();
    };
    if lo == hi {
        let p = got[0];
        return match p.inside {
            Some(k) => format!(
                "all ranks stuck at op {k} ({}, {} B): infrastructure or library",
                p.what, p.bytes
            ),
            None => format!(
                "all ranks idle after op {}: every rank stopped outside communication (host side)",
                p.completed
            ),
        };
    }
    let behind: Vec<&Progress> = got.iter().copied().filter(|p| p.position() == lo).collect();
    let ahead = got.iter().find(|p| p.position() == hi).copied();
    let at = |p: &Progress| p.inside.unwrap_or(p.completed + 1);
    let ranks: Vec<usize> = behind.iter().map(|p| p.rank).collect();
    format!(
        "rank {} is behind at op {} (culprit): last completed op {}, {}; others reached op {}",
        list(&ranks),
        at(behind[0]),
        behind[0].completed,
        behind[0].phase,
        ahead.map_or(0, at)
    )
}

fn list(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// The report rank 0 prints: a `#` table of every rank, the verdict, and where to look next.
pub fn report(seconds: u64, reason: &str, reports: &[Option<Progress>]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Hang diagnosis (-T {seconds} s): {reason}");
    let _ = writeln!(
        s,
        "# {:>5} {:>12} {:>8} {:>9} {:>6} {:>14} {:>12}  phase",
        "rank", "host", "pid", "completed", "inside", "op", "bytes"
    );
    for (r, p) in reports.iter().enumerate() {
        match p {
            Some(p) => {
                let _ = writeln!(
                    s,
                    "# {:>5} {:>12} {:>8} {:>9} {:>6} {:>14} {:>12}  {}",
                    p.rank,
                    p.host,
                    p.pid,
                    p.completed,
                    p.inside.map_or("-".to_string(), |k| k.to_string()),
                    p.what,
                    p.bytes,
                    p.phase
                );
            }
            None => {
                let _ = writeln!(s, "# {r:>5} (no report)");
            }
        }
    }
    let _ = writeln!(s, "# Verdict: {}", verdict(reports));
    let _ = writeln!(
        s,
        "# With --backend nccl on NCCL >= 2.24, NCCL's RAS subsystem (NCCL_RAS_ENABLE=1, query \
         with `ncclras`) shows the state of every communicator rank."
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(rank: usize, completed: u64, inside: Option<u64>) -> Option<Progress> {
        Some(Progress {
            rank,
            host: "h".into(),
            pid: 1,
            completed,
            inside,
            what: "all_reduce".into(),
            bytes: 64,
            phase: if inside.is_some() {
                "waiting in MPI".into()
            } else {
                "host".into()
            },
        })
    }

    #[test]
    fn lines_round_trip() {
        let a = p(3, 9, Some(10)).unwrap();
        assert_eq!(Progress::from_line(&a.to_line()), Some(a));
        let b = p(0, 0, None).unwrap();
        assert_eq!(Progress::from_line(&b.to_line()), Some(b));
        assert_eq!(Progress::from_line("garbage"), None);
    }

    #[test]
    fn verdicts() {
        let all = [p(0, 9, Some(10)), p(1, 9, Some(10))];
        assert!(verdict(&all).starts_with("all ranks stuck at op 10"));
        let one = [p(0, 9, Some(10)), p(1, 9, None), p(2, 9, Some(10))];
        let v = verdict(&one);
        assert!(v.starts_with("rank 1 is behind at op 10 (culprit)"), "{v}");
        let dead = [p(0, 9, Some(10)), None];
        assert!(verdict(&dead).starts_with("rank(s) 1 did not report"));
        let r = report(5, "rank 0 timed out", &one);
        assert!(
            r.contains("# Verdict: rank 1 is behind") && r.contains("RAS"),
            "{r}"
        );
    }
}
