//! A failure of some processes of a job, said once. Where one process cannot go on (fewer
//! GPUs than `-g` asks, a malformed variable on one node), every process learns it in one
//! exchange, so none waits in a collective the failed one never joins; rank 0 prints one
//! line naming the processes and hosts that failed and why (`rank 3 (hostB): ...`), and every
//! process exits with the job's status (the largest of the failures'), the others quietly.

use crate::bench::job::bootstrap::Bootstrap;
use crate::core::error::{exit, Error};
use std::collections::BTreeMap;

/// Agrees on `mine` across the job (collective: every process calls it at the same point).
/// When no process failed, `mine` comes back. Otherwise rank 0 gets the job's error and every
/// other process ends (see [`Bootstrap::end`]). In a single process `mine` comes back as is.
pub fn agree<T>(boot: &mut dyn Bootstrap, mine: Result<T, Error>) -> Result<T, Error> {
    if boot.world_size() == 1 {
        return mine;
    }
    let status = mine.as_ref().err().map_or(0, |e| e.exit_code().max(1));
    let agreed = boot.max_u64(u64::from(status))?;
    if agreed == 0 {
        return mine;
    }
    let line = match &mine {
        Ok(_) => vec![],
        Err(e) => vec![format!(
            "{}\t{}\t{status}\t{}",
            boot.world_rank(),
            crate::core::host::short_hostname(),
            one_line(&e.to_string())
        )],
    };
    let all = boot.gather_lines(&line)?;
    let status = u8::try_from(agreed).unwrap_or(exit::FAILURE);
    boot.end(status);
    match mine {
        // Every process failed alike: the one line a single process would print.
        Err(e) if boot.is_root() && same_everywhere(&all, boot.world_size()) => Err(e),
        _ => Err(with_status(status, said(&all))),
    }
}

fn one_line(text: &str) -> String {
    text.replace(['\t', '\n'], " ")
}

/// (rank, host, message) of each gathered line.
fn parse(lines: &[String]) -> Vec<(usize, String, String)> {
    lines
        .iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(4, '\t').collect();
            let [rank, host, _status, msg] = f[..] else {
                return None;
            };
            Some((rank.parse().ok()?, host.to_string(), msg.to_string()))
        })
        .collect()
}

fn same_everywhere(lines: &[String], size: usize) -> bool {
    let p = parse(lines);
    p.len() == size && p.iter().all(|(_, _, m)| *m == p[0].2)
}

/// `rank 3 (hostB): why`, processes with one message together (`ranks 1-2,5 (hostA, hostB)`).
pub fn said(lines: &[String]) -> String {
    let mut by_msg: BTreeMap<String, (Vec<usize>, Vec<String>)> = BTreeMap::new();
    let mut failed = parse(lines);
    failed.sort_by_key(|f| f.0);
    for (rank, host, msg) in failed {
        let e = by_msg.entry(msg).or_default();
        e.0.push(rank);
        if !e.1.contains(&host) {
            e.1.push(host);
        }
    }
    let mut parts: Vec<(usize, String)> = by_msg
        .into_iter()
        .map(|(msg, (mut ranks, hosts))| {
            ranks.sort_unstable();
            let who = if ranks.len() == 1 { "rank" } else { "ranks" };
            (
                ranks[0],
                format!("{who} {} ({}): {msg}", spans(&ranks), hosts.join(", ")),
            )
        })
        .collect();
    parts.sort();
    if parts.is_empty() {
        return "another process of the job failed".into();
    }
    parts
        .into_iter()
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join("; ")
}

/// `0-2,5` for ascending ranks.
pub fn spans(ranks: &[usize]) -> String {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for &r in ranks {
        match spans.last_mut() {
            Some((_, hi)) if *hi + 1 == r => *hi = r,
            _ => spans.push((r, r)),
        }
    }
    spans
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The error that exits with `status` and prints `msg` (statuses no error with a message of
/// its own has, a timeout's or an interrupt's, become 1 on rank 0; the others exit with it).
fn with_status(status: u8, msg: String) -> Error {
    match status {
        exit::USAGE => Error::Usage(msg),
        exit::DEVICES => Error::NotEnoughDevices(msg),
        exit::BACKEND => Error::Backend(msg),
        // A message without a prefix of its own; `Io` prints "path: cause".
        _ => Error::Io {
            path: "another process".into(),
            source: std::io::Error::other(format!("{msg} (exit status {status})")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_grouped_by_message_with_ranks_and_hosts() {
        let l = |r: usize, h: &str, m: &str| format!("{r}\t{h}\t2\t{m}");
        let s = said(&[
            l(3, "hostB", "bad"),
            l(1, "hostA", "bad"),
            l(2, "hostA", "other"),
        ]);
        assert_eq!(s, "ranks 1,3 (hostA, hostB): bad; rank 2 (hostA): other");
        assert_eq!(spans(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert!(same_everywhere(&[l(0, "a", "x"), l(1, "a", "x")], 2));
        assert!(!same_everywhere(&[l(0, "a", "x")], 2));
    }

    #[test]
    fn the_status_is_kept() {
        for s in [1, 2, 3, 5] {
            assert_eq!(with_status(s, "m".into()).exit_code(), s);
        }
        // No error of rank 0's own carries these with a message; still a failure.
        assert_eq!(with_status(4, "m".into()).exit_code(), exit::FAILURE);
    }
}
