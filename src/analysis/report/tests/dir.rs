//! `write_dir`: every file written, named by slug, and readable.

use crate::analysis::plot;
use crate::analysis::report::write_dir;
use crate::analysis::{testdata, units};
use std::path::PathBuf;

#[test]
fn writes_reports_charts_and_index() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("new/sub");
    let a = testdata::analysis();
    let written = write_dir(&a, &out).expect("written");
    let names: Vec<String> = written
        .iter()
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(names.len(), 4 * a.curves.len() + 4);
    for c in &a.curves {
        let slug = units::slug(c);
        for ext in ["busbw.svg", "busbw.png", "time.svg", "time.png"] {
            assert!(names.contains(&format!("{slug}.{ext}")), "{slug}.{ext}");
        }
    }
    for name in ["report.md", "report.html", "analysis.json", "index.md"] {
        assert!(names.contains(&name.to_string()), "{name}");
    }
    for path in &written {
        assert_eq!(path.parent(), Some(out.as_path()));
        let bytes = std::fs::read(path).expect("readable");
        assert!(!bytes.is_empty(), "{}", path.display());
        if path.extension().is_some_and(|e| e == "png") {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", path.display());
        }
    }
    let index = std::fs::read_to_string(out.join("index.md")).expect("index");
    assert!(index.contains("[report.html](report.html)"));
    assert!(index.contains("| all_reduce float sum, 8 ranks, out_of_place |"));
    assert!(index.contains("[PNG](reduce_scatter-bfloat16-sum-n4-out_of_place.time.png)"));
    let md = std::fs::read_to_string(out.join("report.md")).expect("md");
    assert!(md.contains("(all_gather-float-none-n8-in_place.busbw.png)"));
    // PNGs are rendered in parallel; each lands under its own curve's name.
    let c = &a.curves[3];
    let want = plot::svg_to_png(&plot::time_svg(c)).expect("rendered");
    let got = std::fs::read(out.join(format!("{}.time.png", units::slug(c)))).expect("png");
    assert_eq!(got, want);
}

#[test]
fn empty_analysis_still_writes_the_reports() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut a = testdata::analysis();
    a.curves.clear();
    let written = write_dir(&a, tmp.path()).expect("written");
    assert_eq!(written.len(), 4);
}

#[test]
fn slugs_are_filesystem_safe_and_unique() {
    let mut a = testdata::analysis();
    a.curves.truncate(2);
    a.curves[0].collective = "../../etc/passwd".into();
    a.curves[0].op = "".into();
    a.curves[1] = a.curves[0].clone();
    assert_eq!(
        units::slug(&a.curves[0]),
        "______etc_passwd-float-n8-in_place"
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let written: Vec<PathBuf> = write_dir(&a, tmp.path()).expect("written");
    assert!(written.iter().all(|p| p.parent() == Some(tmp.path())));
    assert!(written
        .iter()
        .any(|p| p.ends_with("______etc_passwd-float-n8-in_place-2.time.svg")));
}

#[test]
fn unwritable_directory_is_an_io_error_naming_the_path() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("plain-file");
    std::fs::write(&file, b"x").expect("file");
    let err = write_dir(&testdata::analysis(), &file.join("sub")).expect_err("not a directory");
    assert!(err.to_string().contains("plain-file"), "{err}");
}
