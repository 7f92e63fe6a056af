//! Inputs that never end or hold one enormous token: every reader returns, in bounded memory,
//! with one line saying what it read and why it stopped. `/dev/zero` and `/dev/urandom` named
//! as result files or logs are refused up front (exit 2); the same bytes through a FIFO are
//! read until a bounded amount held no record; the alltoallv matrix file and CSV fields are
//! read with limits and quoted by a short prefix. Each run has a generous timeout, so a hang
//! fails the test instead of stalling the suite.

use crate::support::bin::{data, ncclbench, Run};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` to the end or kills it after `limit`; `None` for a hang.
fn run_within(cmd: &mut Command, limit: Duration) -> Option<Run> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ncclbench");
    let start = Instant::now();
    // Output is drained on threads so a chatty child cannot block on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut v);
        v
    });
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(Run {
                code: status.code(),
                out: String::from_utf8_lossy(&out.join().unwrap()).into_owned(),
                err: String::from_utf8_lossy(&err.join().unwrap()).into_owned(),
            });
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

const LIMIT: Duration = Duration::from_secs(300);

/// Each subcommand that reads result files or logs, with `input` as its input.
fn readers(dir: &Path, input: &Path) -> Vec<(String, Command)> {
    let csv = data("compare/before_all_reduce.csv");
    let prof = dir.join("baseline.toml");
    std::fs::write(
        &prof,
        format!(
            "[profile]\nname = \"b\"\ndescription = \"t\"\ntypical = false\nranks = 2\n\n\
             [suite]\ncollectives = [\"all_reduce\"]\ncorrectness_max_bytes = \"1K\"\n\
             perf_max_bytes = \"1K\"\niters = 1\nwarmup_iters = 1\ntimeout_s = 20\n\n\
             [baseline]\npaths = [\"{}\"]\n",
            input.display()
        ),
    )
    .unwrap();
    let mut all = Vec::new();
    let mut add = |name: &str, args: Vec<&std::ffi::OsStr>| {
        let mut c = ncclbench();
        c.args(args);
        all.push((name.to_string(), c));
    };
    let i = input.as_os_str();
    let o = |s: &'static str| std::ffi::OsStr::new(s);
    add("analyze", vec![o("analyze"), i]);
    add("logs", vec![o("logs"), i]);
    add("compare new", vec![o("compare"), csv.as_os_str(), i]);
    add("compare old", vec![o("compare"), i, csv.as_os_str()]);
    add("make-profile", vec![o("accept"), o("--make-profile"), i]);
    // Each call its own accept directory (results are never written into a used one).
    let out = dir.join(format!(
        "acc-{}",
        input.display().to_string().replace('/', "_")
    ));
    add(
        "baseline",
        vec![
            o("accept"),
            o("--profile"),
            prof.as_os_str(),
            o("--out"),
            out.as_os_str(),
            o("--backend"),
            o("host"),
            o("-g"),
            o("2"),
        ],
    );
    all
}

/// Named devices are refused before anything is read: exit 2, one line naming the file.
#[test]
fn character_devices_are_refused_as_inputs() {
    let dir = tempfile::tempdir().unwrap();
    for dev in ["/dev/zero", "/dev/urandom"] {
        for (name, mut cmd) in readers(dir.path(), Path::new(dev)) {
            let r = run_within(&mut cmd, LIMIT)
                .unwrap_or_else(|| panic!("{name} {dev}: still reading after {LIMIT:?}"));
            // accept reports its baseline's failure in its report (stdout), the others on stderr.
            let all = format!("{}{}", r.out, r.err);
            let line = all.lines().find(|l| l.contains(dev));
            assert!(
                line.is_some_and(|l| l.contains("a device, not a file")),
                "{name} {dev}: exit {:?}: {}",
                r.code,
                r.err
            );
            assert_ne!(r.code, Some(0), "{name} {dev}");
            assert!(!r.err.contains("panicked"), "{name} {dev}: {}", r.err);
        }
    }
}

/// Feeds `source` (a device) into a new FIFO from a thread, until the reader goes away.
fn fifo_from(dir: &Path, source: &'static str) -> PathBuf {
    let fifo = dir.join(format!("feed-{}", source.rsplit('/').next().unwrap()));
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let path = fifo.clone();
    std::thread::spawn(move || {
        // Each reader opens the FIFO once; feed each in turn until the test ends.
        while let Ok(mut w) = std::fs::OpenOptions::new().write(true).open(&path) {
            let mut src = std::fs::File::open(source).unwrap();
            let _ = std::io::copy(&mut src, &mut w);
        }
    });
    fifo
}

/// Endless bytes through a FIFO: every reader stops after a bounded amount with no record,
/// says how much it read, and exits 2.
#[test]
fn endless_input_through_a_fifo_stops_after_a_bounded_amount() {
    let dir = tempfile::tempdir().unwrap();
    for dev in ["/dev/zero", "/dev/urandom"] {
        let fifo = fifo_from(dir.path(), dev);
        for (name, mut cmd) in readers(dir.path(), &fifo) {
            if name == "baseline" {
                continue; // the profile names the FIFO once; covered by the others' reader
            }
            let r = run_within(&mut cmd, LIMIT)
                .unwrap_or_else(|| panic!("{name} {dev}: still reading after {LIMIT:?}"));
            assert_eq!(r.code, Some(2), "{name} {dev}: {}", r.err);
            assert!(
                r.err.contains("stopped after reading")
                    || r.err.contains("not a result file")
                    || r.err.contains("is not a FIFO"),
                "{name} {dev}: {}",
                r.err
            );
            assert!(r.err.len() < 2000, "{name} {dev}: {} bytes", r.err.len());
        }
    }
}

/// A matrix file that is `/dev/zero` is refused; a 16 MiB token is quoted by its prefix only.
#[test]
fn the_alltoallv_matrix_is_read_with_limits() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.txt");
    let mut f = std::fs::File::create(&big).unwrap();
    f.write_all(&vec![b'7'; 3 << 20]).unwrap();
    f.write_all(b"x 1\n1 1\n").unwrap();
    drop(f);
    for (file, says) in [
        (PathBuf::from("/dev/zero"), "a device, not a file"),
        (big.clone(), "(3145729 bytes)"),
    ] {
        let r = run_within(
            ncclbench()
                .args([
                    "alltoallv",
                    "--backend",
                    "host",
                    "-g",
                    "2",
                    "-b",
                    "1K",
                    "-e",
                    "1K",
                ])
                .env("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", &file),
            LIMIT,
        )
        .unwrap_or_else(|| panic!("{}: still reading after {LIMIT:?}", file.display()));
        assert_eq!(r.code, Some(2), "{}: {}", file.display(), r.err);
        assert_eq!(r.err.lines().count(), 1, "{}", r.err);
        assert!(r.err.contains(says), "{}", r.err);
        assert!(r.err.len() < 400, "{} bytes of message", r.err.len());
    }
}

/// A CSV whose collective field is 2 MiB: not taken as a collective name, not echoed.
#[test]
fn a_huge_csv_field_is_neither_a_name_nor_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(data("compare/before_all_reduce.csv")).unwrap();
    let mut lines = good.lines();
    let header = lines.next().unwrap();
    let col = header.split(',').position(|c| c == "collective").unwrap();
    let mut text = format!("{header}\n");
    for (i, line) in lines.enumerate() {
        let mut fields: Vec<String> = line.split(',').map(str::to_string).collect();
        if i == 0 {
            fields[col] = "Z".repeat(2 << 20);
        }
        text.push_str(&fields.join(","));
        text.push('\n');
    }
    let file = dir.path().join("huge.csv");
    std::fs::write(&file, &text).unwrap();
    let r = run_within(ncclbench().arg("analyze").arg(&file), LIMIT).expect("returns");
    assert!(
        r.out.len() + r.err.len() < 200_000,
        "{} bytes",
        r.out.len() + r.err.len()
    );
    assert!(!r.out.contains(&"Z".repeat(100)), "echoed");
    assert!(!r.err.contains(&"Z".repeat(100)), "echoed");
    // A field of 100 KiB is within the record limit: that row is skipped, with a short reason.
    let mut text = format!("{header}\n");
    for (i, line) in good.lines().skip(1).enumerate() {
        let mut fields: Vec<String> = line.split(',').map(str::to_string).collect();
        if i == 0 {
            fields[col] = "Q".repeat(100 << 10);
        }
        text.push_str(&fields.join(","));
        text.push('\n');
    }
    std::fs::write(&file, &text).unwrap();
    let r = run_within(ncclbench().arg("analyze").arg(&file), LIMIT).expect("returns");
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert!(!r.out.contains(&"Q".repeat(100)), "echoed");
    assert!(r.out.contains("is not a collective name"), "{}", r.out);
}
