//! scripts/gpu-check.sh, the check run when a GPU machine is lent, end to end on the fake NCCL:
//! its references (scripts/gpu-ref-cupy.py, gpu-ref-torch.py) run unchanged over stand-in
//! `cupy` and `torch` modules (tests/gpu_check_script/py: ctypes over fake-nccl), nccl-tests
//! is the stand-in of tests/support/nccl_tests_standin.py behind NCCL_TESTS_BIN. Sizes and
//! iterations are shrunk through the script's GPU_CHECK_* settings so each run takes seconds.

mod harness;

use harness::{check, median, plan, standin_bin, times, Step};
use std::fs;

#[test]
fn the_plan_bounds_every_step_and_fits_five_minutes() {
    for envs in [vec![], vec![("NCCL_TESTS_BIN", "/nonexistent")]] {
        let (steps, total) = plan(&envs);
        let sum: u64 = steps.iter().map(|s| s.0).sum();
        assert!(sum <= 300, "{sum} s planned with {envs:?}");
        assert_eq!(total, format!("total: {sum} s of a 300 s budget"));
        assert!(steps.iter().all(|s| s.0 > 0), "{steps:?}");
    }
    let (steps, _) = plan(&[]);
    let names: Vec<&str> = steps.iter().map(|s| s.1.as_str()).collect();
    // Small sizes: three rounds, each collective's ncclbench run beside CuPy's.
    for r in 1..=3 {
        for c in ["all_reduce", "all_gather", "sendrecv"] {
            let nb = format!("small/{c}.r{r}.ncclbench");
            let at = names.iter().position(|n| *n == nb).expect(&nb);
            assert_eq!(names[at + 1], format!("small/{c}.r{r}.cupy"));
        }
    }
    assert!(
        names.contains(&"large/sendrecv.r2.cupy") && !names.contains(&"large/sendrecv.r3.cupy")
    );
    assert_eq!(
        names.iter().filter(|n| n.starts_with("correct/")).count(),
        11
    );
    for n in [
        "torch/all.torch",
        "feature/graph.ncclbench",
        "feature/timer-device.ncclbench",
        "feature/z3.ncclbench",
        "feature/reg1.ncclbench",
        "feature/reg2.ncclbench",
        "locate/locate",
        "locate/accept",
    ] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    // A bigger budget setting does not stretch the steps: the plan is what the bounds say.
    let (_, total) = plan(&[("GPU_CHECK_LIMIT_TORCH", "400")]);
    assert!(total.starts_with("total: 6"), "{total}");
}

#[test]
fn the_check_interleaves_ncclbench_and_the_references_and_summarises() {
    let c = check(|dir, cmd| {
        cmd.env("FAKE_REF_LOG", dir.join("ref.log"));
    });
    assert_eq!(c.code, Some(0), "{}", c.summary);
    let names: Vec<&str> = c.files.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["env.json", "env.txt", "results.tar.gz", "summary.txt"]
    );
    assert!(
        c.summary.starts_with("# ncclbench GPU check: PASS"),
        "{}",
        c.summary
    );

    // The run took exactly the planned steps, in order.
    let (planned, _) = plan(&[
        ("GPU_CHECK_SMALL_MAX", "4K"),
        ("GPU_CHECK_MAX", "64K"),
        ("GPU_CHECK_CHECK_MAX", "4K"),
        ("GPU_CHECK_ITERS", "50"),
    ]);
    let ran: Vec<&str> = c.steps.iter().map(|s| s.name.as_str()).collect();
    let mut planned: Vec<&str> = planned.iter().map(|s| s.1.as_str()).collect();
    assert_eq!(planned.pop(), Some("finish (summary, pack)"));
    assert_eq!(ran, planned);
    // The stand-in references really ran, once per recorded step, with ncclbench's sweep.
    let log = fs::read_to_string(c.dir.path().join("ref.log")).unwrap();
    assert_eq!(log.lines().count(), 3 * 3 + 2 * 3 + 1, "{log}");
    assert!(
        log.contains("gpu-ref-cupy.py all_reduce 8,4K,2,50,20"),
        "{log}"
    );
    assert!(
        log.contains("gpu-ref-torch.py all_reduce,all_gather,sendrecv 8,4K,2,50,20 4K,64K,2,20,5")
    );
    let nb = &c.named("small/all_reduce.r1.ncclbench")[0];
    assert!(
        nb.note
            .ends_with("all_reduce --backend nccl -b 8 -e 4K -f 2 -n 50 -w 20 -c 0"),
        "{}",
        nb.note
    );

    // One library file for all: the stand-ins call the fake that ncclbench loaded.
    for tool in ["cupy", "torch"] {
        let line = c.summary.lines().find(|l| l.starts_with(tool)).unwrap();
        assert!(
            line.ends_with(": same file") && line.contains("2.32.3"),
            "{line}"
        );
    }
    // NCCL's one-rank fp8 PreMulSum refusal is EXPECTED, not a failure; the rest passed.
    for s in &c.steps {
        let refused = [
            "correct/all_reduce.",
            "correct/reduce_scatter.",
            "correct/reduce.",
        ]
        .iter()
        .any(|p| s.name.starts_with(p));
        let want = if refused { "EXPECTED" } else { "PASS" };
        assert_eq!(s.status, want, "{}: {}", s.name, s.note);
    }
    assert!(c.named("correct/reduce.")[0]
        .note
        .starts_with("4 type/op pairs NCCL refuses on one rank"));
    // accept --locate: its smoke profile fails on purpose, so exit 1 with locate's row passes.
    assert_eq!(c.named("locate/accept")[0].rc, "1");
    // locate on one GPU refuses the one-rank job cleanly: exit 2, its reason on stderr.
    assert_eq!(c.named("locate/locate")[0].rc, "2");
    assert!(c.raw_text("locate/accept.txt").contains("# accept: FAIL"));

    // The summary's ratio is the median of the rounds' ratios, each round's pair divided.
    let per_round: Vec<f64> = (1..=3)
        .map(|r| {
            let t = |tool: &str| {
                times(&c.raw_text(&format!("small/all_reduce.r{r}.{tool}.txt")))[&1024]
            };
            t("ncclbench") / t("cupy")
        })
        .collect();
    let lo = per_round.iter().copied().fold(f64::MAX, f64::min);
    let hi = per_round.iter().copied().fold(0.0, f64::max);
    let row: Vec<&str> = c
        .summary
        .lines()
        .skip_while(|l| !l.starts_with("### small: ncclbench / cupy"))
        .find(|l| l.split_whitespace().take(3).eq(["all_reduce", "1K", "oop"]))
        .unwrap_or_else(|| panic!("no small all_reduce 1K row\n{}", c.summary))
        .split_whitespace()
        .collect();
    assert_eq!(row[5], format!("{:.3}", median(per_round)), "{row:?}");
    assert_eq!(row[6], format!("{lo:.3}..{hi:.3}"), "{row:?}");
    assert_eq!(row[7], "3", "{row:?}");
    // torch measures all_reduce in place only, and cannot send to itself.
    let torch = c.raw_text("torch/all.torch.txt");
    assert!(
        torch.contains("# skipping sendrecv: torch.distributed refuses"),
        "{torch}"
    );
    assert!(
        c.summary.contains("### large: ncclbench / torch"),
        "{}",
        c.summary
    );
    let places: Vec<&str> = c
        .summary
        .lines()
        .skip_while(|l| !l.starts_with("### small: ncclbench / torch"))
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("all_reduce ") && !l.contains("geomean"))
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert!(
        !places.is_empty() && places.iter().all(|p| *p == "ip"),
        "{places:?}"
    );
}

#[test]
fn a_failing_or_hanging_step_is_recorded_and_the_check_goes_on() {
    let c = check(|dir, cmd| {
        cmd.env("NCCL_TESTS_BIN", standin_bin(dir))
            .env("FAKE_NCCL_TESTS_FAIL", "sendrecv")
            .env("FAKE_NCCL_TESTS_HANG", "all_gather")
            .env("GPU_CHECK_LIMIT_NT_SMALL", "2")
            .env("GPU_CHECK_LIMIT_NT_LARGE", "2")
            .env("GPU_CHECK_ROUNDS", "1")
            .env("GPU_CHECK_LARGE_ROUNDS", "1")
            // Smaller than the summary: it is cut to the limit, the last line saying so.
            .env("GPU_CHECK_FILE_LIMIT", "9000");
    });
    assert_eq!(c.code, Some(1), "{}", c.summary);
    assert!(c.files.values().all(|&n| n <= 9000), "{:?}", c.files);
    assert!(
        c.summary.ends_with("# summary.txt was cut to 9000 bytes\n"),
        "{}",
        c.summary
    );
    assert!(
        c.raw.join("steps.tsv").is_file(),
        "the manifest is always packed"
    );
    let nt: Vec<&Step> = c.steps.iter().filter(|s| s.tool == "nccl-tests").collect();
    let status = |name: &str| {
        let s = nt
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        (s.status.as_str(), s.rc.as_str(), s.limit_s.as_str())
    };
    assert_eq!(
        status("small/all_gather.r1.nccl-tests"),
        ("TIMEOUT", "124", "2")
    );
    assert_eq!(status("small/sendrecv.r1.nccl-tests").0, "FAIL");
    assert_eq!(status("small/all_reduce.r1.nccl-tests").0, "PASS");
    assert_eq!(status("large/all_reduce.r1.nccl-tests").0, "PASS");
    let hung = c.named("small/all_gather.r1.nccl-tests")[0];
    assert_eq!(
        (hung.kind.as_str(), hung.coll.as_str()),
        ("nt_small", "all_gather")
    );
    // Everything after the hang and the failure ran.
    let last = c.steps.last().unwrap();
    assert_eq!(
        (last.name.as_str(), last.status.as_str()),
        ("locate/accept", "PASS")
    );
    let head = c.summary.lines().next().unwrap();
    assert!(
        head.starts_with("# ncclbench GPU check: FAIL") && head.ends_with(", 2 FAIL, 2 TIMEOUT"),
        "{head}"
    );
    // nccl-tests runs on the library ncclbench loaded (the stand-in insists on it).
    let line = c
        .summary
        .lines()
        .find(|l| l.starts_with("nccl-tests "))
        .unwrap();
    assert!(line.ends_with(": same file"), "{line}");
}
