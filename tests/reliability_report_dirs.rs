//! `analyze --out` and `compare --out` under the benchmark outputs' file rules (issue 35): a
//! report already in the directory is never overwritten (the new one goes to `DIR.0`, ...,
//! and the command says so), a directory that is a file is refused in one line, and a full
//! disk leaves no half-written file.

use crate::support::bin::{data, ncclbench, run, Run, EXE};
use std::collections::BTreeMap;
use std::path::Path;

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn analyze(out: &Path) -> Run {
    run(ncclbench()
        .arg("analyze")
        .arg(data("analysis/ncclbench_host_all_reduce.txt"))
        .arg("--out")
        .arg(out))
}

fn compare(out: &Path) -> Run {
    run(ncclbench()
        .arg("compare")
        .arg(data("compare/single_before.txt"))
        .arg(data("compare/single_after.txt"))
        .arg("--out")
        .arg(out))
}

fn never_overwrites(cmd: fn(&Path) -> Run) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("rep");
    let first = cmd(&dir);
    assert!(
        matches!(first.code, Some(0 | 1)),
        "{}\n{}",
        first.out,
        first.err
    );
    let before = files(&dir);
    std::fs::write(t.path().join("rep").join("my_notes.md"), "mine\n").unwrap();
    let second = cmd(&dir);
    assert_eq!(second.code, first.code, "{}\n{}", second.out, second.err);
    let numbered = t.path().join("rep.0");
    assert!(
        second.out.contains(&format!("to {}", numbered.display())),
        "names the directory it wrote: {}",
        second.out
    );
    let mut now = files(&dir);
    assert_eq!(now.remove("my_notes.md").as_deref(), Some(&b"mine\n"[..]));
    assert_eq!(now, before, "the first report is untouched");
    assert_eq!(files(&numbered).len(), before.len());
    // A path that is a file: one line, exit 2, the file kept.
    let f = t.path().join("file");
    std::fs::write(&f, "mine\n").unwrap();
    let r = cmd(&f);
    assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
    assert_eq!(r.err.trim_end().lines().count(), 1, "{}", r.err);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "mine\n");
}

#[test]
fn analyze_out_never_overwrites_a_report_already_there() {
    never_overwrites(analyze);
}

#[test]
fn compare_out_never_overwrites_a_report_already_there() {
    never_overwrites(compare);
}

#[test]
fn a_full_disk_leaves_no_half_written_report_file() {
    let t = tempfile::tempdir().unwrap();
    for (i, sub) in [vec!["analyze"], vec!["compare"]].into_iter().enumerate() {
        let dir = t.path().join(format!("rep{i}"));
        let mut args: Vec<String> = sub.iter().map(|s| s.to_string()).collect();
        if i == 0 {
            args.push(
                data("analysis/ncclbench_host_all_reduce.txt")
                    .display()
                    .to_string(),
            );
        } else {
            args.push(data("compare/single_before.txt").display().to_string());
            args.push(data("compare/single_after.txt").display().to_string());
        }
        args.extend(["--out".to_string(), dir.display().to_string()]);
        let r = run(std::process::Command::new("bash")
            .arg("-c")
            .arg("trap '' XFSZ; ulimit -f 2; exec \"$0\" \"$@\"")
            .arg(EXE)
            .args(&args));
        assert_ne!(r.code, Some(0), "a write failed: {}\n{}", r.out, r.err);
        assert!(r.err.contains("File too large"), "{}", r.err);
        for (name, bytes) in files(&dir) {
            assert!(!name.ends_with(".tmp"), "{name}");
            assert_ne!(bytes.len(), 2048, "{name} was cut at the limit");
        }
    }
}
