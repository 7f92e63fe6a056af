//! The guard: a mapped file that shrinks reads as zeros past its new end and says so; slots are
//! given back.

use super::*;
use std::io::Write;

#[test]
fn a_file_that_shrinks_while_mapped_reads_as_zeros_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrinks.log");
    let page = PAGE.load(Ordering::Acquire).max(4096);
    let mut f = File::create(&path).unwrap();
    f.write_all(&vec![b'x'; page * 5 + 100]).unwrap();
    drop(f);
    let file = File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let map = Mapped::new(&file, len).expect("a regular file maps");
    assert_eq!(map.bytes()[page * 5 + 99], b'x');
    assert!(!map.shrank());
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(page as u64 + 10)
        .unwrap();
    let bytes = map.bytes();
    let xs = bytes.iter().filter(|&&b| b == b'x').count();
    assert!(map.shrank());
    // The pages the file still covers read as before; those it no longer covers are zeros
    // (what lies past the new end in its last page is zeros too, as the kernel fills it).
    assert_eq!(xs, page + 10);
    assert!(bytes[2 * page..].iter().all(|&b| b == 0));

    // Another mapping of the same file, made after it shrank, is not marked.
    let again = Mapped::new(&file, page as u64 + 10).unwrap();
    assert!(!again.shrank() && again.bytes().iter().all(|&b| b == b'x'));
}

#[test]
fn an_empty_file_is_not_mapped_and_slots_are_given_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, b"{}").unwrap();
    let file = File::open(&path).unwrap();
    assert!(Mapped::new(&file, 0).is_none());
    // More mappings in turn than there are slots: each gives its slot back when dropped.
    for _ in 0..SLOTS * 2 {
        assert_eq!(Mapped::new(&file, 2).unwrap().bytes(), b"{}");
    }
}
