//! Step 1 of the protocol: rank 0 gathers where every process runs and sends back the
//! layout all processes derive the rounds from.

use super::super::layout::{hosts_with_test_names, Layout};
use super::{num, stopped_answering, Procs};
use crate::bench::backend::BackendInfo;
use crate::bench::job::coord::{Coordinator, Wait};
use crate::core::error::Error;
use std::time::{Duration, Instant};

/// Step 1 of the protocol: the layout every process derives the rounds from.
pub(super) fn agree_layout(
    info: &BackendInfo,
    coord: &mut dyn Coordinator,
    timeout: Duration,
) -> Result<(Layout, Procs), Error> {
    let all = vec![true; coord.size()];
    let mine = format!(
        "{}\t{}\t{}",
        crate::core::host::short_hostname(),
        info.first_rank,
        info.local_ranks
    );
    let got = coord.gather(0, &mine, &all, Wait::until(Instant::now() + timeout))?;
    let msg = if coord.rank() == 0 {
        layout_message(info.nranks, &got)?
    } else {
        String::new()
    };
    let msg = coord
        .broadcast(0, &msg, &all, Instant::now() + 2 * timeout)?
        .ok_or_else(|| stopped_answering("the layout"))?;
    let (mut hosts, mut procs) = (Vec::new(), Vec::new());
    for line in msg.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        match f.as_slice() {
            ["P", a, b] => procs.push((num(a)?, num(b)?)),
            ["H", h] => hosts.push(h.to_string()),
            _ => return Err(Error::Backend(format!("locate: bad layout line {line:?}"))),
        }
    }
    Ok((Layout::new(&hosts), procs))
}

/// Rank 0's layout message: a `P first count` line per process, an `H host` line per rank.
fn layout_message(nranks: usize, got: &[Option<String>]) -> Result<String, Error> {
    let mut hosts = vec![String::new(); nranks];
    let mut lines = Vec::new();
    for (p, entry) in got.iter().enumerate() {
        let entry = entry.as_deref().ok_or_else(|| Error::Timeout {
            seconds: 0,
            what: format!("process {p} to say where it runs (locate's first exchange)"),
        })?;
        let f: Vec<&str> = entry.split('\t').collect();
        let (host, first, count) = match f.as_slice() {
            [h, a, b] => (*h, num(a)?, num(b)?),
            _ => return Err(Error::Backend(format!("locate: bad entry {entry:?}"))),
        };
        for r in first..first + count {
            if let Some(slot) = hosts.get_mut(r) {
                *slot = host.to_string();
            }
        }
        lines.push(format!("P\t{first}\t{count}"));
    }
    if let Some(r) = hosts.iter().position(String::is_empty) {
        return Err(Error::Backend(format!(
            "locate: no process drives rank {r}"
        )));
    }
    let switch = crate::core::test_hooks::var("NCCLBENCH_TEST_HOSTNAMES");
    let hosts = hosts_with_test_names(hosts, switch.as_deref()).map_err(Error::Usage)?;
    lines.extend(hosts.iter().map(|h| format!("H\t{h}")));
    Ok(lines.join("\n"))
}
