//! `ncclbench analyze INSPECTOR_DUMP --baseline BENCHMARK` through the binary: a training job's
//! Inspector records generated from the documented format (`production_cli/job.rs`: several
//! communicators, ranks, hosts and sizes, a planted slow rank, a bimodal size, gzip and a file
//! cut mid-record, Prometheus snapshots) held against host-backend benchmark runs made here.
//! The report must name the slow rank and the contention, carry the exact aggregates, and say
//! where it has no number instead of extrapolating.

mod inputs;
mod job;

use crate::support::bin::ncclbench;
use job::Rec;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

/// The benchmark runs every test shares (all_reduce and all_gather over four host ranks, 64K
/// to 16M) and the benchmark's time of one call at each size the job uses, as the report reads
/// it (its fitted curve): asked of the report itself on a probe dump with one record per size,
/// so the job's times are exact multiples of what it is compared with, however noisy a
/// host-backend point on a busy machine is.
struct Bench {
    ar: PathBuf,
    ag: PathBuf,
    times: BTreeMap<(String, u64), f64>,
}

fn bench() -> &'static Bench {
    static BENCH: OnceLock<Bench> = OnceLock::new();
    BENCH.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("production-cli-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let run = |coll: &str| {
            let csv = dir.join(format!("{coll}.csv"));
            let out = ncclbench()
                .args([
                    coll, "-g", "4", "-b", "64K", "-e", "16M", "-f", "2", "-n", "5",
                ])
                .args(["-w", "1", "-c", "0", "--backend", "host", "--csv"])
                .arg(&csv)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            csv
        };
        let (ar, ag) = (run("all_reduce"), run("all_gather"));
        let probe = dir.join("probe.log");
        job::write_probe(&probe);
        let doc = ok_json(&analyze(
            &[probe.as_path()],
            &[
                "--baseline",
                ar.to_str().unwrap(),
                "--baseline",
                ag.to_str().unwrap(),
                "--format",
                "json",
            ],
        ));
        let mut times = BTreeMap::new();
        for g in doc["groups"].as_array().unwrap() {
            let t = g["baseline"]["time_us"]
                .as_f64()
                .unwrap_or_else(|| panic!("{g}"));
            let key = (
                g["collective"].as_str().unwrap().to_string(),
                g["bytes"].as_u64().unwrap(),
            );
            times.insert(key, t);
        }
        Bench { ar, ag, times }
    })
}

/// The generated dump in a fresh directory: (dir, records, bytes cut off rank 3's file).
fn dump() -> (tempfile::TempDir, Vec<Rec>, usize) {
    let b = bench();
    let dir = tempfile::tempdir().unwrap();
    let time = |coll: &str, bytes: u64| b.times[&(coll.to_string(), bytes)];
    let (recs, cut) = job::write_dump(dir.path(), &time);
    (dir, recs, cut)
}

fn analyze(inputs: &[&Path], args: &[&str]) -> Output {
    ncclbench()
        .arg("analyze")
        .args(inputs)
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok_json(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Nearest-rank percentile of ascending `v`.
fn pct(v: &[f64], p: f64) -> f64 {
    let k = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[k.clamp(1, v.len()) - 1]
}

fn group<'a>(doc: &'a Value, comm: &str, coll: &str, bytes: u64) -> &'a Value {
    doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| {
            (g["comm_id"] == comm || g["comm_name"] == comm)
                && g["collective"] == coll
                && g["bytes"] == bytes
        })
        .unwrap_or_else(|| panic!("no group {comm} {coll} {bytes}"))
}

#[test]
fn the_report_names_the_planted_slow_rank_and_the_contention_with_exact_aggregates() {
    let b = bench();
    let (dir, recs, cut) = dump();
    let doc = ok_json(&analyze(
        &[dir.path()],
        &[
            "--baseline",
            b.ar.to_str().unwrap(),
            "--baseline",
            b.ag.to_str().unwrap(),
            "--format",
            "json",
        ],
    ));
    assert_eq!(doc["schema"], "ncclbench-production/1");
    assert_eq!(doc["inputs"]["files"], 4);
    assert_eq!(doc["inputs"]["records"], recs.len());
    assert_eq!(
        doc["inputs"]["baseline_curves"], 4,
        "two collectives x two placements"
    );
    let notes: Vec<&str> = doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let cut_note = format!(": {cut} bytes dropped");
    assert!(
        notes
            .iter()
            .any(|n| n.contains("rank3.jsonl: cut mid-record at byte") && n.ends_with(&cut_note)),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("1 files that are not Inspector output left out")),
        "{notes:?}"
    );

    // Every group's aggregates, exactly, from the generated numbers.
    let grand: f64 = recs.iter().map(|r| r.time_us as f64).sum();
    assert_eq!(doc["total_time_us"].as_f64().unwrap(), grand);
    let mut by: BTreeMap<(&str, &str, u64), Vec<&Rec>> = BTreeMap::new();
    for r in &recs {
        by.entry((r.comm, r.coll, r.bytes)).or_default().push(r);
    }
    assert_eq!(doc["groups"].as_array().unwrap().len(), by.len());
    for ((comm, coll, bytes), rs) in &by {
        let g = group(&doc, comm, coll, *bytes);
        let mut bw: Vec<f64> = rs.iter().map(|r| r.busbw).collect();
        let mut t: Vec<f64> = rs.iter().map(|r| r.time_us as f64).collect();
        bw.sort_by(f64::total_cmp);
        t.sort_by(f64::total_cmp);
        let total: f64 = t.iter().sum();
        assert_eq!(g["count"], rs.len(), "{comm} {bytes}");
        for (p, key) in [(5.0, "p5"), (50.0, "p50"), (95.0, "p95")] {
            assert_eq!(
                g["busbw_gbs"][key].as_f64().unwrap(),
                pct(&bw, p),
                "{comm} {bytes} {key}"
            );
            assert_eq!(
                g["time_us"][key].as_f64().unwrap(),
                pct(&t, p),
                "{comm} {bytes} {key}"
            );
        }
        assert_eq!(g["total_time_us"].as_f64().unwrap(), total);
        assert_eq!(g["time_share"].as_f64().unwrap(), total / grand);
        if let Some(v) = g["baseline"].as_object() {
            let lost = total - rs.len() as f64 * v["time_us"].as_f64().unwrap();
            assert!(
                (v["lost_us"].as_f64().unwrap() - lost).abs() <= 1e-9 * total,
                "{g}"
            );
            let ratio = pct(&bw, 50.0) / v["busbw_gbs"].as_f64().unwrap();
            assert!((v["ratio"].as_f64().unwrap() - ratio).abs() < 1e-12, "{g}");
        }
    }
    let old = group(&doc, job::OLD, "all_reduce", 2 << 20);
    assert_eq!(
        (&old["comm_name"], &old["timing"][0]["value"]),
        (&Value::Null, &Value::from("unknown"))
    );
    assert!(old["baseline"].is_object(), "{old}");
    let above = &group(&doc, job::DP, "all_reduce", 64 << 20)["baseline_note"];
    assert!(
        above
            .as_str()
            .unwrap()
            .contains("above the benchmark's largest size 16M: not extrapolated"),
        "{above}"
    );
    let below = &group(&doc, job::DP, "all_reduce", 16 << 10)["baseline_note"];
    assert!(
        below
            .as_str()
            .unwrap()
            .contains("below the benchmark's smallest size 64K"),
        "{below}"
    );
    let send = &group(&doc, "0x91", "send", 256 << 10)["baseline_note"];
    assert!(
        send.as_str()
            .unwrap()
            .contains("no benchmark of this operation"),
        "{send}"
    );
    // The groups losing most time against the benchmark come first.
    let lost: Vec<f64> = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["baseline"]["lost_us"].as_f64())
        .collect();
    assert!(lost.windows(2).all(|w| w[0] >= w[1]), "{lost:?}");

    // The planted causes, and no other slow rank or contention.
    let causes = doc["causes"].as_array().unwrap();
    let of = |kind: &str| {
        causes
            .iter()
            .filter(|c| c["kind"] == kind)
            .collect::<Vec<_>>()
    };
    let slow = of("slow_rank");
    assert_eq!(slow.len(), 1, "{causes:?}");
    assert_eq!(
        (&slow[0]["comm_name"], &slow[0]["rank"], &slow[0]["host"]),
        (
            &Value::from("DP Group 0"),
            &Value::from(3),
            &Value::from("node-b")
        )
    );
    assert!(slow[0]["lost_us"].as_f64().unwrap() > 0.0);
    let cont = of("contention");
    assert_eq!(cont.len(), 1, "{causes:?}");
    assert_eq!(
        (
            &cont[0]["comm_name"],
            &cont[0]["collective"],
            &cont[0]["bytes"]
        ),
        (
            &Value::from("TP Group 1"),
            &Value::from("all_gather"),
            &Value::from(4u64 << 20)
        )
    );
    let ev = cont[0]["evidence"].as_str().unwrap();
    assert!(
        ev.contains("120 of 160 records at >= 80%")
            && ev.contains("40 below 50%")
            && ev.contains("on 4 ranks"),
        "{ev}"
    );
    assert!(
        of("slow_host").is_empty() && of("algo_proto").is_empty(),
        "{causes:?}"
    );
    // Per rank of DP: its calls and time, from the records.
    for rank in 0..job::NRANKS {
        let mine: Vec<&Rec> = recs
            .iter()
            .filter(|r| r.comm == job::DP && r.rank == rank)
            .collect();
        let row = doc["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["comm_id"] == job::DP && r["rank"] == rank)
            .unwrap();
        assert_eq!(row["count"], mine.len());
        assert_eq!(row["host"], job::host(rank));
        let time: f64 = mine.iter().map(|r| r.time_us as f64).sum();
        assert_eq!(row["total_time_us"].as_f64().unwrap(), time);
    }
}

#[test]
fn text_markdown_and_the_out_directory_name_the_same_findings() {
    let b = bench();
    let (dir, _, _) = dump();
    let base = [
        "--baseline",
        b.ar.to_str().unwrap(),
        "--baseline",
        b.ag.to_str().unwrap(),
    ];
    let out = analyze(&[dir.path()], &base);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("slow_rank on DP Group 0: rank 3 (node-b)"),
        "{text}"
    );
    assert!(
        text.contains("contention on TP Group 1: all_gather 4M"),
        "{text}"
    );
    assert!(text.contains("lost against the benchmark"), "{text}");
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let md = ncclbench()
        .arg("analyze")
        .arg(dir.path())
        .args(with(&["--format", "markdown"]))
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(
        md.starts_with("# ncclbench production report\n") && md.contains("| communicator |"),
        "{md}"
    );

    let out_dir = dir.path().join("report");
    let o = ncclbench()
        .arg("analyze")
        .args([dir.path().join("node-a"), dir.path().join("node-b")])
        .args(with(&["--out", out_dir.to_str().unwrap()]))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("wrote 7 files to"));
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 2, "one chart per collective");
    assert!(html.contains("slow_rank") && html.contains("TP Group 1"));
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("production.json")).unwrap())
            .unwrap();
    assert_eq!(json["schema"], "ncclbench-production/1");
    for f in [
        "report.md",
        "production-all_reduce-4ranks.svg",
        "production-all_gather-4ranks.png",
    ] {
        assert!(out_dir.join(f).is_file(), "{f}");
    }
}
