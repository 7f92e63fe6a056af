//! Tests of the three accept renderings on hand-built reports: the shared report builders
//! here, the tests by rendering in the files beside.

mod machine;
mod table;

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
