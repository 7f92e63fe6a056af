//! JSON records of each documented shape, every field of the record asserted.

use super::*;
use crate::analysis::inspector::record::{Op, Origin, Record, Size, SizeRule, Source, Timing};
use crate::core::collective::Collective;
use std::sync::Arc;

fn all_reduce(file: &Path) -> Record {
    Record {
        source: Arc::new(Source {
            file: Arc::new(file.to_path_buf()),
            origin: Origin::Json,
            comm_id: "0x7f8c496ae9f661".into(),
            comm_name: Some("DP Group 0".into()),
            rank: Some(2),
            nranks: 8,
            nnodes: Some(1),
            host: Some("example-hostname".into()),
            pid: Some(1639453),
            gpu: None,
            algo_proto: None,
            format_version: Some("v4.0".into()),
        }),
        op: Op::Collective(Collective::AllReduce),
        seq: Some(1407),
        size: Size::Exact(17179869184),
        size_rule: SizeRule::AsWritten,
        time_us: 61974.0,
        timing: Some(Timing::KernelGpu),
        busbw_gbs: Some(485.119099),
        timestamp_us: Some(1748030377748202),
    }
}

fn old_all_gather(file: &Path) -> Record {
    Record {
        source: Arc::new(Source {
            file: Arc::new(file.to_path_buf()),
            origin: Origin::Json,
            comm_id: "0xabc".into(),
            comm_name: None,
            rank: Some(0),
            nranks: 4,
            nnodes: Some(1),
            host: Some("h1".into()),
            pid: Some(7),
            gpu: None,
            algo_proto: None,
            format_version: Some("v4.0".into()),
        }),
        op: Op::Collective(Collective::AllGather),
        seq: Some(3),
        size: Size::Exact(4194304),
        size_rule: SizeRule::TimesRanks,
        time_us: 100.0,
        timing: None,
        busbw_gbs: Some(31.45728),
        timestamp_us: Some(1000),
    }
}

fn send(file: &Path) -> Record {
    Record {
        source: Arc::new(Source {
            file: Arc::new(file.to_path_buf()),
            origin: Origin::Json,
            comm_id: "0xdef".into(),
            comm_name: Some("PP".into()),
            rank: Some(4),
            nranks: 8,
            nnodes: Some(2),
            host: Some("h2".into()),
            pid: Some(9),
            gpu: None,
            algo_proto: None,
            format_version: Some("v4.0".into()),
        }),
        op: Op::Send { peer: Some(5) },
        seq: Some(11),
        size: Size::Exact(65536),
        size_rule: SizeRule::AsWritten,
        time_us: 8.0,
        timing: Some(Timing::KernelCpu),
        busbw_gbs: Some(8.192),
        timestamp_us: Some(2000),
    }
}

#[test]
fn records_with_and_without_newer_fields_and_p2p_read_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{ALL_REDUCE}\n{OLD_ALL_GATHER}\n{SEND}\n");
    let p = write(dir.path(), "r.log", text.as_bytes());
    let set = read_one(&p);
    assert_eq!(
        parts(&set.records),
        [all_reduce(&p), old_all_gather(&p), send(&p)]
    );
    // The sizes as written: an AllGather's is one rank's part.
    let raw: Vec<Size> = set.records.iter().map(Record::raw_size).collect();
    assert_eq!(
        raw,
        [
            Size::Exact(17179869184),
            Size::Exact(1048576),
            Size::Exact(65536)
        ]
    );
    assert_eq!(set.files, 1);
    assert!(set.notes.is_empty(), "{:?}", set.notes);
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
}

#[test]
fn concatenated_pretty_printed_and_gzip_forms_read_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let pretty = |s: &str| {
        let v: serde_json::Value = serde_json::from_str(s).unwrap();
        serde_json::to_string_pretty(&v).unwrap()
    };
    let forms = [
        format!("{ALL_REDUCE}{OLD_ALL_GATHER}{SEND}"),
        format!("{ALL_REDUCE}\r\n\n{OLD_ALL_GATHER} \t{SEND}\n\n"),
        format!(
            "{}\n{}{}\n",
            pretty(ALL_REDUCE),
            pretty(OLD_ALL_GATHER),
            pretty(SEND)
        ),
    ];
    for (i, text) in forms.iter().enumerate() {
        for (name, bytes) in [
            (format!("{i}.jsonl"), text.as_bytes().to_vec()),
            (format!("{i}.jsonl.gz"), gz(text.as_bytes())),
        ] {
            let p = write(dir.path(), &name, &bytes);
            let set = read_one(&p);
            assert_eq!(
                parts(&set.records),
                [all_reduce(&p), old_all_gather(&p), send(&p)],
                "{name}"
            );
            assert!(set.notes.is_empty() && set.skipped.is_empty(), "{name}");
        }
    }
}

#[test]
fn verbose_records_keep_the_trace_start_and_say_traces_were_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let trace = r#","event_trace_sn":{"coll_start_sn":1,"coll_stop_sn":2,"kernel_events":[{"channel_id":0,"kernel_start_sn":3,"kernel_stop_sn":48,"kernel_record_sn":47}]},"event_trace_ts":{"coll_start_ts":1752867229235059,"coll_stop_ts":1752867229235064,"kernel_events":[{"channel_id":0,"kernel_start_ts":1,"kernel_stop_ts":2,"kernel_record_ts":3}]}}}"#;
    let verbose = ALL_REDUCE.strip_suffix("}}").unwrap().to_string() + trace;
    let p2p_trace = trace.replace("coll_st", "p2p_st");
    let verbose_send = SEND.strip_suffix("}}").unwrap().to_string() + &p2p_trace;
    let p = write(
        dir.path(),
        "v.log",
        format!("{verbose}\n{verbose_send}\n").as_bytes(),
    );
    let set = read_one(&p);
    let mut want = all_reduce(&p);
    want.timestamp_us = Some(1752867229235059);
    let mut want_send = send(&p);
    want_send.timestamp_us = Some(1752867229235059);
    assert_eq!(parts(&set.records), [want, want_send]);
    assert_eq!(
        set.notes,
        [format!(
            "{}: 2 records carry verbose event traces (event_trace_sn/event_trace_ts): traces \
             ignored, their start time kept",
            p.display()
        )]
    );
}

#[test]
fn unusable_records_are_skipped_with_their_offset_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let no_size = ALL_REDUCE.replace(r#""coll_msg_size_bytes":17179869184,"#, "");
    let bad_type = OLD_ALL_GATHER.replace(r#""n_ranks":4"#, r#""n_ranks":"four""#);
    let no_header = SEND.replace(r#""header""#, r#""heading""#);
    let other = r#"{"header":{"id":"0x1","n_ranks":2},"kernel_perf":{}}"#;
    let future = SEND.replace("v4.0", "v5.0");
    let nan = SEND.replace(r#""p2p_busbw_gbs":8.192000"#, r#""p2p_busbw_gbs":"nan""#);
    // Twice: the second is read along the shape the first was read by.
    let no_ranks = OLD_ALL_GATHER.replace(r#""n_ranks":4"#, r#""n_ranks":0"#);
    let objects = [
        no_size.as_str(),
        &bad_type,
        &no_header,
        other,
        &future,
        &nan,
        "[1]",
        &no_ranks,
        &no_ranks,
    ];
    let text = objects.join("\n");
    let p = write(dir.path(), "bad.log", text.as_bytes());
    let set = read_one(&p);
    let at = |i: usize| objects[..i].iter().map(|s| s.len() as u64 + 1).sum::<u64>();
    let reasons: Vec<(u64, String)> = set
        .skipped
        .iter()
        .map(|(f, a, r)| {
            assert_eq!(f, &p);
            (*a, r.clone())
        })
        .collect();
    assert_eq!(reasons.len(), 6, "{reasons:?}");
    assert_eq!(
        reasons[0],
        (at(0), "missing coll_perf.coll_msg_size_bytes".into())
    );
    assert_eq!(reasons[1].0, at(1));
    assert!(
        reasons[1]
            .1
            .starts_with("invalid record: invalid type: string \"four\""),
        "{}",
        reasons[1].1
    );
    assert_eq!(reasons[2], (at(2), "no header".into()));
    assert_eq!(reasons[3].0, at(6));
    // The garbage is quoted up to the next record, not into it.
    assert_eq!(reasons[3].1, "not a JSON object: `[1]\\n`");
    for k in [7, 8] {
        assert_eq!(reasons[k - 3], (at(k), "header.n_ranks is 0".into()));
    }
    let mut future_send = send(&p);
    future_send.source = Arc::new(Source {
        format_version: Some("v5.0".into()),
        ..Source::clone(&future_send.source)
    });
    let mut nan_send = send(&p);
    nan_send.busbw_gbs = None;
    assert_eq!(parts(&set.records), [future_send, nan_send]);
    let name = p.display();
    assert_eq!(
        set.notes,
        [
            format!("{name}: 1 records of kind `kernel_perf` ignored"),
            format!(
                "{name}: 1 records of format version v5.0, which this reader does not know \
                 (JSON output format v4.x): read by the fields it knows"
            ),
        ]
    );
}
