//! The three renderings of an [`AcceptReport`]: the PASS/FAIL table people read ([`text`],
//! printed on stdout and written to `accept.txt`), `accept.json` ([`json`]) and `junit.xml`
//! ([`junit`]) for CI test reporters (Jenkins, GitLab, GitHub).
//!
//! All three show the same checks in the same order; nothing here decides a verdict, it is
//! read from the report.

use super::model::{AcceptReport, Check, FailureClass, Stage, Status, SCHEMA};
use std::fmt::Write as _;

/// Stages in the order the suite runs them (and the JUnit suites appear).
const STAGES: [Stage; 4] = [
    Stage::Correctness,
    Stage::Performance,
    Stage::Baseline,
    Stage::Locate,
];

/// Column headers of the text table and their minimum widths.
const COLUMNS: [(&str, usize); 5] = [
    ("stage", 11),
    ("collective", 14),
    ("check", 25),
    ("measured", 14),
    ("expected", 20),
];

/// What the collective column says for a suite-wide check.
const SUITE: &str = "suite";

/// The PASS/FAIL table as printed on stdout and written to accept.txt.
///
/// A header of `# ` lines (profile, typical-range warning, ranks/backend/times/directory,
/// notes), one row per check with its columns sized to their content, the detail of each
/// check that did not pass on the line below it, and the verdict line.
pub fn text(r: &AcceptReport) -> String {
    let mut out = String::new();
    let p = &r.profile;
    let mut title = format!(
        "ncclbench accept: profile {} ({})",
        one_line(&p.name),
        one_line(&p.source)
    );
    if !p.description.trim().is_empty() {
        let _ = write!(title, " - {}", one_line(&p.description));
    }
    comment(&mut out, &title);
    if p.typical {
        comment(
            &mut out,
            "thresholds are typical ranges from public material, not guarantees",
        );
    }
    comment(
        &mut out,
        &format!(
            "{} ranks, backend {}, {} .. {}, results in {}",
            r.nranks,
            one_line(&r.backend),
            one_line(&r.started),
            one_line(&r.finished),
            one_line(&r.out_dir)
        ),
    );
    for note in &r.notes {
        for line in note.lines() {
            comment(&mut out, &one_line(line));
        }
    }
    out.push_str("#\n");

    if r.checks.is_empty() {
        comment(&mut out, "no checks: the suite checked nothing");
    } else {
        table(&mut out, &r.checks);
    }

    let v = &r.verdict;
    let verdict = if v.passed && v.total == 0 {
        "accept: PASS (no checks, nothing was verified)".to_string()
    } else if v.passed {
        format!("accept: PASS ({})", plural(v.total, "check"))
    } else {
        let mut s = format!(
            "accept: FAIL: {} of {} did not pass",
            v.failed,
            plural(v.total, "check")
        );
        if !v.failed_classes.is_empty() {
            let names: Vec<&str> = v.failed_classes.iter().map(|c| c.name()).collect();
            let _ = write!(s, " ({})", names.join(", "));
        }
        let _ = write!(s, "; exit status {}", v.exit_status);
        s
    };
    comment(&mut out, &verdict);
    out
}

/// The check rows of the text table, header line included.
fn table(out: &mut String, checks: &[Check]) {
    let rows: Vec<[String; 5]> = checks
        .iter()
        .map(|c| {
            [
                c.stage.name().to_string(),
                one_line(c.collective.as_deref().unwrap_or(SUITE)),
                one_line(&c.name),
                one_line(&c.measured),
                one_line(&c.expected),
            ]
        })
        .collect();
    let mut widths = COLUMNS.map(|(_, min)| min);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |lead: &str, cells: [&str; 5], result: &str| {
        let mut s = lead.to_string();
        for (cell, w) in cells.iter().zip(widths) {
            let _ = write!(s, "{cell:<w$}  ");
        }
        s.push_str(result);
        s.push('\n');
        s
    };
    out.push_str(&line("#  ", COLUMNS.map(|(h, _)| h), "result"));
    for (c, row) in checks.iter().zip(&rows) {
        let cells = [
            row[0].as_str(),
            row[1].as_str(),
            row[2].as_str(),
            row[3].as_str(),
            row[4].as_str(),
        ];
        out.push_str(&line("   ", cells, c.status.label()));
        if c.status == Status::Pass {
            continue;
        }
        if let Some(detail) = c.detail.as_deref() {
            let mut lead = "       -> ";
            for l in detail.lines().filter(|l| !l.trim().is_empty()) {
                let _ = writeln!(out, "{lead}{}", one_line(l));
                lead = "          ";
            }
        }
    }
}

/// One `# ` header line.
fn comment(out: &mut String, line: &str) {
    let _ = writeln!(out, "# {line}");
}

/// `1 check`, `25 checks`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The text with every control character (newlines and tabs included) as a space, so a
/// value always stays on its own line and in its own column.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// accept.json: serde_json pretty of the report (schema field first), trailing newline.
pub fn json(r: &AcceptReport) -> String {
    match serde_json::to_string_pretty(r) {
        Ok(mut s) => {
            s.push('\n');
            s
        }
        // Plain structs with string keys always serialise; say so rather than panic.
        Err(e) => format!(
            "{}\n",
            serde_json::json!({"schema": SCHEMA, "error": e.to_string()})
        ),
    }
}

/// The tallies of one `<testsuite>` (or of `<testsuites>`).
#[derive(Default, Clone, Copy)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    time: f64,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.tests += o.tests;
        self.failures += o.failures;
        self.errors += o.errors;
        self.skipped += o.skipped;
        self.time += o.time;
    }

    fn attrs(&self) -> String {
        format!(
            r#"tests="{}" failures="{}" errors="{}" skipped="{}" time="{}""#,
            self.tests,
            self.failures,
            self.errors,
            self.skipped,
            seconds(self.time)
        )
    }
}

/// How a check that did not pass appears in JUnit.
enum Outcome {
    Passed,
    /// `<failure>`: the collective ran and its data or speed was wrong.
    Failure,
    /// `<error>`: the stage itself broke (timeout, backend, setup).
    Error,
    Skipped,
}

fn outcome(c: &Check) -> Outcome {
    match (c.status, c.class) {
        (Status::Pass, _) => Outcome::Passed,
        (Status::NotRun, _) => Outcome::Skipped,
        (Status::Fail, FailureClass::Correctness | FailureClass::Performance) => Outcome::Failure,
        (Status::Fail, FailureClass::Timeout | FailureClass::Backend | FailureClass::Setup) => {
            Outcome::Error
        }
    }
}

/// junit.xml.
///
/// One `<testsuite>` per stage that has checks (correctness, performance, baseline), each
/// with the run's properties; one `<testcase>` per check, classname
/// `ncclbench.accept.<stage>.<collective or "suite">`. A failed correctness or performance
/// check holds a `<failure>`, a failed timeout, backend or setup check an `<error>` (type =
/// the class), a check not run a `<skipped>`. The first testcase of a stage run carries the
/// run's seconds and the run's other checks 0, so suite times (the sums of their testcases')
/// are the stages' wall time, each run counted once.
pub fn junit(r: &AcceptReport) -> String {
    let mut total = Counts::default();
    let mut suites = String::new();
    let mut timed: Vec<(Stage, Option<&str>)> = Vec::new();
    for stage in STAGES {
        let checks: Vec<&Check> = r.checks.iter().filter(|c| c.stage == stage).collect();
        if checks.is_empty() {
            continue;
        }
        let mut counts = Counts::default();
        let mut cases = String::new();
        for c in checks {
            let run = (c.stage, c.collective.as_deref());
            let time = if timed.contains(&run) {
                0.0
            } else {
                timed.push(run);
                run_seconds(r, c)
            };
            counts.add(Counts {
                tests: 1,
                time,
                ..Counts::default()
            });
            let _ = write!(
                cases,
                r#"    <testcase classname="{}" name="{}" time="{}""#,
                attr(&format!(
                    "ncclbench.accept.{}.{}",
                    stage.name(),
                    c.collective.as_deref().unwrap_or(SUITE)
                )),
                attr(&c.name),
                seconds(time)
            );
            let message = format!("measured {}, expected {}", c.measured, c.expected);
            let (tag, with_type) = match outcome(c) {
                Outcome::Passed => {
                    cases.push_str("/>\n");
                    continue;
                }
                Outcome::Failure => {
                    counts.failures += 1;
                    ("failure", true)
                }
                Outcome::Error => {
                    counts.errors += 1;
                    ("error", true)
                }
                Outcome::Skipped => {
                    counts.skipped += 1;
                    ("skipped", false)
                }
            };
            cases.push_str(">\n");
            let _ = write!(cases, "      <{tag}");
            if with_type {
                let _ = write!(
                    cases,
                    r#" type="{}" message="{}""#,
                    c.class.name(),
                    attr(&message)
                );
            } else {
                let why = c
                    .detail
                    .as_deref()
                    .unwrap_or("not run: an earlier stage stopped the suite before this check");
                let _ = write!(cases, r#" message="{}""#, attr(why));
            }
            match c.detail.as_deref() {
                Some(d) if with_type && !d.is_empty() => {
                    let _ = writeln!(cases, ">{}</{tag}>", text_node(d));
                }
                _ => cases.push_str("/>\n"),
            }
            cases.push_str("    </testcase>\n");
        }
        total.add(counts);
        let _ = writeln!(
            suites,
            r#"  <testsuite name="{}" {}{}>"#,
            stage.name(),
            counts.attrs(),
            timestamp(&r.started)
        );
        suites.push_str("    <properties>\n");
        for (name, value) in properties(r) {
            let _ = writeln!(
                suites,
                r#"      <property name="{name}" value="{}"/>"#,
                attr(&value)
            );
        }
        suites.push_str("    </properties>\n");
        suites.push_str(&cases);
        suites.push_str("  </testsuite>\n");
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"ncclbench accept\" {}>\n{suites}</testsuites>\n",
        total.attrs()
    )
}

/// The run-wide facts every `<testsuite>` carries as properties.
fn properties(r: &AcceptReport) -> Vec<(&'static str, String)> {
    vec![
        ("profile", r.profile.name.clone()),
        ("profile_source", r.profile.source.clone()),
        ("nranks", r.nranks.to_string()),
        ("backend", r.backend.clone()),
        ("started", r.started.clone()),
        ("finished", r.finished.clone()),
        ("exit_status", r.verdict.exit_status.to_string()),
    ]
}

/// The seconds of the stage runs with the check's stage and collective (0 when none, and for
/// suite-wide checks).
fn run_seconds(r: &AcceptReport, c: &Check) -> f64 {
    let Some(collective) = c.collective.as_deref() else {
        return 0.0;
    };
    r.runs
        .iter()
        .filter(|run| run.stage == c.stage && run.collective == collective)
        .map(|run| run.seconds)
        .filter(|s| s.is_finite() && *s > 0.0)
        .sum()
}

/// Seconds as JUnit writes them: millisecond resolution, never negative or non-finite.
fn seconds(s: f64) -> String {
    let s = if s.is_finite() && s > 0.0 { s } else { 0.0 };
    format!("{s:.3}")
}

/// ` timestamp="2026-11-29T10:00:00"` when `started` has the report's local time form
/// (`%Y-%m-%d %H:%M:%S`), nothing otherwise.
fn timestamp(started: &str) -> String {
    match chrono::NaiveDateTime::parse_from_str(started, "%Y-%m-%d %H:%M:%S") {
        Ok(t) => format!(r#" timestamp="{}""#, t.format("%Y-%m-%dT%H:%M:%S")),
        Err(_) => String::new(),
    }
}

/// True for characters XML 1.0 allows (`Char` production of the XML 1.0 specification).
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        || c >= '\u{10000}'
}

/// Escape for an attribute value: the five markup characters as entities, tab, newline and
/// carriage return as character references (a parser would turn them into spaces), and the
/// characters XML 1.0 forbids dropped.
fn attr(s: &str) -> String {
    escape(s, true)
}

/// Escape for element text: as [`attr`], but tab and newline stay literal; carriage return
/// stays a reference (a parser would turn it into a newline).
fn text_node(s: &str) -> String {
    escape(s, false)
}

fn escape(s: &str, in_attr: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().filter(|&c| xml_char(c)) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            '\t' if in_attr => out.push_str("&#9;"),
            '\n' if in_attr => out.push_str("&#10;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
