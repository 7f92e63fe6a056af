//! `--per-group` in one process (host backend): without a split the job is one group, said in
//! the header, and every output carries that group beside the aggregate: commented tables in
//! the text (so nccl-tests text parsers still see only the aggregate), group lines in the CSV
//! (which `analyze` leaves out, saying so), `groups` in the JSON. The split itself needs several
//! processes: tests/mpi_groups.rs.

use crate::support::bin::{ncclbench, run};

/// The text's data rows: lines not starting with `#`, as nccl-tests parsers read them.
fn data_rows(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect()
}

#[test]
fn one_process_is_one_group_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, json) = (dir.path().join("g.csv"), dir.path().join("g.json"));
    let r = run(ncclbench()
        .args(
            "all_reduce --backend host -g 4 -b 1K -e 4K -f 2 -n 2 -w 1 -c 1 --per-group".split(' '),
        )
        .arg("--csv")
        .arg(&csv)
        .arg("--json")
        .arg(&json));
    assert_eq!(r.code, Some(0), "{}{}", r.out, r.err);
    assert!(r.out.contains("# --per-group: one group"), "{}", r.out);
    // The aggregate table is what nccl-tests parsers see: three sizes, nothing more.
    assert_eq!(data_rows(&r.out).len(), 3, "{}", r.out);
    assert!(
        r.out.contains("# Group 0: 4 ranks (0,1,2,3) on "),
        "{}",
        r.out
    );
    let group_rows: Vec<&str> = r
        .out
        .lines()
        .filter(|l| l.starts_with("#") && l.split_whitespace().nth(3) == Some("float"))
        .collect();
    assert_eq!(group_rows.len(), 3, "{}", r.out);
    assert!(
        r.out.contains("# Group 0 avg bus bandwidth : "),
        "{}",
        r.out
    );
    // The one group's figures are the aggregate's: same columns after the `#`.
    for (agg, g) in data_rows(&r.out).iter().zip(&group_rows) {
        assert_eq!(agg[1..], g[1..], "aggregate and group row differ");
    }

    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].ends_with(",group,group_ranks,group_hosts"),
        "{}",
        lines[0]
    );
    let all = lines.iter().filter(|l| l.contains(",all,,")).count();
    let groups: Vec<&&str> = lines.iter().filter(|l| l.contains(",0,0 1 2 3,")).collect();
    assert_eq!((all, groups.len()), (6, 6), "{text}");
    assert!(groups.iter().all(|l| l.contains(",4,")), "{text}");

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let members = &doc["ncclbench"]["groups"];
    assert_eq!(
        members[0]["ranks"],
        serde_json::json!([0, 1, 2, 3]),
        "{doc}"
    );
    let first = &doc["results"][0];
    assert_eq!(first["groups"][0]["nranks"], 4);
    assert_eq!(
        first["groups"][0]["out_of_place"]["bus_bw"],
        first["out_of_place"]["bus_bw"]
    );
    assert_eq!(
        first["groups"][0]["in_place"]["nwrong"],
        first["in_place"]["nwrong"]
    );
    assert_eq!(first["groups"][0]["in_place"]["nwrong"].as_f64(), Some(0.0));

    // analyze reads the aggregate rows only and says what it left out.
    let a = run(ncclbench().arg("analyze").arg(&csv));
    assert_eq!(a.code, Some(0), "{}{}", a.out, a.err);
    assert!(
        a.out.contains("6 per-group lines (--per-group) left out"),
        "{}",
        a.out
    );
    let plain = run(ncclbench()
        .args("all_reduce --backend host -g 4 -b 1K -e 4K -f 2 -n 2 -w 1 -c 1".split(' ')));
    assert!(!plain.out.contains("Group 0:") && !plain.out.contains("--per-group"));
}
