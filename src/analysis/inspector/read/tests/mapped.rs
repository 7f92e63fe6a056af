//! Plain files read through a mapping: the same records, notes and skipped entries as the
//! stream gives for every layout, cut and kind of garbage; a file that shrinks while it is
//! mapped is read again as it now is; a pipe, which cannot be mapped, is streamed.

use super::super::mapped::Mapped;
use super::super::split::MAX_RECORD;
use super::super::{read_mapped_json, stream};
use super::*;
use std::fs::File;
use std::sync::Arc;

/// `n` records whose sequence numbers count up, one a line.
fn lines(n: u64) -> String {
    (0..n)
        .map(|i| {
            let r = ALL_REDUCE.replace(r#""coll_sn":1407"#, &format!(r#""coll_sn":{i}"#));
            format!("{r}\n")
        })
        .collect()
}

#[test]
fn a_mapped_file_reads_as_the_stream_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let big = lines(40_000);
    let nested = big.replace(":{", ":\n{");
    let mut garbage = String::new();
    for i in 0..30_000 {
        garbage.push_str(match i % 7 {
            0 => "not json at all\n",
            1 => "{\"header\": {\"rank\": ]}}\n",
            2 => OLD_ALL_GATHER,
            3 => "\n{\"coll_perf\": {\"coll\": \"AllReduce\"}}\n",
            4 => SEND,
            _ => ALL_REDUCE,
        });
        garbage.push('\n');
    }
    let contents = [
        ALL_REDUCE.to_string(),
        format!("{ALL_REDUCE}\n{SEND}\n{}", &OLD_ALL_GATHER[..100]),
        big.clone(),
        big[..big.len() - 300].to_string(),
        nested.clone(),
        nested[..(9 << 20) + 17].to_string(),
        garbage,
        // An object still open for more than a block: a stray quote.
        format!(
            "{ALL_REDUCE}\n{{\"header\": \"{}\n{ALL_REDUCE}\n",
            "x".repeat(9 << 20)
        ),
    ];
    for (i, content) in contents.iter().enumerate() {
        let path = write(dir.path(), &format!("f{i}.log"), content.as_bytes());
        let file = Arc::new(path.clone());
        let streamed =
            stream::read_json(file.clone(), Box::new(File::open(&path).unwrap()), arena());
        let handle = File::open(&path).unwrap();
        let map = Mapped::new(&handle, content.len() as u64).expect("a regular file maps");
        let mapped = stream::read_mapped(file, &map, arena()).expect("not shrunk");
        assert!(!streamed.records.is_empty(), "content {i}");
        assert_eq!(
            parts(&mapped.records),
            parts(&streamed.records),
            "content {i}"
        );
        assert_eq!(mapped.skipped, streamed.skipped, "content {i}");
        assert_eq!(mapped.notes, streamed.notes, "content {i}");
        if i == 6 {
            let bad = (0..30_000).filter(|i| matches!(i % 7, 0 | 1 | 3)).count();
            assert_eq!(mapped.skipped.len(), bad, "content {i}");
        }
        if i == 7 {
            // One garbage entry, however the 9 MiB without a line starting `{` is cut.
            assert_eq!(mapped.records.len(), 2);
            assert_eq!(
                mapped.skipped,
                [(
                    ALL_REDUCE.len() as u64 + 1,
                    format!("an object still open after {MAX_RECORD} bytes")
                )]
            );
        }
    }
}

#[test]
fn a_file_that_shrinks_while_mapped_is_read_again_as_it_now_is() {
    let dir = tempfile::tempdir().unwrap();
    let text = lines(40_000);
    let path = write(dir.path(), "rotated.log", text.as_bytes());
    let handle = File::open(&path).unwrap();
    let map = Mapped::new(&handle, text.len() as u64).unwrap();
    let kept = lines(100);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(kept.len() as u64)
        .unwrap();
    let tally = read_mapped_json(&path, Arc::new(path.clone()), map, arena()).unwrap();
    let seqs: Vec<u64> = tally.records.iter().map(|r| r.seq().unwrap()).collect();
    assert_eq!(seqs, (0..100).collect::<Vec<_>>());
    assert!(tally.skipped.is_empty(), "{:?}", &tally.skipped[..3]);
    assert_eq!(
        tally.notes,
        [format!(
            "{}: the file shrank while it was read; read again from the start",
            path.display()
        )]
    );
}

#[test]
fn a_pipe_is_streamed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pipe.log");
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid path string and mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let text = lines(3000);
    let writer = {
        let (path, text) = (path.clone(), text.clone());
        std::thread::spawn(move || std::fs::write(path, text).unwrap())
    };
    let set = read_one(&path);
    writer.join().unwrap();
    assert_eq!(set.records.len(), 3000);
    assert!(set.notes.is_empty() && set.skipped.is_empty());
}
