//! `--per-group` in the three file formats, from the example run with two groups of four ranks
//! (one per host): the text's commented tables byte for byte, the CSV's group lines after each
//! aggregate line, the JSON's `groups` keys; and no trace of any of it without groups. That
//! `analyze` leaves the CSV's group lines out is tested through the binary (tests/per_group.rs).

use super::csv::CsvSink;
use super::json::JsonSink;
use super::testdata::{drive, meta, rows, summary};
use super::text::TextSink;
use crate::result::{GroupInfo, GroupMeasurement, Row, RunMeta};

fn grouped() -> (RunMeta, Vec<Row>) {
    let mut m = meta();
    m.groups = (0..2)
        .map(|g| GroupInfo {
            group: g,
            ranks: (0..4).map(|r| 4 * g + r).collect(),
            hosts: vec![format!("node0{}", g + 1); 4],
        })
        .collect();
    let mut rs = rows();
    for row in &mut rs {
        for (p, m) in [&mut row.out_of_place, &mut row.in_place]
            .into_iter()
            .enumerate()
        {
            m.groups = (0..2)
                .map(|g| GroupMeasurement {
                    group: g,
                    nranks: 4,
                    time_us: m.time_us * (1.0 + g as f64) + p as f64,
                    algbw_gbs: 1.5 + g as f64,
                    busbw_gbs: 2.25 * (1.0 + g as f64),
                    wrong: Some(g as u64),
                })
                .collect();
        }
    }
    (m, rs)
}

#[test]
fn text_tables_follow_the_aggregate_as_comments() {
    let (m, rs) = grouped();
    let mut sink = TextSink::new(Vec::new());
    drive(&mut sink, &m, &rs, &summary());
    let text = String::from_utf8(sink.into_inner()).unwrap();
    let start = text.find("#\n# Per group").expect("group block");
    let end = text.find("# Out of bounds").unwrap();
    let want = concat!(
        "#\n",
        "# Per group (--per-group): 2 groups; nccl-tests prints only the aggregate above\n",
        "#\n",
        "# Group 0: 4 ranks (0,1,2,3) on node01\n",
        "#                                                              out-of-place                       in-place          \n",
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n",
        "#          8             2     float     sum      -1    12.35    1.50    2.25       0    12.90    1.50    2.25       0\n",
        "#  134217728      33554432     float     sum      -1  1234.56    1.50    2.25       0  1231.00    1.50    2.25       0\n",
        "# Group 0 avg bus bandwidth : 2.25\n",
        "#\n",
        "# Group 1: 4 ranks (4,5,6,7) on node02\n",
        "#                                                              out-of-place                       in-place          \n",
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n",
        "#          8             2     float     sum      -1    24.69    2.50    4.50       1    24.80    2.50    4.50       1\n",
        "#  134217728      33554432     float     sum      -1  2469.12    2.50    4.50       1  2461.00    2.50    4.50       1\n",
        "# Group 1 avg bus bandwidth : 4.5\n",
        "#\n",
    );
    assert_eq!(&text[start..end], want);
    // The data rows nccl-tests parsers read are the aggregate's alone.
    let data = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty());
    assert_eq!(data.count(), 2);
}

#[test]
fn csv_group_lines_follow_each_aggregate_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.csv");
    let (m, rs) = grouped();
    let mut sink = CsvSink::new(&path).with_clock(|| "T".into());
    drive(&mut sink, &m, &rs, &summary());
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].ends_with(",decision,group,group_ranks,group_hosts"),
        "{}",
        lines[0]
    );
    assert_eq!(lines.len(), 1 + 2 * 2 * 3, "{text}");
    assert!(lines[1].ends_with(",all,,"), "{}", lines[1]);
    assert_eq!(
        lines[2],
        "0,all_reduce,float,sum,-1,4,out_of_place,8,2,12.345,1.5,2.25,0,nccl,,T,,,,,,0,0 1 2 3,node01"
    );
    assert!(lines[3].ends_with(",1,4 5 6 7,node02"), "{}", lines[3]);
    assert!(lines[4].contains(",in_place,") && lines[4].ends_with(",all,,"));
}

#[test]
fn json_groups_sit_in_each_result_and_the_ncclbench_object() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.json");
    let (m, rs) = grouped();
    drive(&mut JsonSink::new(&path), &m, &rs, &summary());
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        doc["ncclbench"]["groups"][1]["ranks"],
        serde_json::json!([4, 5, 6, 7])
    );
    assert_eq!(doc["ncclbench"]["groups"][1]["hosts"][0], "node02");
    let g1 = &doc["results"][1]["groups"][1];
    assert_eq!(
        (g1["group"].as_u64(), g1["nranks"].as_u64()),
        (Some(1), Some(4))
    );
    assert_eq!(g1["out_of_place"]["bus_bw"].as_f64(), Some(4.5));
    assert_eq!(g1["in_place"]["time"].as_f64(), Some(2461.0));
    // Without groups neither key exists.
    let plain = dir.path().join("p.json");
    drive(&mut JsonSink::new(&plain), &meta(), &rows(), &summary());
    let text = std::fs::read_to_string(&plain).unwrap();
    assert!(!text.contains("\"groups\""), "{text}");
}
