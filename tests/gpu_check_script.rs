//! scripts/gpu-check.sh, the side-by-side check run when a GPU machine is lent, end to end on
//! the fake NCCL with stand-ins for nccl-tests (tests/support/nccl_tests_standin.py, which
//! prints nccl-tests 2.19.6 tables and insists on the libnccl ncclbench loads) and for nvcc
//! (tests/support/nvcc_standin.py, which lets nccl-tests' own Makefile run). Sizes are shrunk
//! through the script's GPU_CHECK_* settings so each run takes seconds.

mod harness;

use crate::support::bin::root;
use harness::{check, flags_after, standin_bin, times, tiny_tarball, Step};
use std::fs;
use std::path::Path;
use std::process::Command;

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
            .env("GPU_CHECK_COLLS", "all_gather,all_reduce");
        vec![]
    });
    assert_eq!(c.code, Some(1), "{}", c.summary);
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
fn without_nvcc_the_build_is_recorded_as_failed_and_ncclbench_still_runs() {
    let nvcc_here = Command::new("sh")
        .args(["-c", "command -v nvcc"])
        .output()
        .unwrap();
    let c = check(|dir, cmd| {
        // NCCL 2.29 refuses two ranks on one GPU: that step is a recorded skip, not a failure.
        cmd.env("CUDA_HOME", dir.join("no-cuda"))
            .env("FAKE_NCCL_VERSION", "22903")
            .env("GPU_CHECK_COLLS", "all_reduce");
        vec![tiny_tarball(dir)]
    });
    assert_eq!(c.code, Some(1), "{}", c.summary);
    let build = c.named("build/nccl-tests");
    assert_eq!(build.len(), 1, "{}", c.summary);
    assert_eq!(build[0].status, "FAIL");
    if nvcc_here.stdout.is_empty() && !Path::new("/usr/local/cuda/bin/nvcc").exists() {
        assert!(build[0].note.starts_with("no nvcc"), "{}", build[0].note);
    }
    let nt: Vec<&Step> = c
        .steps
        .iter()
        .filter(|s| s.tool == "nccl-tests" && s.config != "two_ranks")
        .collect();
    assert_eq!(nt.len(), 9);
    assert!(nt
        .iter()
        .all(|s| s.status == "NOTRUN" && s.note.contains("no all_reduce_perf")));
    let nb: Vec<&Step> = c
        .steps
        .iter()
        .filter(|s| s.tool == "ncclbench" && !["env", "two_ranks"].contains(&s.config.as_str()))
        .collect();
    assert_eq!(
        nb.len(),
        9,
        "ncclbench runs every configuration\n{}",
        c.summary
    );
    assert!(nb.iter().all(|s| s.status == "PASS"), "{}", c.summary);
    let two = c.named("two_ranks/all");
    assert!(
        two[0].status == "SKIP" && two[0].note.contains("2.29.3 refuses"),
        "{}",
        two[0].note
    );
    assert!(c.summary.contains("NOTRUN"), "{}", c.summary);
}

#[test]
fn the_build_step_compiles_only_the_needed_binaries_against_the_loaded_nccl() {
    // nccl-tests' Makefile compiles two C++ files with the host g++ (not the stand-in).
    let tarball = root().join("../shared/third_party/nccl-tests-2.19.6.tar.gz");
    let gxx = Command::new("sh")
        .args(["-c", "command -v g++"])
        .output()
        .unwrap();
    if !tarball.is_file() || gxx.stdout.is_empty() {
        eprintln!("skipped: needs {} and g++", tarball.display());
        return;
    }
    let c = check(|dir, cmd| {
        // A wheel-like layout: lib/libnccl.so.2 with include/nccl.h beside it.
        let nccl = dir.join("nccl");
        fs::create_dir_all(nccl.join("lib")).unwrap();
        fs::create_dir_all(nccl.join("include")).unwrap();
        fs::write(
            nccl.join("include/nccl.h"),
            "#define NCCL_VERSION_CODE 23203\n",
        )
        .unwrap();
        let fake = crate::support::fake_nccl::fake_lib_dir().join("libnccl.so.2");
        std::os::unix::fs::symlink(fake, nccl.join("lib/libnccl.so.2")).unwrap();
        let bin = dir.join("cuda/bin");
        fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(
            root().join("tests/support/nvcc_standin.py"),
            bin.join("nvcc"),
        )
        .unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.env("PATH", path)
            .env("NCCLBENCH_NCCL_LIB", nccl.join("lib/libnccl.so.2"))
            .env("NVCC_STANDIN_LOG", dir.join("nvcc.log"))
            .env("GPU_CHECK_COLLS", "sendrecv")
            .env("GPU_CHECK_ROUNDS", "1");
        vec![tarball.clone()]
    });
    assert_eq!(
        c.code,
        Some(0),
        "{}\n{}",
        c.summary,
        c.raw_text("build/nccl-tests.err")
    );
    assert_eq!(c.named("build/nccl-tests")[0].status, "PASS");
    let log = fs::read_to_string(c.dir.path().join("nvcc.log")).unwrap();
    let links: Vec<&str> = log.lines().filter(|l| l.contains("_perf ")).collect();
    assert_eq!(links.len(), 1, "only sendrecv_perf is linked:\n{log}");
    assert!(links[0].contains("sendrecv_perf"), "{log}");
    // Compiled for the GPU's architecture only (FAKE_CUDA_CC: 9.0), not the Makefile's list.
    let compiles: Vec<&str> = log.lines().filter(|l| l.contains(" -c ")).collect();
    assert!(!compiles.is_empty(), "{log}");
    for l in compiles {
        assert_eq!(l.matches("-gencode").count(), 1, "{l}");
        assert!(l.contains("-gencode=arch=compute_90,code=sm_90"), "{l}");
    }
    // The built binaries ran every configuration on the library ncclbench loaded.
    let nt: Vec<&Step> = c
        .steps
        .iter()
        .filter(|s| s.tool == "nccl-tests" && s.status != "SKIP")
        .collect();
    assert_eq!(nt.len(), 8);
    assert!(nt.iter().all(|s| s.status == "PASS"), "{}", c.summary);
}
