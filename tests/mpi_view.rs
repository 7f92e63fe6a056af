//! What a user of nccl-tests reads from a job of several processes, under real `mpirun`
//! (feature `mpi`) on fake-nccl: the device lines gathered in rank order with their hosts, in
//! nccl-tests' layout (checked against a real multi-node output where `../shared` has it),
//! the header and footer once, `Avg bus bandwidth` as nccl-tests computes it (each row's bus
//! bandwidth from the job's reduced time, averaged by rank 0), one process's failure said once
//! with its rank and host, and `--timer device` windows that open together.
#![cfg(feature = "mpi")]

use crate::support::mpi::{have_mpirun, nccl_job, nccl_job_per_rank, rows, Rank};
use std::time::Duration;

/// nccl-tests' device line (`#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x]
/// %s`) rebuilt from `line`'s fields: equal to `line` when it has that layout.
fn relaid(line: &str) -> String {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 12 {
        return String::new();
    }
    format!(
        "#  Rank {:>2} Group {:>2} Pid {:>6} on {:>10} device {:>2} {} {}",
        f[2],
        f[4],
        f[6],
        f[8],
        f[10],
        f[11],
        f[12..].join(" ")
    )
}

#[test]
fn rank_0_prints_what_nccl_tests_prints_for_the_whole_job() {
    if !have_mpirun() {
        return;
    }
    let args = "all_reduce --backend nccl -g 2 -b 1K -e 4K -f 4 -c 1 -n 2 -w 1 -T 60";
    let j = nccl_job(2, &[], args);
    let t = &j.text;
    assert_eq!(j.code, Some(0), "{t}");
    // One device line per rank, gathered in rank order, each with its process and host.
    let host = ncclbench::core::host::gethostname_short();
    let devices: Vec<&str> = t.lines().filter(|l| l.starts_with("#  Rank ")).collect();
    let lines: Vec<Vec<&str>> = devices
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines.len(), 4, "{t}");
    for (r, l) in lines.iter().enumerate() {
        assert_eq!(l[2], r.to_string(), "{t}");
        assert_eq!(l[8], host, "{t}");
        assert_eq!(l[10], r.to_string(), "device = local process x 2 + i: {t}");
    }
    assert_eq!(
        lines[0][6], lines[1][6],
        "ranks 0 and 1 share a process: {t}"
    );
    assert_ne!(lines[1][6], lines[2][6], "ranks 1 and 2 do not: {t}");
    // The layout of a real 2-node, 16-process nccl-tests run.
    let real = crate::support::bin::root()
        .join("../shared/fixtures/real/001_nccltests_h100x16_2node_allreduce.txt");
    let mut theirs: Vec<String> = std::fs::read_to_string(real)
        .map(|r| {
            r.lines()
                .filter(|l| l.starts_with("#  Rank "))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    assert!(theirs.is_empty() || theirs.len() == 16, "{theirs:?}");
    theirs.extend(devices.iter().map(|l| l.to_string()));
    for l in &theirs {
        assert_eq!(&relaid(l), l);
    }
    // The header, version and footer once for the job, not once per process.
    for once in [
        "# ncclbench version",
        ", CUDA driver ",
        "# Avg bus bandwidth",
        "# Out of bounds values : 0 OK",
        "# Collective test concluded",
    ] {
        assert_eq!(t.matches(once).count(), 1, "{once}: {t}");
    }
    assert_eq!(rows(t).len(), 2, "{t}");
}

#[test]
fn a_process_with_fewer_gpus_than_asked_stops_every_process_with_exit_5() {
    if !have_mpirun() {
        return;
    }
    // Process 1 drives devices 2 and 3 (-g 2) but its fake shows 3 devices.
    let few = [("FAKE_CUDA_DEVICES", "3")];
    let per_rank = [
        Rank::default(),
        Rank {
            env: &few,
            args: "",
        },
    ];
    let j = nccl_job_per_rank(&per_rank, "all_reduce --backend nccl -g 2 -b 8 -e 64 -T 30");
    let t = &j.text;
    assert_eq!(j.code, Some(5), "{t}");
    assert!(
        j.took < Duration::from_secs(25),
        "it must not wait for -T: {t}"
    );
    let host = ncclbench::core::host::gethostname_short();
    let said = format!(
        "ncclbench: rank 1 ({host}): Invalid number of GPUs: 4 requested but only 3 were found."
    );
    assert_eq!(t.matches(&said).count(), 1, "{t}");
    assert_eq!(t.matches("Invalid number of GPUs").count(), 1, "{t}");
    assert!(rows(t).is_empty(), "{t}");
}

#[test]
fn a_bad_variable_on_one_process_is_said_once_with_its_rank_and_host() {
    if !have_mpirun() {
        return;
    }
    let bad = [("NCCL_TESTS_MIN_BW", "abc")];
    let per_rank = [
        Rank::default(),
        Rank::default(),
        Rank {
            env: &bad,
            args: "",
        },
    ];
    let j = nccl_job_per_rank(&per_rank, "all_reduce --backend nccl -b 8 -e 64 -T 30");
    let t = &j.text;
    assert_eq!(j.code, Some(2), "{t}");
    assert!(
        j.took < Duration::from_secs(25),
        "it must not wait for -T: {t}"
    );
    let host = ncclbench::core::host::gethostname_short();
    let said = format!(
        "ncclbench: rank 2 ({host}): NCCL_TESTS_MIN_BW=\"abc\" is not a bandwidth in GB/s\n"
    );
    assert_eq!(t.matches(&said).count(), 1, "{t}");
    assert_eq!(t.matches("NCCL_TESTS_MIN_BW").count(), 1, "{t}");
}

/// The `Avg bus bandwidth` figure of `text`.
fn footer_busbw(text: &str) -> f64 {
    let l = text
        .lines()
        .find(|l| l.starts_with("# Avg bus bandwidth"))
        .unwrap_or_else(|| panic!("{text}"));
    l.split(':').nth(1).unwrap().trim().parse().unwrap()
}

#[test]
fn the_average_bus_bandwidth_is_the_mean_of_the_printed_rows() {
    if !have_mpirun() {
        return;
    }
    // Process 1 is slow in some iterations: its own times differ from rank 0's and from the
    // job's mean. nccl-tests prints rank 0's average of the rows' bus bandwidths, each row's
    // from the time reduced by -a (the mean by default, rank 0's own with -a 0): never an
    // average of each process's own bandwidths.
    let slow = [
        ("NCCLBENCH_TEST_SLOW_RANK", "1"),
        ("NCCLBENCH_TEST_SLOW_OP", "20"),
        ("NCCLBENCH_TEST_SLOW_MS", "200"),
    ];
    for a in ["1", "0", "3"] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let args = format!(
            "all_reduce --backend nccl -b 64K -e 1M -f 4 -c 0 -n 2 -w 1 -T 60 -a {a} -J {}",
            json.display()
        );
        let j = nccl_job(2, &slow, &args);
        assert_eq!(j.code, Some(0), "{}", j.text);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let mut bws = Vec::new();
        for r in doc["results"].as_array().unwrap() {
            for p in ["out_of_place", "in_place"] {
                bws.push(r[p]["bus_bw"].as_f64().unwrap());
            }
        }
        assert_eq!(bws.len(), 6, "{doc}");
        let mean = bws.iter().sum::<f64>() / bws.len() as f64;
        let printed = footer_busbw(&j.text);
        assert!(
            (printed - mean).abs() <= 1e-5 * mean.abs() + 1e-6,
            "-a {a}: footer {printed} vs rows' mean {mean}\n{}",
            j.text
        );
    }
}

#[test]
fn device_timer_windows_open_together_across_processes() {
    if !have_mpirun() {
        return;
    }
    // Process 1 sleeps 1.5 s after op 13, the barrier before the first timed loop (ops 1-12
    // are the setup's agreements, the plan, the device lines, the sweep's barrier, the
    // warm-up's wait and the untimed launch's). A gate that opened as soon as its own process
    // had enqueued would start process 0's window 1.5 s before process 1's collective.
    let slow = [
        ("NCCLBENCH_TEST_SLOW_RANK", "1"),
        ("NCCLBENCH_TEST_SLOW_OP", "13"),
        ("NCCLBENCH_TEST_SLOW_MS", "1500"),
    ];
    let args = "all_reduce --backend nccl -b 8 -e 8 -w 0 -n 1 -c 0 -a 3 --timer device -T 30";
    let j = nccl_job(2, &slow, args);
    let t = &j.text;
    assert_eq!(j.code, Some(0), "{t}");
    assert!(
        j.took >= Duration::from_millis(1500),
        "the delay happened: {t}"
    );
    let r = rows(t);
    assert_eq!(r.len(), 1, "{t}");
    let us: f64 = r[0][5].parse().unwrap();
    assert!(
        us < 750_000.0,
        "the window waited for process 1: {us} us\n{t}"
    );
}
