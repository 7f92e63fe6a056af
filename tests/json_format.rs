//! ncclbench's `-J` document from one process (host backend) against nccl-tests' JSON file
//! version 3 (`support::json_v3`): every key in order with its type and nesting, the values the
//! flags set, `-K` leaving the skipped iterations out of the statistics but in `times_us`, and
//! the keys that `-C`, `-i`, `-z`, `-I 0`, `-N` and `NCCL_TESTS_MIN_BW` change. The job of
//! several processes (`per_process_max_times_us`, a straggler) is `mpi_json_format`.

use crate::support::bin::{ncclbench, run};
use crate::support::json_v3::{check, Expect};
use crate::support::nccl_json::Doc;
use std::path::Path;

/// Runs `ncclbench <args> -J r.json` in `dir` with `env` added; returns the exit code and the
/// document's text.
fn json_run(dir: &Path, args: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut c = ncclbench();
    c.current_dir(dir)
        .args(args.split_whitespace())
        .args(["-J", "r.json"]);
    c.envs(env.iter().copied());
    let r = run(&mut c);
    let text = std::fs::read_to_string(dir.join("r.json"))
        .unwrap_or_else(|e| panic!("{args}: no r.json ({e}): {}{}", r.out, r.err));
    (r.code, text)
}

fn ints(rows: &[Doc], key: &str) -> Vec<i128> {
    rows.iter().map(|r| r.get(key).int()).collect()
}

const PER_ITER_ARGS: &str = "all_reduce --backend host -t 2 -I 1 -K 3 -n 8 -w 1 -b 1K -e 4K -f 4";

/// What [`PER_ITER_ARGS`] asks for, with `skip` as its `-K`.
fn per_iter_expect(skip: u32) -> Expect {
    Expect {
        processes: 1,
        step_key: "step_factor",
        time_key: "time",
        iters: 8,
        per_iter: true,
        skip,
    }
}

#[test]
fn per_iteration_document_has_every_v3_field_and_the_flags_values() {
    let dir = tempfile::tempdir().unwrap();
    let args = PER_ITER_ARGS;
    let env = [
        ("NCCL_DEBUG", "WARN"),
        ("NCCLBENCH_JSON_TEST_PRIVATE", "not-for-the-file"),
    ];
    let (code, text) = json_run(dir.path(), args, &env);
    assert_eq!(code, Some(0), "{text}");
    let doc = check(&text, &per_iter_expect(3));
    let argv: Vec<&str> = doc.get("args").items().iter().map(Doc::str).collect();
    let given: Vec<&str> = args.split_whitespace().chain(["-J", "r.json"]).collect();
    assert_eq!(argv[1..], given[..], "args: argv after the program");
    let env: Vec<&str> = doc.get("env").items().iter().map(Doc::str).collect();
    assert!(env.contains(&"NCCL_DEBUG=WARN"), "{env:?}");
    assert!(!text.contains("not-for-the-file"), "only NCCL_* and kin");
    let c = doc.get("config");
    let want = [
        ("nthreads", 2),
        ("ngpus", 1),
        ("minimum_bytes", 1024),
        ("maximum_bytes", 4096),
        ("step_factor", 4),
        ("warmup_iters", 1),
        ("aggregated_iterations", 1),
        ("validation", 1),
        ("graph", 0),
    ];
    for (key, v) in want {
        assert_eq!(c.get(key).int(), v, "config.{key}");
    }
    assert_eq!(c.get("blocking_collectives").str(), "false");
    assert_eq!(c.get("parallel_init").str(), "false");
    // Two ranks, one process: one device entry, the first rank's.
    assert_eq!(c.get("devices").items()[0].get("rank").int(), 0);
    let rows = doc.get("results").items();
    assert_eq!(ints(rows, "size"), [1024, 4096]);
    assert_eq!(ints(rows, "count"), [256, 1024]);
    assert_eq!(ints(rows, "nranks"), [2, 2]);
    for r in rows {
        assert_eq!(r.get("type").str(), "float");
        assert_eq!(r.get("redop").str(), "sum");
        assert_eq!(r.get("root").str(), "    -1");
        assert_eq!(r.get("collective").str(), "all_reduce");
        assert_eq!(r.get("out_of_place").get("nwrong").num(), 0.0);
    }
    assert_eq!(doc.get("out_of_bounds").get("okay").str(), "true");
    assert_eq!(
        doc.get("average_bus_bandwidth").get("okay").str(),
        "unchecked"
    );
    assert_eq!(doc.get("errors").items(), [Doc::Str(String::new())]);
    let ours = doc.get("ncclbench");
    assert_eq!(ours.get("backend").str(), "host");
    assert_eq!(ours.get("nranks").int(), 2);
    assert_eq!(ours.get("complete"), &Doc::Bool(true));
}

#[test]
fn per_iter_skip_keeps_every_time_but_leaves_the_skipped_out_of_the_statistics() {
    // `-K` at its most (n - 1): one iteration is left, so every statistic is that one time,
    // while `times_us` still holds all five. Without `-f` the step is nccl-tests' default
    // `step_bytes` of 1 MiB.
    let dir = tempfile::tempdir().unwrap();
    let args = "sendrecv --backend host -g 2 -I 1 -K 4 -n 5 -w 1 -b 4K -e 4K";
    let (code, text) = json_run(dir.path(), args, &[]);
    assert_eq!(code, Some(0), "{text}");
    let expect = Expect {
        processes: 1,
        step_key: "step_bytes",
        time_key: "time",
        iters: 5,
        per_iter: true,
        skip: 4,
    };
    let doc = check(&text, &expect);
    assert_eq!(doc.get("config").get("step_bytes").int(), 1 << 20);
    for p in ["out_of_place_per_iter", "in_place_per_iter"] {
        let it = doc.get("results").items()[0].get(p);
        let times = it.get("times_us").nums();
        for key in ["min_us", "max_us", "avg_us", "p50_us", "p95_us", "p99_us"] {
            assert_eq!(
                it.get(key).num(),
                times[4],
                "{p}.{key} is the one kept time"
            );
        }
        assert_eq!(it.get("stdev_us").num(), 0.0);
        assert_eq!(it.get("cv_pct").num(), 0.0);
    }
}

#[test]
fn cputime_step_bytes_blocking_cycles_and_the_bandwidth_floor_change_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let args = "all_gather --backend host -g 2 -C 1 -i 1024 -b 1K -e 3K -z 1 -N 2 -n 4";
    let (code, text) = json_run(dir.path(), args, &[("NCCL_TESTS_MIN_BW", "1000000")]);
    assert_eq!(code, Some(7), "bandwidth below the floor: {text}");
    let expect = Expect {
        processes: 1,
        step_key: "step_bytes",
        time_key: "cpu_time",
        iters: 4,
        per_iter: false,
        skip: 0,
    };
    let doc = check(&text, &expect);
    let c = doc.get("config");
    assert_eq!(c.get("step_bytes").int(), 1024);
    assert_eq!(c.get("blocking_collectives").str(), "true");
    assert_eq!(c.get("per_iter_timing").str(), "false");
    // Every cycle appends its rows to the one list.
    let rows = doc.get("results").items();
    assert_eq!(ints(rows, "size"), [1024, 2048, 3072, 1024, 2048, 3072]);
    assert_eq!(ints(rows, "cycle"), [0, 0, 0, 1, 1, 1]);
    assert_eq!(doc.get("average_bus_bandwidth").get("okay").str(), "false");
}

#[test]
fn the_layout_check_refuses_each_departure_from_version_3() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text) = json_run(dir.path(), PER_ITER_ARGS, &[]);
    assert_eq!(code, Some(0), "{text}");
    check(&text, &per_iter_expect(3));
    let refused = |t: &str, skip: u32| {
        let t = t.to_string();
        std::panic::catch_unwind(move || check(&t, &per_iter_expect(skip))).is_err()
    };
    let departures = [
        ("\"version\":3,", "\"version\":2,"),
        ("\"per_iter_skip\":3,", ""),
        (
            "\"blocking_collectives\":\"false\"",
            "\"blocking_collectives\":false",
        ),
        ("\"root\":\"    -1\"", "\"root\":-1"),
        ("\"nwrong\":0.000000", "\"nwrong\":0"),
        ("\"p50_us\"", "\"median_us\""),
        (
            "\"experiment_name\":\"\"",
            "\"experiment_name\":\"\",\"extra\":0",
        ),
        ("\"times_us\":[", "\"times_us\":[1.000000,"),
        ("\"okay\":\"unchecked\"", "\"okay\":\"skipped\""),
        ("\"alg_bw\":", "\"algbw\":"),
    ];
    for (from, to) in departures {
        assert!(text.contains(from), "{from} in {text}");
        assert!(refused(&text.replacen(from, to, 1), 3), "{from} -> {to}");
    }
    // Statistics over every iteration instead of those after `-K`'s.
    let unskipped = text
        .replace("\"per_iter_skip\":3", "\"per_iter_skip\":0")
        .replace("\"skipped_iterations\":3", "\"skipped_iterations\":0");
    assert!(refused(&unskipped, 0), "statistics that ignore -K pass");
}
