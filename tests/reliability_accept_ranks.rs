//! The acceptance suite on rank counts that are not a power of two (issue 35): a stage that
//! cannot run at this count (hypercube) is found before the first stage and left out with a
//! line saying why, so the suite can still pass on 3 (or 6, 12) ranks.

use crate::support::bin::{ncclbench, run};

#[test]
fn hypercube_is_skipped_with_a_reason_on_three_ranks_and_the_suite_passes() {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("p.toml");
    std::fs::write(
        &prof,
        "[profile]\nname = \"three\"\ndescription = \"test\"\ntypical = false\n\n\
         [suite]\ncollectives = [\"all_reduce\", \"hypercube\", \"sendrecv\"]\n\
         correctness_max_bytes = \"64\"\ncorrectness_step_factor = 8\n\
         perf_max_bytes = \"4K\"\nperf_step_factor = 8\niters = 1\nwarmup_iters = 1\n\
         timeout_s = 20\n",
    )
    .unwrap();
    let out = dir.path().join("a");
    let r = run(ncclbench()
        .arg("accept")
        .arg("--profile")
        .arg(&prof)
        .arg("--out")
        .arg(&out)
        .args(["--backend", "host", "-g", "3"]));
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    let skip = r
        .out
        .lines()
        .position(|l| l.contains("hypercube skipped") && l.contains("power-of-two"))
        .unwrap_or_else(|| panic!("a line saying why: {}", r.out));
    let first_stage = r
        .out
        .lines()
        .position(|l| l.starts_with("# correctness"))
        .unwrap();
    assert!(skip < first_stage, "said before the first stage: {}", r.out);
    assert!(!out.join("correctness/hypercube.csv").exists());
    assert!(out.join("performance/sendrecv.csv").is_file());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("accept.json")).unwrap()).unwrap();
    assert_eq!(json["verdict"]["passed"], true, "{json}");
    let notes = json["notes"].to_string();
    assert!(notes.contains("hypercube skipped"), "{notes}");
}

#[test]
fn a_suite_with_nothing_that_can_run_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("p.toml");
    std::fs::write(
        &prof,
        "[profile]\nname = \"cube\"\ndescription = \"test\"\ntypical = false\n\n\
         [suite]\ncollectives = [\"hypercube\"]\ncorrectness_max_bytes = \"64\"\n\
         perf_max_bytes = \"4K\"\niters = 1\nwarmup_iters = 1\ntimeout_s = 20\n",
    )
    .unwrap();
    let out = dir.path().join("a");
    let r = run(ncclbench()
        .arg("accept")
        .arg("--profile")
        .arg(&prof)
        .arg("--out")
        .arg(&out)
        .args(["--backend", "host", "-g", "6"]));
    assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
    assert_eq!(r.err.trim_end().lines().count(), 1, "{}", r.err);
    assert!(r.err.contains("power-of-two"), "{}", r.err);
    assert!(!out.exists(), "nothing written");
}
