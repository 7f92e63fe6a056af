//! ncclbench's `-J` document from real 2- and 4-process `mpirun` jobs (feature `mpi`) against
//! nccl-tests' JSON file version 3 (`support::json_v3`): one `config.devices` entry per
//! process, `-I 1`'s `per_process_max_times_us` (one row per process, `times_us` their
//! per-iteration maximum), and a process slowed for one iteration (`NCCLBENCH_TEST_SLOW_RANK`)
//! showing as the maximum at its own index, in `times_us` and in the statistics, unless `-K`
//! skips that iteration: then it stays in the times but leaves the statistics.
#![cfg(feature = "mpi")]

use crate::support::json_v3::{check, Expect};
use crate::support::mpi::{have_mpirun, mpirun};
use crate::support::nccl_json::Doc;
use std::path::Path;

/// How long the slowed process holds its planted iteration.
const SLOW_MS: f64 = 400.0;
const ITERS: u32 = 40;

/// What a run of `np` processes with `-K skip` asks for.
fn expect(np: usize, skip: u32) -> Expect {
    Expect {
        processes: np,
        step_key: "step_factor",
        time_key: "time",
        iters: ITERS,
        per_iter: true,
        skip,
    }
}

/// A `-I 1` run of `np` processes, the last one slowed once, writing `json`; its document's
/// text, and the document checked against version 3.
fn slowed_run(np: usize, skip: u32, json: &Path) -> (String, Doc) {
    let rank = (np - 1).to_string();
    let ms = SLOW_MS.to_string();
    let env = [
        ("NCCLBENCH_TEST_SLOW_RANK", rank.as_str()),
        ("NCCLBENCH_TEST_SLOW_OP", "30"),
        ("NCCLBENCH_TEST_SLOW_MS", ms.as_str()),
    ];
    let mut c = mpirun(np, &env);
    let args =
        format!("all_reduce --backend mpi -I 1 -K {skip} -n {ITERS} -w 1 -b 1K -e 8K -f 8 -c 1 -J");
    c.args(args.split_whitespace()).arg(json);
    let o = c.output().unwrap();
    let t = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let text = std::fs::read_to_string(json).unwrap();
    let doc = check(&text, &expect(np, skip));
    (text, doc)
}

/// The planted slow iteration: the first (in row, placement and iteration order) in which a
/// process took at least [`SLOW_MS`], with that process and its time. (In the next one its
/// peers, having waited for it, take as long.)
struct Planted {
    row: usize,
    placement: &'static str,
    iter: usize,
    process: usize,
    time_us: f64,
}

fn planted(doc: &Doc) -> Planted {
    for (row, r) in doc.get("results").items().iter().enumerate() {
        for placement in ["out_of_place_per_iter", "in_place_per_iter"] {
            let rows: Vec<Vec<f64>> = r
                .get(placement)
                .get("per_process_max_times_us")
                .items()
                .iter()
                .map(Doc::nums)
                .collect();
            for iter in 0..rows[0].len() {
                let (process, time_us) = (0..rows.len())
                    .map(|p| (p, rows[p][iter]))
                    .fold((0, f64::MIN), |a, b| if b.1 > a.1 { b } else { a });
                if time_us >= SLOW_MS * 1e3 {
                    return Planted {
                        row,
                        placement,
                        iter,
                        process,
                        time_us,
                    };
                }
            }
        }
    }
    panic!("no process took {SLOW_MS} ms in any iteration")
}

/// The `*_per_iter` object holding `s`.
fn per_iter<'a>(doc: &'a Doc, s: &Planted) -> &'a Doc {
    doc.get("results").items()[s.row].get(s.placement)
}

#[test]
fn per_process_rows_show_the_slowed_process_at_its_index() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for np in [2usize, 4] {
        let (text, doc) = slowed_run(np, 0, &dir.path().join(format!("r{np}.json")));
        let devices = doc.get("config").get("devices").items();
        let ranks: Vec<i128> = devices.iter().map(|d| d.get("rank").int()).collect();
        assert_eq!(
            ranks,
            (0..np as i128).collect::<Vec<_>>(),
            "one entry per process"
        );
        let host = devices[0].get("hostname").str();
        assert!(devices.iter().all(|d| d.get("hostname").str() == host));
        let ours = doc.get("ncclbench");
        assert_eq!(ours.get("backend").str(), "mpi");
        assert_eq!(ours.get("nranks").int(), np as i128);
        let s = planted(&doc);
        assert_eq!(
            s.process,
            np - 1,
            "the slowed process is that iteration's maximum"
        );
        let it = per_iter(&doc, &s);
        assert_eq!(
            it.get("times_us").nums()[s.iter],
            s.time_us,
            "times_us shows it"
        );
        // Its peers' wait in the next iteration may be the longer one.
        assert!(
            it.get("max_us").num() >= s.time_us,
            "the statistics count it"
        );
        // Slow on that process alone: its data was already with its peers.
        for (p, row) in it
            .get("per_process_max_times_us")
            .items()
            .iter()
            .enumerate()
        {
            if p != s.process {
                let t = row.nums()[s.iter];
                assert!(
                    t < s.time_us / 2.0,
                    "process {p} took {t} us at iteration {}",
                    s.iter
                );
            }
        }
        // The check of `times_us` against the process rows bites: the slowed process's time
        // taken out of its row (written last) leaves `times_us` above every row.
        let slow = format!("{:.6}", s.time_us);
        let at = text.rfind(&slow).expect("the slow time in the text");
        let mut forged = text.clone();
        forged.replace_range(at..at + slow.len(), "1.000000");
        let refused = std::panic::catch_unwind(|| check(&forged, &expect(np, 0))).is_err();
        assert!(refused, "a times_us above every process row passes");
    }
}

#[test]
fn per_iter_skip_leaves_a_skipped_slow_iteration_in_the_times_only() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Where the planted iteration lands without -K; -K changes no launch, so it lands there
    // again, and skipping it and the next (where the peers wait for the slowed process)
    // leaves it out of the statistics.
    let at = planted(&slowed_run(2, 0, &dir.path().join("plain.json")).1);
    let skip = at.iter as u32 + 2;
    assert!(
        skip < ITERS,
        "the planted op lands at iteration {}",
        at.iter
    );
    let (_, doc) = slowed_run(2, skip, &dir.path().join("skip.json"));
    let s = planted(&doc);
    assert_eq!(
        (s.row, s.placement, s.iter, s.process),
        (at.row, at.placement, at.iter, 1)
    );
    let it = per_iter(&doc, &s);
    assert_eq!(
        it.get("times_us").nums()[s.iter],
        s.time_us,
        "still in times_us"
    );
    assert!(
        it.get("max_us").num() < s.time_us / 2.0,
        "max_us {} counts a skipped iteration of {} us",
        it.get("max_us").num(),
        s.time_us
    );
}
