//! `--per-group` under real mpirun (feature `mpi`): four processes split two ways
//! (`NCCL_TESTS_SPLIT_MASK=1`: world ranks 0 and 2, 1 and 3), each group's rows kept beside the
//! aggregate. The groups' figures are checked against the aggregate by the `-a` rule itself,
//! which holds whatever the timing noise: with `-a 3` the aggregate time is the largest group
//! time, with `-a 2` the smallest, and each group's bus bandwidth uses its own rank count.
#![cfg(feature = "mpi")]

use crate::support::mpi::{have_mpirun, mpirun};

/// Runs `ncclbench ARGS --csv FILE` on four processes split by rank parity; the CSV's lines.
fn split_run(args: &str) -> (String, Vec<Vec<String>>) {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("g.csv");
    let o = mpirun(4, &[("NCCL_TESTS_SPLIT_MASK", "1")])
        .args(args.split_whitespace())
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let lines = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    (text, lines)
}

/// Column `name`'s index in the header.
fn col(lines: &[Vec<String>], name: &str) -> usize {
    lines[0].iter().position(|c| c == name).unwrap()
}

#[test]
fn each_group_is_reported_and_the_aggregate_follows_the_reduction_rule() {
    if !have_mpirun() {
        return;
    }
    for (a, pick) in [("3", f64::max as fn(f64, f64) -> f64), ("2", f64::min)] {
        let args =
            format!("all_reduce --backend mpi -b 1K -e 64K -f 8 -n 3 -w 1 -c 1 -a {a} --per-group");
        let (text, lines) = split_run(&args);
        for needle in [
            "# Group 0: 2 ranks (0,2) on ",
            "# Group 1: 2 ranks (1,3) on ",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        let (g, t, b, n, w) = (
            col(&lines, "group"),
            col(&lines, "time_us"),
            col(&lines, "busbw_gbs"),
            col(&lines, "nranks"),
            col(&lines, "wrong"),
        );
        let ranks = col(&lines, "group_ranks");
        // Each aggregate line is followed by group 0's and group 1's lines.
        let body = &lines[1..];
        assert_eq!(body.len() % 3, 0, "{lines:?}");
        assert!(
            body.len() >= 3 * 2 * 3,
            "three sizes, two placements: {lines:?}"
        );
        for chunk in body.chunks(3) {
            let (agg, g0, g1) = (&chunk[0], &chunk[1], &chunk[2]);
            assert_eq!(
                (agg[g].as_str(), g0[g].as_str(), g1[g].as_str()),
                ("all", "0", "1")
            );
            assert_eq!((g0[ranks].as_str(), g1[ranks].as_str()), ("0 2", "1 3"));
            assert_eq!((g0[n].as_str(), g1[n].as_str()), ("2", "2"));
            assert_eq!((g0[w].as_str(), g1[w].as_str()), ("0", "0"));
            let time = |l: &Vec<String>| l[t].parse::<f64>().unwrap();
            assert_eq!(time(agg), pick(time(g0), time(g1)), "-a {a}: {chunk:?}");
            // busbw = algbw x 2(n-1)/n with n = 2: algbw itself for all_reduce.
            let bytes: f64 = g0[col(&lines, "bytes")].parse().unwrap();
            let busbw: f64 = g0[b].parse().unwrap();
            let want = bytes / (time(g0) * 1e-6) / 1e9;
            assert!((busbw - want).abs() <= 1e-9 * want, "{busbw} vs {want}");
        }
    }
}
