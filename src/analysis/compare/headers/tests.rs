//! Tests of the setup facts read from result files.

use super::*;

#[test]
fn text_headers_give_gpus_layout_and_version() {
    let text = "# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807\n\
                # nThread 1 nGpus 1 minBytes 8\n\
                #  Rank  0 Group  0 Pid   4242 on  node7 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n\
                #  Rank  1 Group  0 Pid   4243 on  node8 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n\
                node7:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n";
    let mut f = Facts::default();
    scan(text, &mut f);
    assert_eq!(
        f.gpus.into_iter().collect::<Vec<_>>(),
        ["NVIDIA H100 80GB HBM3"]
    );
    assert_eq!(
        f.layouts.into_iter().collect::<Vec<_>>(),
        ["2 hosts, 2 processes"]
    );
    assert_eq!(
        f.nccl_versions.into_iter().collect::<Vec<_>>(),
        ["2.21.5", "2.28.7"]
    );
}

#[test]
fn bare_and_tagged_version_lines_of_old_nccl_count() {
    // NCCL up to 2.21 prints the version without a prefix, on rank 0's stdout only.
    for line in [
        "NCCL version 2.20.3+cuda12.2",
        "[1,0]<stdout>:NCCL version 2.20.3+cuda12.2",
        "0: NCCL version 2.20.3+cuda12.2",
    ] {
        let mut f = Facts::default();
        scan(&format!("# nThread 1 nGpus 1 minBytes 8\n{line}\n"), &mut f);
        assert_eq!(
            f.nccl_versions.into_iter().collect::<Vec<_>>(),
            ["2.20.3"],
            "{line}"
        );
    }
}

#[test]
fn json_and_csv_give_what_they_record() {
    let json = r#"{"nccl_version":2708,"config":{"devices":[{"pid":1,"hostname":"a","device_info":"GPU X"}]},
                  "ncclbench":{"backend":"nccl"},"results":[]}"#;
    let mut f = Facts::default();
    scan(json, &mut f);
    assert_eq!(
        f.nccl_versions.iter().next().map(String::as_str),
        Some("2.7.8")
    );
    assert!(f.backends.contains("nccl") && f.gpus.contains("GPU X"));
    assert!(f.layouts.contains("1 host, 1 process"));
    let csv = "cycle,dtype,placement,bytes,time_us,algbw_gbs,busbw_gbs,backend\n0,float,in_place,8,1,0,0,host\n";
    let mut f = Facts::default();
    scan(csv, &mut f);
    assert_eq!(f.backends.into_iter().collect::<Vec<_>>(), ["host"]);
    // Garbage records nothing and does not panic.
    scan("{not json", &mut Facts::default());
    scan(
        "# Rank\n# Rank x Pid\n#nccl-library=zz\n",
        &mut Facts::default(),
    );
}

/// A JSON whose setup keys come after a large `results` list, and a text file read as a
/// stream: both give their facts from the file (the JSON parsed without holding `results`).
#[test]
fn files_are_scanned_as_streams_whatever_the_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let row = r#"{"name":"all_reduce","size":8,"time":1.0,"algbw":0.1,"busbw":0.1}"#;
    let rows = vec![row; 20_000].join(",");
    let json = format!(
        r#"{{"results":[{rows}],"config":{{"devices":[{{"hostname":"n1","pid":7,"device_info":"NVIDIA H200"}}]}},"nccl_version":22703,"ncclbench":{{"backend":"nccl"}}}}"#
    );
    std::fs::write(dir.path().join("a.json"), json).unwrap();
    let text = "\u{feff}# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807\n\
                # backend: nccl\n";
    std::fs::write(dir.path().join("b.log"), text).unwrap();
    let got = per_file(&[dir.path().to_path_buf()]);
    let facts = |name: &str| {
        got.iter()
            .find(|(f, _)| f.ends_with(name))
            .map(|(_, f)| f.clone())
            .unwrap()
    };
    let a = facts("a.json");
    assert_eq!(a.gpus.into_iter().collect::<Vec<_>>(), ["NVIDIA H200"]);
    assert_eq!(a.nccl_versions.into_iter().collect::<Vec<_>>(), ["2.27.3"]);
    assert_eq!(a.backends.into_iter().collect::<Vec<_>>(), ["nccl"]);
    assert_eq!(
        a.layouts.into_iter().collect::<Vec<_>>(),
        ["1 host, 1 process"]
    );
    let b = facts("b.log");
    assert_eq!(b.nccl_versions.into_iter().collect::<Vec<_>>(), ["2.28.7"]);
    assert_eq!(b.backends.into_iter().collect::<Vec<_>>(), ["nccl"]);
}
