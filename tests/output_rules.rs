//! The rules every result file of a benchmark run follows, through the binary: two outputs on
//! one file, a directory, the table's own stream and special files are refused or handled
//! alike for `--csv` and `--json`; an existing file is never overwritten (numbered names for
//! both, named in the header); a full disk leaves a parseable JSON with every row written
//! before it, a message naming the file, `complete: false` and no temporary file behind.

use crate::support::bin::{self, ncclbench, run, Run};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A quick host run of `extra` in `dir`.
fn bench(dir: &Path, extra: &[&str]) -> Command {
    let mut cmd = bin::command("all_reduce --backend host -g 2 -b 8 -e 64 -w 0 -n 1");
    cmd.current_dir(dir).args(extra);
    cmd
}

/// The files in `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Exit 2 with one `ncclbench:` line holding `what`, and nothing written.
fn refused(r: &Run, what: &str, dir: &Path, before: &[String]) {
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    assert!(
        r.err.starts_with("ncclbench: ") && r.err.contains(what),
        "{}",
        r.err
    );
    assert_eq!(files(dir), before, "files left behind");
}

#[test]
fn csv_and_json_on_one_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(bench(dir.path(), &["--csv", "x", "-J", "x"]).stdout(Stdio::null()));
    refused(&r, "name the same file", dir.path(), &[]);
    let r = run(bench(dir.path(), &["--csv", "x", "-J", "./x"]).stdout(Stdio::null()));
    refused(&r, "name the same file", dir.path(), &[]);
}

#[test]
fn an_output_on_the_redirected_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("r.csv");
    let stdout = std::fs::File::create(&table).unwrap();
    let r = run(bench(dir.path(), &["--csv", "r.csv"]).stdout(stdout));
    refused(&r, "is standard output", dir.path(), &["r.csv".into()]);
    // A pipe too, reached through /dev/stdout.
    let r = run(&mut bench(dir.path(), &["--csv", "/dev/stdout"]));
    refused(
        &r,
        "--csv /dev/stdout is standard output",
        dir.path(),
        &["r.csv".into()],
    );
    let r = run(&mut bench(dir.path(), &["-J", "/dev/stdout"]));
    refused(
        &r,
        "--json /dev/stdout is standard output",
        dir.path(),
        &["r.csv".into()],
    );
}

#[test]
fn a_directory_fails_alike_for_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    for flag in ["-J", "--csv"] {
        let r = run(bench(dir.path(), &[flag, "d"]).stdout(Stdio::null()));
        refused(&r, "d: is a directory", dir.path(), &["d".into()]);
        assert!(files(&dir.path().join("d")).is_empty());
    }
}

#[test]
fn special_files_are_streams_with_no_file_created_beside_them() {
    let dir = tempfile::tempdir().unwrap();
    let r =
        run(bench(dir.path(), &["--csv", "/dev/null", "-J", "/dev/null"]).stdout(Stdio::null()));
    assert_eq!(r.code, Some(0), "{}", r.err);
    for leftover in [
        "/dev/null.0",
        "/dev/null.env.json",
        "/dev/null.env.json.tmp",
    ] {
        assert!(!Path::new(leftover).exists(), "{leftover} created");
    }
    // A stream gets the whole document, complete, front to back.
    let r = run(bench(dir.path(), &["-J", "/dev/stderr"]).stdout(Stdio::null()));
    assert_eq!(r.code, Some(0), "{}", r.err);
    let v: Value = serde_json::from_str(&r.err).unwrap_or_else(|e| panic!("{e}: {}", r.err));
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
    assert_eq!(v["ncclbench"]["complete"], Value::Bool(true));
    // /dev/full is a stream too: its error names it, and nothing is made in /dev.
    let r = run(bench(dir.path(), &["-J", "/dev/full"]).stdout(Stdio::null()));
    assert_eq!(r.code, Some(1), "{}", r.err);
    assert!(r.err.contains("/dev/full: No space left"), "{}", r.err);
    assert!(!Path::new("/dev/full.0").exists());
    assert!(files(dir.path()).is_empty());
}

#[test]
fn a_second_run_never_overwrites_the_first_csv_or_json() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--csv", "r.csv", "-J", "r.json"];
    let first = run(&mut bench(dir.path(), &args));
    assert_eq!(first.code, Some(0), "{}", first.err);
    let csv = std::fs::read(dir.path().join("r.csv")).unwrap();
    let second = run(&mut bench(dir.path(), &args));
    assert_eq!(second.code, Some(0), "{}", second.err);
    assert_eq!(std::fs::read(dir.path().join("r.csv")).unwrap(), csv);
    assert!(
        second.out.contains("# Writing CSV output to r.csv.0\n"),
        "{}",
        second.out
    );
    assert!(
        second.out.contains("# Writing JSON output to r.json.0\n"),
        "{}",
        second.out
    );
    assert_eq!(
        files(dir.path()),
        [
            "r.csv",
            "r.csv.0",
            "r.csv.0.env.json",
            "r.csv.env.json",
            "r.json",
            "r.json.0"
        ]
    );
}

/// A tmpfs of `kib` KiB mounted on a new directory (in the kept temporary directory),
/// unmounted when dropped.
struct Tmpfs {
    mnt: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(kib: u32) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(&mnt)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Tmpfs { mnt, _dir: dir })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
    }
}

#[test]
fn a_full_disk_keeps_every_written_row_parseable_and_says_which_file() {
    let Some(fs) = Tmpfs::mount(64) else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let json = fs.mnt.join("soak.json");
    let csv = fs.mnt.join("soak.csv");
    // A soak (-N 0) runs until the disk is full.
    let r = run(ncclbench()
        .args([
            "all_reduce",
            "--backend",
            "host",
            "-g",
            "1",
            "-b",
            "8",
            "-e",
            "8",
        ])
        .args(["-w", "0", "-n", "1", "-c", "0", "-N", "0", "-J"])
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .stdout(Stdio::null()));
    assert_eq!(r.code, Some(1), "{}", r.err);
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    assert!(r.err.contains("No space left on device"), "{}", r.err);
    assert!(
        r.err.contains(&fs.mnt.display().to_string()),
        "names no file: {}",
        r.err
    );
    let text = std::fs::read_to_string(&json).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("unparseable: {e}"));
    let rows = v["results"].as_array().unwrap().len();
    assert!(rows > 10, "{rows} rows");
    assert_eq!(v["ncclbench"]["complete"], Value::Bool(false));
    let left = files(&fs.mnt);
    assert!(!left.iter().any(|f| f.ends_with(".tmp")), "{left:?}");
}
