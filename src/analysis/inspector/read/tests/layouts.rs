//! Files read in blocks and parallel pieces give the same records, notes and skipped entries
//! as one scan of their whole content, for every layout, cut and kind of garbage, plain or
//! gzip-compressed; a pipe reads as a file does.

use super::super::split::MAX_RECORD;
use super::super::stream;
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
fn a_file_read_in_blocks_and_pieces_reads_as_one_scan_of_it() {
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
        let whole = stream::one_scan(file.clone(), content.as_bytes());
        let read = stream::read_json(file.clone(), File::open(&path).unwrap());
        let zipped = stream::read_json(
            file,
            flate2::read::GzDecoder::new(std::io::Cursor::new(gz(content.as_bytes()))),
        );
        assert!(!whole.records.is_empty(), "content {i}");
        for (tally, how) in [(&read, "plain"), (&zipped, "gzip")] {
            assert_eq!(tally.records, whole.records, "content {i} {how}");
            assert_eq!(tally.skipped, whole.skipped, "content {i} {how}");
            assert_eq!(tally.notes, whole.notes, "content {i} {how}");
        }
        if i == 6 {
            let bad = (0..30_000).filter(|i| matches!(i % 7, 0 | 1 | 3)).count();
            assert_eq!(read.skipped.len(), bad, "content {i}");
        }
        if i == 7 {
            // One garbage entry, however the 9 MiB without a line starting `{` is cut.
            assert_eq!(read.records.len(), 2);
            assert_eq!(
                read.skipped,
                [(
                    ALL_REDUCE.len() as u64 + 1,
                    format!("an object still open after {MAX_RECORD} bytes")
                )]
            );
        }
    }
}

#[test]
fn a_pipe_reads_as_a_file_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pipe.log");
    let made = std::process::Command::new("mkfifo").arg(&path).status();
    assert!(made.unwrap().success());
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
