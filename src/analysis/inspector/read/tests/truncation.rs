//! Files cut mid-object (every complete record kept, the dropped bytes counted exactly), and
//! files large enough to span several blocks and pieces, whatever their layout.

use super::*;
use crate::analysis::inspector::record::Size;

#[test]
fn a_file_cut_anywhere_keeps_every_complete_record() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{ALL_REDUCE}\n{OLD_ALL_GATHER}\n{SEND}\n");
    let second = ALL_REDUCE.len() + 1;
    let third = second + OLD_ALL_GATHER.len() + 1;
    // Cut points: inside the first object, inside a string, after a backslash-free key,
    // just after the second record's brace, after its newline, one byte into the third.
    let in_string = second + OLD_ALL_GATHER.find("h1").unwrap();
    let cuts = [
        10,
        in_string,
        third - 2,
        third - 1,
        third,
        third + 1,
        text.len() - 1,
    ];
    for cut in cuts {
        let spans = [
            (0, ALL_REDUCE.len()),
            (second, OLD_ALL_GATHER.len()),
            (third, SEND.len()),
        ];
        let kept = spans.iter().filter(|(s, l)| s + l <= cut).count();
        let open = spans
            .iter()
            .find(|(s, l)| *s < cut && s + l > cut)
            .map(|(s, _)| *s);
        for gzip in [false, true] {
            let body = &text.as_bytes()[..cut];
            let (name, bytes) = if gzip {
                (format!("cut{cut}.log.gz"), gz(body))
            } else {
                (format!("cut{cut}.log"), body.to_vec())
            };
            let p = write(dir.path(), &name, &bytes);
            let set = read_one(&p);
            assert_eq!(set.records.len(), kept, "cut at {cut}");
            assert!(set.skipped.is_empty(), "cut at {cut}: {:?}", set.skipped);
            let want: Vec<String> = open
                .map(|s| {
                    format!(
                        "{}: cut mid-record at byte {s}: {} bytes dropped",
                        p.display(),
                        cut - s
                    )
                })
                .into_iter()
                .collect();
            assert_eq!(set.notes, want, "cut at {cut}");
        }
    }
}

#[test]
fn a_cut_gzip_stream_keeps_the_records_before_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..2000).map(|_| format!("{ALL_REDUCE}\n")).collect();
    let full = gz(text.as_bytes());
    let p = write(dir.path(), "cut.log.gz", &full[..full.len() / 2]);
    let set = read_one(&p);
    assert!(!set.records.is_empty() && set.records.len() < 2000);
    assert!(set
        .records
        .iter()
        .all(|r| r.raw_size() == Size::Exact(17179869184)));
    assert!(
        set.notes.iter().any(|n| n.contains("read stopped at byte")),
        "{:?}",
        set.notes
    );
}

/// `n` records whose sequence numbers count up, one layout per `style`.
fn many(n: u64, style: u8) -> String {
    let mut out = String::new();
    for i in 0..n {
        let r = ALL_REDUCE.replace(r#""coll_sn":1407"#, &format!(r#""coll_sn":{i}"#));
        match style {
            // The plugin's layout.
            0 => out.push_str(&format!("{r}\n")),
            // Inner objects each starting a line: every piece cut falls inside an object.
            _ => out.push_str(&format!("{}\n", r.replace(":{", ":\n{"))),
        }
    }
    out
}

#[test]
fn files_spanning_many_blocks_and_pieces_read_in_order_in_any_layout() {
    let dir = tempfile::tempdir().unwrap();
    let n = 40_000;
    // Plain files are mapped, gzip files streamed: both are read in blocks.
    for (style, gzip) in [(0, false), (1, false), (0, true), (1, true)] {
        let text = many(n, style);
        assert!(text.len() > 9 << 20, "more than one block");
        let pack = |name: String, bytes: &[u8]| {
            if gzip {
                write(dir.path(), &format!("{name}.gz"), &gz(bytes))
            } else {
                write(dir.path(), &name, bytes)
            }
        };
        let p = pack(format!("big{style}.log"), text.as_bytes());
        let set = read_one(&p);
        let seqs: Vec<u64> = set.records.iter().map(|r| r.seq.unwrap()).collect();
        assert_eq!(seqs, (0..n).collect::<Vec<_>>(), "style {style}");
        assert!(
            set.notes.is_empty() && set.skipped.is_empty(),
            "style {style}"
        );
        // Cut mid-record: the offset is the last record's start in the whole file.
        let last = text[..text.len() - 1].rfind("\n{\"header\"").unwrap() + 1;
        let p = pack(format!("bigcut{style}.log"), &text.as_bytes()[..last + 30]);
        let set = read_one(&p);
        assert_eq!(set.records.len() as u64, n - 1, "style {style}");
        assert_eq!(
            set.notes,
            [format!(
                "{}: cut mid-record at byte {last}: 30 bytes dropped",
                p.display()
            )]
        );
    }
}

#[test]
fn a_broken_record_inside_a_file_costs_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    for n in [800, 40_000] {
        let text = many(n, 0);
        let mid = n as usize / 2;
        let start = text.match_indices('\n').nth(mid - 1).unwrap().0 + 1;
        let end = start + text[start..].find('\n').unwrap() + 1;
        let record = &text[start..end];
        // What a process that crashed mid-record and was restarted leaves (the next record
        // on the same line or the next), a record with bytes garbled, one with a stray quote.
        let broken = [
            record[..200].to_string(),
            format!("{}\n", &record[..200]),
            record.replace(r#""coll_sn""#, "\0\0\0\0\0\0\0\0\0"),
            record.replace(r#""rank":2"#, r#""rank":"2"#),
        ];
        for (k, bad) in broken.iter().enumerate() {
            let body = format!("{}{bad}{}", &text[..start], &text[end..]);
            for gzip in [false, true] {
                let name = format!("broken{n}-{k}-{gzip}.log");
                let p = if gzip {
                    write(dir.path(), &format!("{name}.gz"), &gz(body.as_bytes()))
                } else {
                    write(dir.path(), &name, body.as_bytes())
                };
                let set = read_one(&p);
                let seqs: Vec<u64> = set.records.iter().map(|r| r.seq.unwrap()).collect();
                let want: Vec<u64> = (0..n).filter(|&i| i != mid as u64).collect();
                assert_eq!(seqs, want, "{name}");
                assert_eq!(set.skipped.len(), 1, "{name}: {:?}", set.skipped);
                assert_eq!(set.skipped[0].1, start as u64, "{name}");
                assert!(set.notes.is_empty(), "{name}: {:?}", set.notes);
            }
        }
    }
}
