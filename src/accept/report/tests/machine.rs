//! Tests of the renderings other tools parse: JSON and JUnit XML, their counts, order and
//! escaping.

use super::super::{json, junit};
use super::{failing, passing, NASTY_NAME};

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
