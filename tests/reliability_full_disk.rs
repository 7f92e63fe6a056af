//! A full disk (issue 35), made per process with `RLIMIT_FSIZE` (bash's `ulimit -f`, in KiB;
//! SIGXFSZ ignored so a write past it fails with EFBIG as on a full file system): every file keeps
//! whole records only, the text table's footer says the run failed, and `accept` still prints
//! its verdict when its report files cannot be written.

use crate::support::bin::{run, Run, EXE};
use std::path::Path;
use std::process::Command;

/// `ncclbench ARGS` in `dir` with files limited to `kib` KiB (`None`: unlimited), in a small
/// environment so that the environment records' sizes do not depend on the caller's.
fn limited(dir: &Path, kib: Option<u64>, args: &[&str]) -> Run {
    let limit = kib.map_or("unlimited".to_string(), |k| k.to_string());
    let mut cmd = Command::new("bash");
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {limit}; exec \"$0\" \"$@\""
        ))
        .arg(EXE)
        .args(args);
    run(&mut cmd)
}

fn size(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

/// The limit, in KiB, just above the largest of `fit` (bytes): what must still be written.
fn kib_above(fit: &[u64]) -> u64 {
    fit.iter().max().unwrap() / 1024 + 1
}

const SWEEP: [&str; 15] = [
    "all_reduce",
    "--backend",
    "host",
    "-g",
    "2",
    "-b",
    "8",
    "-e",
    "1M",
    "-f",
    "2",
    "-n",
    "1",
    "-w",
    "0",
];

/// The text table's end after a failed run: no row glued to the footer, and a footer that
/// says the run failed instead of `0 OK ... concluded`.
fn footer_says_failed(out: &str) {
    for line in out.lines() {
        let data = line.starts_with(' ');
        assert!(
            !(data && line.contains('#')),
            "a row glued to the footer: {line:?}"
        );
    }
    assert!(!out.contains("Out of bounds values : 0 OK"), "{out}");
    assert!(!out.contains("test concluded"), "{out}");
    assert!(out.contains("# Collective test failed"), "{out}");
}

#[test]
fn a_full_disk_leaves_whole_csv_records_and_a_footer_that_says_failed() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = SWEEP.to_vec();
    args.extend(["-I", "1", "--csv", "x.csv"]);
    let free = limited(dir.path(), None, &args);
    assert_eq!(free.code, Some(0), "{}", free.err);
    // The CSV's sidecar fits, its rows do not.
    let kib = kib_above(&[size(&dir.path().join("x.csv.env.json"))]);
    assert!(size(&dir.path().join("x.csv")) > 2 * kib * 1024);
    let dir = tempfile::tempdir().unwrap();
    let r = limited(dir.path(), Some(kib), &args);
    assert_eq!(r.code, Some(1), "{}\n{}", r.out, r.err);
    assert!(r.err.contains("x.csv"), "{}", r.err);
    let csv = std::fs::read_to_string(dir.path().join("x.csv")).unwrap();
    assert!(
        csv.ends_with('\n'),
        "half a record at the end: {:?}",
        &csv[csv.len().saturating_sub(80)..]
    );
    let mut lines = csv.lines();
    let fields = lines.next().unwrap().split(',').count();
    let rows: Vec<_> = lines.collect();
    assert!(!rows.is_empty(), "{csv}");
    for l in rows {
        assert_eq!(l.split(',').count(), fields, "{l:?}");
    }
    footer_says_failed(&r.out);
}

#[test]
fn a_full_disk_leaves_a_json_document_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = SWEEP.to_vec();
    args.extend(["-J", "x.json"]);
    let free = limited(dir.path(), None, &args);
    assert_eq!(free.code, Some(0), "{}", free.err);
    let kib = size(&dir.path().join("x.json")) / 2048;
    let dir = tempfile::tempdir().unwrap();
    let r = limited(dir.path(), Some(kib), &args);
    assert_eq!(r.code, Some(1), "{}\n{}", r.out, r.err);
    let text = std::fs::read_to_string(dir.path().join("x.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).expect("a JSON document");
    assert_eq!(doc["ncclbench"]["complete"], false, "{text}");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    footer_says_failed(&r.out);
}

#[test]
fn accept_on_a_full_disk_prints_its_verdict_and_writes_each_report_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("p.toml");
    std::fs::write(
        &prof,
        "[profile]\nname = \"tiny\"\ndescription = \"test\"\ntypical = false\nranks = 2\n\n\
         [suite]\ncollectives = [\"all_reduce\"]\ncorrectness_max_bytes = \"64\"\n\
         correctness_step_factor = 8\nperf_max_bytes = \"4K\"\nperf_step_factor = 8\n\
         iters = 1\nwarmup_iters = 1\ntimeout_s = 20\n",
    )
    .unwrap();
    let args = |out| {
        [
            "accept",
            "--profile",
            "p.toml",
            "--out",
            out,
            "--backend",
            "host",
            "-g",
            "2",
        ]
    };
    let free = limited(dir.path(), None, &args("free"));
    assert_eq!(free.code, Some(0), "{}", free.err);
    // The environment, the profile and accept.txt fit; accept.json does not (nor the
    // correctness stage's CSV).
    let f = |name: &str| size(&dir.path().join("free").join(name));
    let kib = kib_above(&[f("environment.json"), f("accept.txt"), f("manifest.json")]);
    assert!(f("accept.json") > kib * 1024 && f("correctness/all_reduce.csv") > kib * 1024);
    let r = limited(dir.path(), Some(kib), &args("a"));
    assert_ne!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(
        r.out.contains("# accept: FAIL"),
        "the verdict on stdout: {}\n{}",
        r.out,
        r.err
    );
    assert!(r.err.contains("accept.json"), "{}", r.err);
    let out = dir.path().join("a");
    assert!(!out.join("accept.json").exists(), "no half accept.json");
    for e in std::fs::read_dir(&out).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "{name}");
    }
    if let Ok(txt) = std::fs::read_to_string(out.join("accept.txt")) {
        assert!(
            r.out.contains(&txt),
            "accept.txt is the whole table:\n{txt}"
        );
    }
}
