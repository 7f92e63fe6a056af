//! scripts/gpu-check.sh, the side-by-side check run when a GPU machine is lent, end to end on
//! the fake NCCL with stand-ins for nccl-tests (tests/support/nccl_tests_standin.py, which
//! prints nccl-tests 2.19.6 tables and insists on the libnccl ncclbench loads) and for nvcc
//! (tests/support/nvcc_standin.py, which lets nccl-tests' own Makefile run). Sizes are shrunk
//! through the script's GPU_CHECK_* settings so each run takes seconds.

mod build;
mod harness;

use harness::{check, flags_after, standin_bin, times, Step};
use std::fs;

#[test]
fn the_check_interleaves_both_tools_summarises_and_packs_its_results() {
    let c = check(|dir, cmd| {
        cmd.env("NCCL_TESTS_BIN", standin_bin(dir))
            .env("FAKE_NCCL_TESTS_LOG", dir.join("nccl-tests.log"))
            .env("GPU_CHECK_COLLS", "all_reduce,all_gather,sendrecv");
        vec![]
    });
    assert_eq!(c.code, Some(0), "{}", c.summary);
    let names: Vec<&str> = c.files.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "compare.json",
            "compare.txt",
            "env.json",
            "env.txt",
            "results.tar.gz",
            "summary.txt"
        ]
    );
    assert!(
        c.summary.starts_with("# ncclbench GPU check: PASS"),
        "{}",
        c.summary
    );

    // A B A B: every -c 0 run of ncclbench is followed by nccl-tests on the same collective,
    // with the same flags, round after round.
    let c0 = c.named("c0/");
    assert_eq!(c0.len(), 2 * 2 * 3, "two rounds of three pairs");
    for (i, pair) in c0.chunks(2).enumerate() {
        let coll = ["all_reduce", "all_gather", "sendrecv"][i % 3];
        assert_eq!(
            (pair[0].tool.as_str(), pair[1].tool.as_str()),
            ("ncclbench", "nccl-tests")
        );
        assert_eq!(pair[0].name, format!("c0/{coll}.r{}.ncclbench", i / 3 + 1));
        assert_eq!(pair[1].coll, coll);
        let nb = flags_after(&pair[0].note, "--backend nccl");
        assert_eq!(
            nb,
            flags_after(&pair[1].note, &format!("{coll}_perf")),
            "same flags"
        );
        assert!(
            nb.windows(2).any(|w| w == ["-c", "0"]) && nb.contains(&"64K"),
            "{nb:?}"
        );
    }
    // The stand-in saw exactly the nccl-tests steps the manifest records, in that order.
    let log = fs::read_to_string(c.dir.path().join("nccl-tests.log")).unwrap();
    let ran: Vec<&str> = log.lines().map(|l| l.split(' ').next().unwrap()).collect();
    let recorded: Vec<&str> = c
        .steps
        .iter()
        .filter(|s| s.tool == "nccl-tests" && s.status == "PASS")
        .map(|s| s.coll.as_str())
        .collect();
    assert_eq!(ran, recorded);
    for config in ["c1", "graph", "timer", "z3", "reg1", "reg2", "correctness"] {
        let steps = c.named(&format!("{config}/"));
        assert_eq!(steps.len(), 6, "{config}: both tools per collective");
        assert!(
            steps.iter().all(|s| s.status == "PASS"),
            "{config}\n{}",
            c.summary
        );
    }
    assert!(c
        .named("timer/")
        .iter()
        .any(|s| s.note.contains("--timer device")));
    // -c 1 verifies on the device; the same sweep verified on the host runs for ncclbench alone.
    let c1 = c.named("c1/");
    assert!(c1
        .iter()
        .filter(|s| s.tool == "ncclbench")
        .all(|s| s.note.contains("--verify device")));
    let vhost = c.named("vhost/");
    assert_eq!(vhost.len(), 3, "ncclbench alone per collective");
    assert!(vhost
        .iter()
        .all(|s| s.tool == "ncclbench" && s.status == "PASS" && s.note.contains("--verify host")));
    let cost = c
        .summary
        .lines()
        .skip_while(|l| !l.starts_with("## -c 1 cost"))
        .find(|l| l.starts_with("all_reduce"))
        .unwrap_or_else(|| panic!("no -c 1 cost row\n{}", c.summary));
    // Ten columns of numbers (or '-'): walls and their ratios, all measured here.
    let cells: Vec<&str> = cost.split_whitespace().skip(1).collect();
    assert_eq!(cells.len(), 9, "{cost}");
    assert!(cells.iter().all(|v| v.parse::<f64>().is_ok()), "{cost}");
    assert_eq!(
        c.named("two_ranks/").len(),
        4,
        "three ncclbench runs and nccl-tests' skip"
    );

    // The summary's ratio is the median of the rounds of each tool, divided.
    let median = |tool: &str| {
        let t: Vec<f64> = (1..=2)
            .map(|r| times(&c.raw_text(&format!("c0/all_reduce.r{r}.{tool}.txt")))[&1024])
            .collect();
        (t[0] + t[1]) / 2.0
    };
    let ratio = format!("{:.3}", median("ncclbench") / median("nccl-tests"));
    let row = c
        .summary
        .lines()
        .skip_while(|l| !l.starts_with("### c0:"))
        .find(|l| l.split_whitespace().take(2).eq(["all_reduce", "1K"]))
        .unwrap_or_else(|| panic!("no c0 all_reduce 1K row\n{}", c.summary));
    assert_eq!(row.split_whitespace().nth(4), Some(ratio.as_str()), "{row}");
    assert!(
        c.summary.contains("## Wall time of each whole run"),
        "{}",
        c.summary
    );
    assert!(
        c.summary.contains("correctness/all_gather.nccl-tests"),
        "{}",
        c.summary
    );

    // compare: one report per configuration, nccl-tests before and ncclbench after.
    let compare = c.raw_text("compare/c0/compare.txt");
    assert!(
        compare.contains("c0/all_reduce.r2.nccl-tests.txt"),
        "{compare}"
    );
    let json = fs::read_to_string(c.dir.path().join("out/compare.json")).unwrap();
    assert!(
        json.contains("\"schema\": \"ncclbench-compare/1\""),
        "{json}"
    );
    let all = fs::read_to_string(c.dir.path().join("out/compare.txt")).unwrap();
    assert_eq!(all.matches("==== ").count(), 7, "{all}");
}

#[test]
fn a_failing_step_is_recorded_and_the_check_goes_on() {
    let c = check(|dir, cmd| {
        cmd.env("NCCL_TESTS_BIN", standin_bin(dir))
            .env("FAKE_NCCL_TESTS_FAIL", "all_gather")
            // Smaller than the raw outputs pack to: charts and the largest files are left out, said so.
            .env("GPU_CHECK_FILE_LIMIT", "300000")
            .env("GPU_CHECK_COLLS", "all_gather,all_reduce");
        vec![]
    });
    assert_eq!(c.code, Some(1), "{}", c.summary);
    assert!(c.files.values().all(|&n| n <= 300000), "{:?}", c.files);
    assert!(
        c.summary.contains("# results.tar.gz: left out the charts"),
        "{}",
        c.summary
    );
    assert!(
        c.raw.join("steps.tsv").is_file()
            && c.raw.join("c0/all_reduce.r1.nccl-tests.txt").is_file()
    );
    let failed: Vec<&Step> = c.steps.iter().filter(|s| s.status == "FAIL").collect();
    // 2 rounds of -c 0, then c1, graph, timer, z3, reg1, reg2 and correctness: 9 runs.
    assert_eq!(failed.len(), 9, "{}", c.summary);
    assert!(failed
        .iter()
        .all(|s| s.tool == "nccl-tests" && s.coll == "all_gather" && s.rc == "3"));
    let err = c.raw_text("c0/all_gather.r1.nccl-tests.err");
    assert!(err.contains("Test NCCL failure"), "{err}");
    // What came after each failure ran: the next pair, the last step, and the summary's ratios.
    assert_eq!(c.named("c0/all_reduce.r1.nccl-tests")[0].status, "PASS");
    assert_eq!(
        c.steps
            .iter()
            .rev()
            .find(|s| s.tool == "nccl-tests")
            .unwrap()
            .name,
        "correctness/all_reduce.nccl-tests"
    );
    let fail_lines = c
        .summary
        .lines()
        .filter(|l| l.split_whitespace().take(2).eq(["FAIL", "3"]));
    assert_eq!(fail_lines.count(), 9, "{}", c.summary);
    assert!(
        c.summary.contains("# gpu-check: 9 failed steps"),
        "{}",
        c.summary
    );
}

#[test]
fn every_step_is_bounded_by_the_budget_and_a_hang_is_cut_short() {
    // Budget 60 s: steps may run for its first 25 s, the rest is kept for the summary.
    let started = std::time::Instant::now();
    let c = check(|dir, cmd| {
        cmd.env("NCCL_TESTS_BIN", standin_bin(dir))
            .env("FAKE_NCCL_TESTS_HANG", "all_gather")
            .env("GPU_CHECK_COLLS", "all_gather,all_reduce")
            .env("GPU_CHECK_CONFIGS", "c0,c1")
            .env("GPU_CHECK_BUDGET", "60");
        vec![]
    });
    // The hung step sleeps for an hour: a check that did not cut it short would run far past
    // twice the budget, which a loaded machine never needs to finish the rest.
    let took = started.elapsed().as_secs();
    assert!(took < 2 * 60, "took {took} s\n{}", c.summary);
    assert_eq!(c.code, Some(1), "{}", c.summary);
    let hung = &c.named("c0/all_gather.r1.nccl-tests")[0];
    assert_eq!(
        (hung.status.as_str(), hung.rc.as_str()),
        ("TIMEOUT", "124"),
        "{}",
        c.summary
    );
    let limit: u64 = hung.limit_s.parse().unwrap();
    assert!(
        limit <= 25,
        "the hang's bound ({limit} s) is cut to the budget left"
    );
    let after: Vec<&Step> = c
        .steps
        .iter()
        .skip_while(|s| s.status != "TIMEOUT")
        .skip(1)
        .collect();
    assert!(
        after
            .iter()
            .any(|s| s.status == "NOTRUN" && s.note.starts_with("budget spent")),
        "{}",
        c.summary
    );
    assert_eq!(c.named("c1/all_reduce.r1.nccl-tests")[0].status, "NOTRUN");
    assert!(
        c.summary.starts_with("# ncclbench GPU check: FAIL"),
        "{}",
        c.summary
    );
}
