//! The output-file policy: numbered names instead of overwriting, streams as they are,
//! directories and shared files refused.

use super::{check_outputs, claim};
use std::path::Path;

#[test]
fn an_existing_file_is_kept_and_the_next_free_number_is_claimed() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r.csv");
    std::fs::write(&r, "first run\n").unwrap();
    std::fs::write(dir.path().join("r.csv.0"), "second run\n").unwrap();
    let c = claim(&r).unwrap();
    assert_eq!(c.path, dir.path().join("r.csv.1"));
    assert!(!c.stream);
    assert_eq!(std::fs::read_to_string(&r).unwrap(), "first run\n");
}

#[test]
fn a_device_is_a_stream_and_nothing_is_created_beside_it() {
    let c = claim(Path::new("/dev/null")).unwrap();
    assert!(c.stream);
    assert_eq!(c.path, Path::new("/dev/null"));
    assert!(!Path::new("/dev/null.0").exists());
}

#[test]
fn a_directory_is_refused_by_claim_and_by_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let e = claim(dir.path()).err().unwrap();
    assert!(e.to_string().contains("is a directory"), "{e}");
    let e = check_outputs(&[("--json", dir.path())], Some(Path::new("/dev/null"))).unwrap_err();
    assert!(
        e.starts_with("--json ") && e.contains("is a directory"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn two_outputs_naming_one_file_are_refused_existing_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("x");
    let same = dir.path().join(".").join("x");
    let table = dir.path().join("table.txt");
    let e = check_outputs(&[("--csv", &x), ("--json", &same)], Some(&table)).unwrap_err();
    assert!(e.contains("name the same file"), "{e}");
    std::fs::write(&x, "").unwrap();
    let e = check_outputs(&[("--csv", &x), ("--json", &same)], Some(&table)).unwrap_err();
    assert!(e.contains("name the same file"), "{e}");
    let y = dir.path().join("y");
    assert!(check_outputs(&[("--csv", &x), ("--json", &y)], Some(&table)).is_ok());
}

#[test]
fn an_output_on_the_table_file_is_refused_but_dev_null_may_take_all() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("table.txt");
    std::fs::write(&table, "").unwrap();
    let e = check_outputs(&[("--csv", &table)], Some(&table)).unwrap_err();
    assert!(e.contains("is the text table's file"), "{e}");
    let null = Path::new("/dev/null");
    assert!(check_outputs(&[("--csv", null), ("--json", null)], Some(null)).is_ok());
}
