//! The NIC of each rail, from the job's NCCL debug logs: NCCL's `NET/IB : Using [0]mlx5_0:1/IB
//! [1]mlx5_1:1/IB ...` line lists a host's NICs by index, and each `Channel ... via
//! NET/IB/<index>` connection line names the NIC a rank's traffic leaves by. A rail's NIC on a
//! host is the one the GPU of that rail uses most (`--nccl-log`).

use super::layout::Layout;
use crate::core::error::Error;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// (host, rail) -> NIC name, for the hosts and GPUs the logs show.
pub fn from_logs(
    logs: &[PathBuf],
    layout: &Layout,
) -> Result<BTreeMap<(String, usize), String>, Error> {
    let mut text = String::new();
    for p in logs {
        let bytes = std::fs::read(p).map_err(|source| Error::Io {
            path: p.clone(),
            source,
        })?;
        text.push_str(&String::from_utf8_lossy(&bytes));
        text.push('\n');
    }
    Ok(from_text(&text, layout))
}

/// [`from_logs`] over the logs' text.
pub fn from_text(text: &str, layout: &Layout) -> BTreeMap<(String, usize), String> {
    // host -> NIC index -> name
    let mut names: BTreeMap<String, BTreeMap<usize, String>> = BTreeMap::new();
    // (host, global rank) -> NIC index -> connection lines
    let mut uses: BTreeMap<(String, usize), BTreeMap<usize, u64>> = BTreeMap::new();
    for line in text.lines() {
        let Some(at) = line.find(" NCCL INFO ") else {
            continue;
        };
        // `host:pid:tid [dev]`, maybe behind a launcher's tag (`[1,0]<stdout>:host:pid:tid`).
        let Some(host) = line[..at]
            .split_whitespace()
            .rev()
            .find(|t| t.contains(':'))
            .and_then(|t| t.rsplitn(3, ':').nth(2))
            .map(|h| h.rsplit(':').next().unwrap_or(h))
        else {
            continue;
        };
        let msg = &line[at + " NCCL INFO ".len()..];
        if let Some(list) = msg.strip_prefix("NET/IB : Using ") {
            let list = list.split(';').next().unwrap_or("");
            for item in list.split_whitespace() {
                let Some((idx, rest)) = item.strip_prefix('[').and_then(|x| x.split_once(']'))
                else {
                    continue;
                };
                let (Ok(i), Some(name)) = (idx.parse::<usize>(), rest.split(':').next()) else {
                    continue;
                };
                names
                    .entry(host.to_string())
                    .or_default()
                    .insert(i, name.to_string());
            }
        } else if let Some(nic) = connection(msg) {
            *uses
                .entry((host.to_string(), nic.0))
                .or_default()
                .entry(nic.1)
                .or_default() += 1;
        }
    }
    let mut out = BTreeMap::new();
    for ((host, rank), counts) in uses {
        let Some(place) = layout.ranks.get(rank).filter(|p| p.host == host) else {
            continue;
        };
        let Some((&nic, _)) = counts.iter().max_by_key(|(_, &n)| n) else {
            continue;
        };
        if let Some(name) = names.get(&host).and_then(|m| m.get(&nic)) {
            out.insert((host, place.gpu), name.clone());
        }
    }
    out
}

/// `(sending rank, NIC index)` of a `Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/1/GDRDMA`
/// line (the NIC of the rank before the arrow on a send, after it on a receive).
fn connection(msg: &str) -> Option<(usize, usize)> {
    let rest = msg.strip_prefix("Channel ")?;
    let (route, via) = rest.split_once(" via NET/IB/")?;
    let nic: usize = via.split(['/', ' ']).next()?.parse().ok()?;
    let (_, ends) = route.split_once(" : ")?;
    let (from, rest) = ends.split_once(" -> ")?;
    let to = rest.split_whitespace().next()?;
    let rank = |e: &str| e.split('[').next()?.trim().parse::<usize>().ok();
    let rank = if rest.contains("[receive]") {
        rank(to)?
    } else {
        rank(from)?
    };
    Some((rank, nic))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rail_gets_the_nic_its_gpu_sends_through() {
        let l = Layout::new(&["gpu1", "gpu1", "gpu2", "gpu2"].map(String::from));
        let log = "\
gpu1:11:11 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB ; OOB ib0:10.0.0.1<0>
gpu1:11:20 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[0] [send] via NET/IB/0/GDRDMA
gpu1:12:21 [1] NCCL INFO Channel 00/0 : 1[1] -> 3[1] [send] via NET/IB/1/GDRDMA
gpu1:12:21 [1] NCCL INFO Channel 01/0 : 3[1] -> 1[1] [receive] via NET/IB/1/GDRDMA
gpu2:13:22 [0] NCCL INFO NET/IB : Using [0]mlx5_7:1/IB [1]mlx5_8:1/IB ; OOB ib0:10.0.0.2<0>
[1,2]<stdout>:gpu2:13:22 [0] NCCL INFO Channel 00/0 : 2[0] -> 0[0] [send] via NET/IB/1/GDRDMA
gpu2:13:22 [0] NCCL INFO Channel 00/0 : 2[0] -> 9[0] garbage
";
        let m = from_text(log, &l);
        assert_eq!(
            m.get(&("gpu1".into(), 0)).map(String::as_str),
            Some("mlx5_0")
        );
        assert_eq!(
            m.get(&("gpu1".into(), 1)).map(String::as_str),
            Some("mlx5_3")
        );
        assert_eq!(
            m.get(&("gpu2".into(), 0)).map(String::as_str),
            Some("mlx5_8")
        );
        assert_eq!(m.get(&("gpu2".into(), 1)), None, "no line for it");
    }
}
