//! Prometheus snapshots: label sets joined into records, escapes, buckets, bad lines.

use super::*;
use crate::analysis::inspector::read::prometheus::{bucket, sample};
use crate::analysis::inspector::record::{Op, Origin, Record, Size, SizeRule, Source};
use crate::core::collective::Collective;
use std::sync::Arc;

const SNAPSHOT: &str = r#"# HELP nccl_bus_bandwidth_gbs NCCL bus bandwidth
# TYPE nccl_bus_bandwidth_gbs gauge
nccl_bus_bandwidth_gbs{version="v5.1",slurm_job_id="unknown",node="nvl72004-T01",gpu="GPU0",comm_name="DP Group 0",n_nodes="1",nranks="4",collective="AllReduce",message_size="4-5GB",algo_proto="Ring_ll"} 678.263
nccl_collective_exec_time_microseconds{version="v5.1",slurm_job_id="unknown",node="nvl72004-T01",gpu="GPU0",comm_name="DP Group 0",n_nodes="1",nranks="4",collective="AllReduce",message_size="4-5GB",algo_proto="Ring_ll"} 9498.47
nccl_bus_bandwidth_gbs{version="v5.1",slurm_job_id="77",node="n1",gpu="GPU1",comm_name="say \"hi\"\\n\n",n_nodes="2",nranks="8",collective="AllGather",message_size="8-9KB",algo_proto="Tree_simple"} 12.5 1700000000000
nccl_collective_exec_time_microseconds{version="v5.1",slurm_job_id="77",node="n1",gpu="GPU1",comm_name="say \"hi\"\\n\n",n_nodes="2",nranks="8",collective="AllGather",message_size="8-9KB",algo_proto="Tree_simple"} 40
nccl_p2p_bus_bandwidth_gbs{version="v5.1",slurm_job_id="unknown",node="nvl72004-T01",gpu="GPU0",comm_name="DP Group 0",n_nodes="1",nranks="4",p2p_operation="Send",message_size="512-513MB"} 464.9
nccl_p2p_exec_time_microseconds{version="v5.1",slurm_job_id="unknown",node="nvl72004-T01",gpu="GPU0",comm_name="DP Group 0",n_nodes="1",nranks="4",p2p_operation="Send",message_size="512-513MB"} 1154.87
node_load1 0.25
"#;

fn base(file: &Path) -> Record {
    Record {
        source: Arc::new(Source {
            file: Arc::new(file.to_path_buf()),
            origin: Origin::Prometheus,
            comm_id: "".into(),
            comm_name: Some("DP Group 0".into()),
            rank: None,
            nranks: 4,
            nnodes: Some(1),
            host: Some("nvl72004-T01".into()),
            pid: None,
            gpu: Some("GPU0".into()),
            algo_proto: Some("Ring_ll".into()),
            format_version: Some("v5.1".into()),
        }),
        op: Op::Collective(Collective::AllReduce),
        seq: None,
        size: Size::Bucket {
            lo: 4 << 30,
            hi: 5 << 30,
        },
        size_rule: SizeRule::AsWritten,
        time_us: 9498.47,
        timing: None,
        busbw_gbs: Some(678.263),
        timestamp_us: None,
    }
}

#[test]
fn each_label_set_is_one_record_with_both_samples() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "nccl_inspector_metrics_GPU-1.prom",
        SNAPSHOT.as_bytes(),
    );
    let set = read_one(&p);
    let all_reduce = base(&p);
    let all_gather = Record {
        source: Arc::new(Source {
            comm_name: Some("say \"hi\"\\n\n".into()),
            nranks: 8,
            nnodes: Some(2),
            host: Some("n1".into()),
            gpu: Some("GPU1".into()),
            algo_proto: Some("Tree_simple".into()),
            ..Source::clone(&base(&p).source)
        }),
        op: Op::Collective(Collective::AllGather),
        size: Size::Bucket {
            lo: 64 << 10,
            hi: 72 << 10,
        },
        size_rule: SizeRule::TimesRanks,
        time_us: 40.0,
        busbw_gbs: Some(12.5),
        timestamp_us: Some(1_700_000_000_000_000),
        ..base(&p)
    };
    let send = Record {
        source: Arc::new(Source {
            algo_proto: None,
            ..Source::clone(&base(&p).source)
        }),
        op: Op::Send { peer: None },
        size: Size::Bucket {
            lo: 512 << 20,
            hi: 513 << 20,
        },
        time_us: 1154.87,
        busbw_gbs: Some(464.9),
        ..base(&p)
    };
    assert_eq!(parts(&set.records), [all_reduce, all_gather, send]);
    let bucket = |lo: u64, hi: u64| Size::Bucket { lo, hi };
    let raw: Vec<Size> = set.records.iter().map(Record::raw_size).collect();
    assert_eq!(
        raw,
        [
            bucket(4 << 30, 5 << 30),
            bucket(8 << 10, 9 << 10),
            bucket(512 << 20, 513 << 20)
        ]
    );
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
    assert_eq!(
        set.notes,
        [format!(
            "{}: 1 samples of metric `node_load1` ignored",
            p.display()
        )]
    );
    // The same snapshot gzip-compressed.
    let g = write(dir.path(), "m.prom.gz", &gz(SNAPSHOT.as_bytes()));
    assert_eq!(read_one(&g).records.len(), 3);
}

#[test]
fn bad_samples_and_label_sets_are_skipped_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = "nccl_bus_bandwidth_gbs{nranks=\"2\",collective=\"AllReduce\",message_size=\"4-5XB\"} 1\n\
        nccl_collective_exec_time_microseconds{nranks=\"2\",collective=\"AllReduce\",message_size=\"4-5XB\"} 2\n\
        nccl_bus_bandwidth_gbs{nranks=\"2\",collective=\"Broadcast\",message_size=\"1-2MB\"} 3\n\
        nccl_bus_bandwidth_gbs{nranks=\"two\",collective=\"Reduce\",message_size=\"1-2MB\"} 3\n\
        nccl_collective_exec_time_microseconds{nranks=\"two\",collective=\"Reduce\",message_size=\"1-2MB\"} 3\n\
        nccl_collective_exec_time_microseconds{nranks=\"2\",message_size=\"1-2MB\"} 3\n\
        nccl_collective_exec_time_microseconds{nranks=\"2\",collective=\"AllReduce\",message_size=\"0B\",version=\"v9.0\"} 5\n\
        nccl_collective_exec_time_microseconds{nranks=\"2\",collective=\"AllReduce\",message_size=\"0B\",version=\"v9.0\"} 6\n\
        nccl_collective_exec_time_microseconds{nranks=\"2\" 1\n\
        nccl_collective_exec_time_microseconds{nranks=\"2\"} abc\n\
        nccl_collective_exec_time_microseconds{nranks=\"0\",collective=\"AllReduce\",message_size=\"0B\"} 5\n";
    let p = write(dir.path(), "bad.prom", text.as_bytes());
    let set = read_one(&p);
    let skipped: Vec<(u64, String)> = set
        .skipped
        .iter()
        .map(|(_, l, r)| (*l, r.clone()))
        .collect();
    assert_eq!(
        skipped,
        [
            (
                8,
                "a second `nccl_collective_exec_time_microseconds` sample for the same labels"
                    .to_string()
            ),
            (9, "bad label near `1`".to_string()),
            (10, "value `abc` is not a number".to_string()),
            (
                1,
                "message_size `4-5XB` is not a bucket like 512-513MB".to_string()
            ),
            (
                3,
                "a bandwidth sample without its exec time sample".to_string()
            ),
            (4, "label nranks=\"two\" is not a count".to_string()),
            (6, "no `collective` label".to_string()),
            (
                11,
                "label nranks=\"0\": a communicator has at least one rank".to_string()
            ),
        ]
    );
    assert_eq!(set.records.len(), 1);
    assert_eq!(set.records[0].raw_size(), Size::Exact(0));
    assert_eq!(set.records[0].time_us, 5.0);
    assert_eq!(
        set.notes,
        [format!(
            "{}: 1 records of format version v9.0, which this reader does not know \
             (Prometheus metric format v<N>.1): read by the fields it knows",
            p.display()
        )]
    );
}

#[test]
fn buckets_and_samples_parse_exactly() {
    assert_eq!(
        bucket("4-5GB"),
        Ok(Size::Bucket {
            lo: 4 << 30,
            hi: 5 << 30
        })
    );
    assert_eq!(
        bucket("512-513MB"),
        Ok(Size::Bucket {
            lo: 512 << 20,
            hi: 513 << 20
        })
    );
    assert_eq!(bucket("8-9KB"), Ok(Size::Bucket { lo: 8192, hi: 9216 }));
    assert_eq!(bucket("100-101B"), Ok(Size::Bucket { lo: 100, hi: 101 }));
    assert_eq!(
        bucket("1-2TB"),
        Ok(Size::Bucket {
            lo: 1 << 40,
            hi: 2 << 40
        })
    );
    assert_eq!(bucket("0B"), Ok(Size::Exact(0)));
    for bad in [
        "",
        "4GB",
        "5-4GB",
        "4-4GB",
        "-5GB",
        "4-GB",
        "4-5",
        "4-5gb",
        "4-5 GB",
        "99999999-100000000TB",
    ] {
        assert!(bucket(bad).is_err(), "{bad}");
    }
    assert_eq!(
        sample(r#"m{a="x\\y",b="q\"",} 1.5e3 42"#),
        Ok((
            "m".to_string(),
            vec![
                ("a".to_string(), "x\\y".to_string()),
                ("b".to_string(), "q\"".to_string())
            ],
            1500.0,
            Some(42)
        ))
    );
    assert_eq!(sample("m 2"), Ok(("m".to_string(), vec![], 2.0, None)));
    assert!(sample("m{a=\"1\"} NaN").unwrap().2.is_nan());
    for bad in [
        "m",
        "m{a=1} 2",
        "m{a=\"1\"",
        "m{=\"1\"} 2",
        "m{a=\"1\"} 2 x",
        "m{a=\"1\"} 2 3 4",
        "{a=\"1\"} 2",
    ] {
        assert!(sample(bad).is_err(), "{bad}");
    }
}
