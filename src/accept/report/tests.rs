//! Tests of the three accept renderings on hand-built reports.

use super::{json, junit, text};
use crate::accept::model::{
    AcceptReport, Check, FailureClass, ProfileRef, Stage, StageRun, Status, Verdict, SCHEMA,
};

/// The check name and detail that need escaping: every XML markup character, a control
/// character XML 1.0 forbids, and tab / newline / carriage return that must survive.
const NASTY_NAME: &str = "busbw <&>\"' x\u{1}y";
const NASTY_DETAIL: &str = "worst <size> & \"dtype\" 'f32'\u{7}\tcol\nline 2\r\nline 3";

fn check(stage: Stage, collective: Option<&str>, name: &str, status: Status) -> Check {
    Check {
        stage,
        collective: collective.map(String::from),
        name: name.into(),
        measured: "412.3 GB/s".into(),
        expected: ">= 350 GB/s".into(),
        measured_value: Some(412.3),
        expected_value: Some(350.0),
        unit: Some("GB/s".into()),
        status,
        class: FailureClass::Performance,
        detail: None,
    }
}

fn fail(mut c: Check, class: FailureClass, measured: &str, expected: &str) -> Check {
    c.status = Status::Fail;
    c.class = class;
    c.measured = measured.into();
    c.expected = expected.into();
    c
}

fn with_detail(mut c: Check, detail: &str) -> Check {
    c.detail = Some(detail.into());
    c
}

fn run(stage: Stage, collective: &str, seconds: f64) -> StageRun {
    StageRun {
        stage,
        collective: collective.into(),
        argv: vec!["ncclbench".into(), collective.into()],
        files: vec![format!("{}/{collective}.json", stage.name())],
        exit_status: 0,
        seconds,
        error: None,
    }
}

fn report(checks: Vec<Check>, runs: Vec<StageRun>) -> AcceptReport {
    AcceptReport {
        schema: SCHEMA,
        profile: ProfileRef {
            name: "h100-nvswitch".into(),
            source: "builtin".into(),
            description: "8x H100 SXM in one node, NVSwitch".into(),
            typical: true,
        },
        nranks: 8,
        backend: "nccl".into(),
        started: "2026-11-29 10:00:00".into(),
        finished: "2026-11-29 10:12:03".into(),
        out_dir: "DIR".into(),
        runs,
        verdict: Verdict::of(&checks),
        checks,
        notes: vec!["sweep clamped to 4 GiB by GPU memory".into()],
    }
}

/// Every check passes: one correctness and one performance check of all_reduce.
fn passing() -> AcceptReport {
    let mut ok = check(
        Stage::Correctness,
        Some("all_reduce"),
        "no wrong elements",
        Status::Pass,
    );
    ok.measured = "0 wrong".into();
    ok.expected = "0 wrong".into();
    report(
        vec![
            ok,
            check(
                Stage::Performance,
                Some("all_reduce"),
                "busbw 1 GiB..8 GiB",
                Status::Pass,
            ),
        ],
        vec![
            run(Stage::Correctness, "all_reduce", 12.5),
            run(Stage::Performance, "all_reduce", 100.25),
        ],
    )
}

/// One failure of every class, a check not run, a pass, and the check with the nasty
/// name and detail.
fn failing() -> AcceptReport {
    use FailureClass::*;
    let checks = vec![
        with_detail(
            fail(
                check(
                    Stage::Correctness,
                    Some("all_reduce"),
                    "no wrong elements",
                    Status::Pass,
                ),
                Correctness,
                "12 wrong",
                "0 wrong",
            ),
            "rank 3, bf16 sum, first at index 1024",
        ),
        fail(
            check(
                Stage::Correctness,
                None,
                "completes within 300 s",
                Status::Pass,
            ),
            Setup,
            "could not start",
            "starts",
        ),
        check(
            Stage::Performance,
            Some("all_reduce"),
            "time 8 B..1 KiB",
            Status::Pass,
        ),
        with_detail(
            fail(
                check(
                    Stage::Performance,
                    Some("all_reduce"),
                    NASTY_NAME,
                    Status::Pass,
                ),
                Performance,
                "312.4 GB/s",
                ">= 350 GB/s",
            ),
            NASTY_DETAIL,
        ),
        fail(
            check(
                Stage::Performance,
                Some("all_gather"),
                "completes within 300 s",
                Status::Pass,
            ),
            Timeout,
            "hung after 300 s",
            "done in 300 s",
        ),
        with_detail(
            fail(
                check(
                    Stage::Performance,
                    Some("broadcast"),
                    "busbw 1 GiB..8 GiB",
                    Status::Pass,
                ),
                Backend,
                "NCCL error",
                ">= 300 GB/s",
            ),
            "ncclRemoteError on rank 5",
        ),
        {
            let mut c = check(
                Stage::Baseline,
                Some("all_reduce"),
                "no slower size than baseline",
                Status::NotRun,
            );
            c.class = Timeout;
            c.measured = "-".into();
            c.detail = Some("not run: the performance stage hung".into());
            c
        },
    ];
    report(
        checks,
        vec![
            run(Stage::Correctness, "all_reduce", 10.0),
            run(Stage::Performance, "all_reduce", 120.5),
            run(Stage::Performance, "all_gather", 300.25),
        ],
    )
}

#[test]
fn a_passing_report_prints_the_header_the_table_and_pass() {
    let expected = "\
# ncclbench accept: profile h100-nvswitch (builtin) - 8x H100 SXM in one node, NVSwitch
# thresholds are typical ranges from public material, not guarantees
# 8 ranks, backend nccl, 2026-11-29 10:00:00 .. 2026-11-29 10:12:03, results in DIR
# sweep clamped to 4 GiB by GPU memory
#
#  stage        collective      check                      measured        expected              result
   correctness  all_reduce      no wrong elements          0 wrong         0 wrong               PASS
   performance  all_reduce      busbw 1 GiB..8 GiB         412.3 GB/s      >= 350 GB/s           PASS
# accept: PASS (2 checks)
";
    assert_eq!(text(&passing()), expected);
}

#[test]
fn the_typical_line_is_only_there_for_typical_thresholds() {
    let mut r = passing();
    r.profile.typical = false;
    let t = text(&r);
    assert!(!t.contains("typical"), "{t}");
    assert!(t.starts_with("# ncclbench accept: profile h100-nvswitch (builtin) - 8x H100"));
}

#[test]
fn a_failing_table_names_every_failure_with_its_detail_and_the_verdict() {
    let t = text(&failing());
    let lines: Vec<&str> = t.lines().collect();
    // Every line is a `#` header/footer line, a row or a detail line; none has a control char.
    for l in &lines {
        assert!(!l.chars().any(char::is_control), "{l:?}");
        assert!(l.starts_with('#') || l.starts_with("   "), "{l:?}");
    }
    let header = lines
        .iter()
        .position(|l| l.starts_with("#  stage"))
        .unwrap();
    let rows: Vec<&str> = lines[header + 1..]
        .iter()
        .copied()
        .filter(|l| !l.starts_with('#') && !l.trim_start().starts_with("->"))
        .filter(|l| !l.starts_with("          "))
        .collect();
    assert_eq!(rows.len(), 7);
    // The long name widens its column: `result` starts at the same place on every row.
    let col = lines[header].find("result").unwrap();
    for (row, want) in rows
        .iter()
        .zip(["FAIL", "FAIL", "PASS", "FAIL", "FAIL", "FAIL", "NOT RUN"])
    {
        assert_eq!(&row[col..], want, "{row:?}");
    }
    assert!(col > "#  stage        collective      check                      measured        expected              ".len());
    // The nasty name shows with its control character as a space.
    assert!(rows[3].contains("busbw <&>\"' x y"), "{}", rows[3]);
    // Suite-wide checks say so in the collective column.
    assert!(rows[1].starts_with("   correctness  suite "), "{}", rows[1]);
    // Each detail follows its row; multi-line details stay indented.
    let after = |row: &str| lines[lines.iter().position(|l| *l == row).unwrap() + 1];
    assert_eq!(
        after(rows[0]),
        "       -> rank 3, bf16 sum, first at index 1024"
    );
    assert_eq!(
        after(rows[3]),
        "       -> worst <size> & \"dtype\" 'f32'  col"
    );
    assert!(t.contains("\n          line 2\n          line 3\n"), "{t}");
    assert_eq!(
        after(rows[6]),
        "       -> not run: the performance stage hung"
    );
    // A failure without detail has no detail line.
    assert_eq!(after(rows[1]), rows[2]);
    assert_eq!(
        *lines.last().unwrap(),
        "# accept: FAIL: 6 of 7 checks did not pass \
         (timeout, correctness, setup, backend, performance); exit status 4"
    );
}

#[test]
fn a_passing_check_shows_no_detail() {
    let mut r = passing();
    r.checks[0].detail = Some("all 12 dtypes compared".into());
    assert!(!text(&r).contains("all 12 dtypes"));
}

#[test]
fn one_failing_check_reads_in_the_singular() {
    let c = fail(
        check(
            Stage::Performance,
            Some("all_reduce"),
            "busbw",
            Status::Pass,
        ),
        FailureClass::Performance,
        "1 GB/s",
        ">= 2 GB/s",
    );
    let t = text(&report(vec![c], vec![]));
    assert!(
        t.ends_with("# accept: FAIL: 1 of 1 check did not pass (performance); exit status 1\n"),
        "{t}"
    );
}

#[test]
fn a_suite_without_checks_says_it_checked_nothing() {
    let r = report(vec![], vec![]);
    let t = text(&r);
    assert!(!t.contains("#  stage"), "{t}");
    assert!(
        t.contains("# no checks: the suite checked nothing\n"),
        "{t}"
    );
    assert!(
        t.ends_with("# accept: PASS (no checks, nothing was verified)\n"),
        "{t}"
    );
    let x = junit(&r);
    let doc = roxmltree::Document::parse(&x).unwrap();
    assert_eq!(doc.root_element().attribute("tests"), Some("0"));
    assert_eq!(
        doc.root_element()
            .children()
            .filter(|n| n.is_element())
            .count(),
        0
    );
}

#[test]
fn json_parses_back_with_schema_first_and_the_verdict() {
    for (r, passed, exit) in [(passing(), true, 0), (failing(), false, 4)] {
        let s = json(&r);
        assert!(s.ends_with("}\n"));
        assert!(
            s.starts_with("{\n  \"schema\": \"ncclbench-accept/1\",\n"),
            "{s}"
        );
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["schema"], "ncclbench-accept/1");
        assert_eq!(v["verdict"]["passed"], passed);
        assert_eq!(v["verdict"]["exit_status"], exit);
        assert_eq!(v["checks"].as_array().unwrap().len(), r.checks.len());
    }
    let v: serde_json::Value = serde_json::from_str(&json(&failing())).unwrap();
    assert_eq!(v["checks"][3]["name"], NASTY_NAME);
    assert_eq!(v["checks"][6]["status"], "not_run");
    assert_eq!(
        v["verdict"]["failed_classes"],
        serde_json::json!(["timeout", "correctness", "setup", "backend", "performance"])
    );
}

/// The attributes `tests failures errors skipped` of a suite element, and the same counted
/// from its testcases.
fn counts(n: roxmltree::Node) -> ([usize; 4], [usize; 4]) {
    let attr = |name| n.attribute(name).unwrap().parse::<usize>().unwrap();
    let declared = [
        attr("tests"),
        attr("failures"),
        attr("errors"),
        attr("skipped"),
    ];
    let cases: Vec<_> = n
        .descendants()
        .filter(|c| c.has_tag_name("testcase"))
        .collect();
    let with = |tag| {
        cases
            .iter()
            .filter(|c| c.children().any(|k| k.has_tag_name(tag)))
            .count()
    };
    (
        declared,
        [cases.len(), with("failure"), with("error"), with("skipped")],
    )
}

fn time(n: roxmltree::Node) -> f64 {
    n.attribute("time").unwrap().parse().unwrap()
}

#[test]
fn junit_counts_match_the_testcases_and_suites_come_in_stage_order() {
    for r in [passing(), failing()] {
        let x = junit(&r);
        assert!(x.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
        let doc = roxmltree::Document::parse(&x).unwrap();
        let root = doc.root_element();
        assert!(root.has_tag_name("testsuites"));
        assert_eq!(root.attribute("name"), Some("ncclbench accept"));
        let (declared, counted) = counts(root);
        assert_eq!(declared, counted);
        assert_eq!(declared[0], r.checks.len());
        let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
        let mut sum = 0.0;
        for s in &suites {
            assert!(s.has_tag_name("testsuite"));
            let (declared, counted) = counts(*s);
            assert_eq!(declared, counted, "{:?}", s.attribute("name"));
            let cases: f64 = s
                .children()
                .filter(|c| c.has_tag_name("testcase"))
                .map(time)
                .sum();
            assert!((time(*s) - cases).abs() < 1e-9);
            assert_eq!(s.attribute("timestamp"), Some("2026-11-29T10:00:00"));
            // Properties come first, with the run-wide facts.
            let props = s.first_element_child().unwrap();
            assert!(props.has_tag_name("properties"));
            let prop = |name| {
                props
                    .children()
                    .find(|p| p.attribute("name") == Some(name))
                    .and_then(|p| p.attribute("value"))
            };
            assert_eq!(prop("profile"), Some("h100-nvswitch"));
            assert_eq!(prop("nranks"), Some("8"));
            assert_eq!(prop("backend"), Some("nccl"));
            let status = r.verdict.exit_status.to_string();
            assert_eq!(prop("exit_status"), Some(status.as_str()));
            sum += time(*s);
        }
        assert!((time(root) - sum).abs() < 1e-9);
        let names: Vec<_> = suites
            .iter()
            .map(|s| s.attribute("name").unwrap())
            .collect();
        let want: &[&str] = if r.verdict.passed {
            &["correctness", "performance"]
        } else {
            &["correctness", "performance", "baseline"]
        };
        assert_eq!(names, want);
    }
}

#[test]
fn junit_puts_failures_errors_and_skips_by_class_with_run_times() {
    let x = junit(&failing());
    let doc = roxmltree::Document::parse(&x).unwrap();
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 7);
    let outcome = |i: usize| {
        cases[i]
            .first_element_child()
            .map(|k| (k.tag_name().name(), k.attribute("type")))
    };
    assert_eq!(outcome(0), Some(("failure", Some("correctness"))));
    assert_eq!(outcome(1), Some(("error", Some("setup"))));
    assert_eq!(outcome(2), None);
    assert_eq!(outcome(3), Some(("failure", Some("performance"))));
    assert_eq!(outcome(4), Some(("error", Some("timeout"))));
    assert_eq!(outcome(5), Some(("error", Some("backend"))));
    assert_eq!(outcome(6), Some(("skipped", None)));

    let first = cases[0].first_element_child().unwrap();
    assert_eq!(
        first.attribute("message"),
        Some("measured 12 wrong, expected 0 wrong")
    );
    assert_eq!(first.text(), Some("rank 3, bf16 sum, first at index 1024"));
    assert_eq!(
        cases[6].first_element_child().unwrap().attribute("message"),
        Some("not run: the performance stage hung")
    );

    let class = |i: usize| cases[i].attribute("classname").unwrap();
    assert_eq!(class(0), "ncclbench.accept.correctness.all_reduce");
    assert_eq!(class(1), "ncclbench.accept.correctness.suite");
    assert_eq!(class(4), "ncclbench.accept.performance.all_gather");
    assert_eq!(class(6), "ncclbench.accept.baseline.all_reduce");
    // Times come from the stage run with the same stage and collective, on its first check
    // only (so suites sum each run once), 0 without one.
    let times: Vec<f64> = cases.iter().map(|c| time(*c)).collect();
    assert_eq!(times, [10.0, 0.0, 120.5, 0.0, 300.25, 0.0, 0.0]);
}

#[test]
fn junit_escaped_text_round_trips_minus_forbidden_characters() {
    let x = junit(&failing());
    let doc = roxmltree::Document::parse(&x).unwrap();
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some("busbw <&>\"' xy"))
        .expect("the nasty check, its \\u{1} dropped");
    let failure = case.first_element_child().unwrap();
    assert_eq!(
        failure.text(),
        Some("worst <size> & \"dtype\" 'f32'\tcol\nline 2\r\nline 3")
    );
    // Attributes keep tab, newline and carriage return too (not normalised to spaces).
    let mut r = failing();
    r.checks[3].measured = "a\tb\nc\rd\u{b}e".into();
    let x = junit(&r);
    let doc = roxmltree::Document::parse(&x).unwrap();
    let msg = doc
        .descendants()
        .find(|n| n.attribute("type") == Some("performance"))
        .and_then(|n| n.attribute("message"))
        .unwrap();
    assert_eq!(msg, "measured a\tb\nc\rde, expected >= 350 GB/s");
}
