//! Dump directories (recursive, mixed with other files), the sniff, and bad input.

use super::*;
use crate::analysis::inspector::looks_like_inspector;

#[test]
fn a_dump_tree_reads_its_inspector_files_in_path_order_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "node1/rank0.log", format!("{ALL_REDUCE}\n").as_bytes());
    write(
        d,
        "node1/rank1.jsonl.gz",
        &gz(format!("{SEND}\n").as_bytes()),
    );
    write(d, "node0/deep/r.log.gz", &gz(OLD_ALL_GATHER.as_bytes()));
    write(
        d,
        "prom/gpu0.prom",
        b"nccl_p2p_exec_time_microseconds{version=\"v5.1\",nranks=\"2\",p2p_operation=\"Recv\",message_size=\"8-9KB\"} 3\n",
    );
    write(d, "node0/stdout.txt", b"training step 1\n");
    write(d, "node1/empty.log", b"");
    write(d, "results.json", b"{\"results\": []}");
    assert!(looks_like_inspector(d));
    assert!(looks_like_inspector(&d.join("node0")));
    assert!(looks_like_inspector(&d.join("node1/rank1.jsonl.gz")));
    assert!(looks_like_inspector(&d.join("prom/gpu0.prom")));
    assert!(!looks_like_inspector(&d.join("results.json")));
    assert!(!looks_like_inspector(&d.join("node1/empty.log")));
    assert!(!looks_like_inspector(&d.join("missing")));

    let set = read_paths(&[d.to_path_buf()]).unwrap();
    assert_eq!(set.files, 4);
    let files: Vec<String> = set
        .records
        .iter()
        .map(|r| r.source.file.strip_prefix(d).unwrap().display().to_string())
        .collect();
    assert_eq!(
        files,
        [
            "node0/deep/r.log.gz",
            "node1/rank0.log",
            "node1/rank1.jsonl.gz",
            "prom/gpu0.prom"
        ]
    );
    assert_eq!(
        set.notes,
        [format!(
            "{}: 3 files that are not Inspector output left out",
            d.display()
        )]
    );
}

#[test]
fn bad_input_is_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = write(d, "a.txt", b"# nccl-tests\n#  size  count\n");
    let garbage = write(d, "g.log.gz", &gz(&[0xff, 0x00, 0x13, 0x37]));
    let empty = write(d, "e.log", b"");
    let not_gz = write(d, "n.log.gz", &[0x1f, 0x8b, 1, 2, 3]);
    let missing = d.join("missing.log");
    let cases = [
        (&text, format!("{}: not NCCL Inspector output (neither JSON records starting with \"header\", \"coll_perf\" or \"p2p_perf\" nor a Prometheus textfile of nccl_ metrics)", text.display())),
        (&garbage, format!("{}: not NCCL Inspector output (neither JSON records starting with \"header\", \"coll_perf\" or \"p2p_perf\" nor a Prometheus textfile of nccl_ metrics, after gunzip)", garbage.display())),
        (&empty, format!("{}: empty file", empty.display())),
    ];
    for (path, want) in cases {
        let err = read_paths(std::slice::from_ref(path)).unwrap_err();
        assert_eq!(err.to_string(), want);
        assert_eq!(err.exit_code(), crate::core::error::exit::USAGE);
    }
    for path in [&not_gz, &missing] {
        let msg = read_err(std::slice::from_ref(path));
        assert!(
            msg.starts_with(&format!("{}: cannot read: ", path.display())),
            "{msg}"
        );
    }
    let none = tempfile::tempdir().unwrap();
    write(none.path(), "x/a.txt", b"hello");
    let msg = read_err(&[none.path().to_path_buf()]);
    assert_eq!(
        msg,
        format!(
            "{}: no NCCL Inspector files in this directory (JSON records or a Prometheus \
             textfile, plain or gzip)",
            none.path().display()
        )
    );
}

/// A gzip file whose second member is damaged (a crashed writer's last append): the records of
/// the first member are kept and the note says the data is corrupt and where reading stopped;
/// the same file in a dump directory is read, not left out as "not Inspector output".
#[test]
fn a_corrupt_gzip_member_keeps_what_came_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut bytes = gz(format!("{ALL_REDUCE}\n{ALL_REDUCE}\n").as_bytes());
    let mut second = gz(format!("{ALL_REDUCE}\n").repeat(50).as_bytes());
    let mid = second.len() / 2;
    second[mid..].iter_mut().for_each(|b| *b ^= 0x5a);
    bytes.extend(second);
    let file = write(d, "dump/rank3.jsonl.gz", &bytes);
    write(d, "dump/rank0.log", format!("{ALL_REDUCE}\n").as_bytes());
    for set in [read_one(&file), read_paths(&[d.join("dump")]).unwrap()] {
        assert!(set.records.len() >= 2, "{} records", set.records.len());
        assert!(
            set.notes.iter().any(|n| n.contains("rank3.jsonl.gz")
                && n.contains("read stopped at byte")
                && n.contains("corrupt")),
            "{:?}",
            set.notes
        );
        assert!(
            !set.notes.iter().any(|n| n.contains("not Inspector output")),
            "{:?}",
            set.notes
        );
    }
}

/// A rank file of a dump that cannot be read at all (here a gzip header that is not one) is
/// an error naming it, not a file silently left out.
#[test]
fn an_unreadable_rank_file_in_a_dump_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "rank0.log", format!("{ALL_REDUCE}\n").as_bytes());
    let bad = write(d, "rank1.log.gz", &[0x1f, 0x8b, 1, 2, 3]);
    let msg = read_err(&[d.to_path_buf()]);
    assert!(
        msg.starts_with(&format!(
            "{}: cannot read: corrupt gzip data",
            bad.display()
        )),
        "{msg}"
    );
}
