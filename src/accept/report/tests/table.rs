//! Tests of the text table: header, rows, details and the closing verdict line.

use super::super::{junit, text};
use super::{check, fail, failing, passing, report};
use crate::accept::model::{FailureClass, Stage, Status};

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
