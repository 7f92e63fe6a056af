//! The NCCL backend's real code path, end to end through the binary, against fake-nccl (a test
//! double of libcuda and libnccl on host memory; see fake-nccl/): every collective, type and
//! operator verified with -g 1/2/4 and -t 2, graphs, registration, aggregation, blocking modes,
//! unaligned buffers, the legacy stream, shared devices, the device timer; the exact NCCL calls
//! (pointers, counts, types, groups) from the fake's call trace; library-version fallbacks;
//! and failures: corrupted data (exit 7), a hung collective under -T (exit 4, rows kept), an
//! asynchronous NCCL error (exit 3), too few GPUs (exit 5), the memory clamp of -e.

use crate::support::fake_nccl::{run_fake as run, table_rows as rows};
use std::path::Path;
use std::time::{Duration, Instant};

/// Asserts a clean, fully verified run on the NCCL backend and returns its stdout.
fn verified(args: &str, envs: &[(&str, &str)]) -> String {
    let full = format!("{args} --backend nccl");
    let r = run(&full, envs);
    assert_eq!(r.code, Some(0), "`{full}`:\n{}\n{}", r.out, r.err);
    assert!(
        r.out.contains("# Out of bounds values : 0 OK"),
        "`{full}`:\n{}",
        r.out
    );
    assert!(
        r.out.contains("# NCCL library "),
        "`{full}` did not use NCCL:\n{}",
        r.out
    );
    assert!(
        !rows(&r.out).is_empty(),
        "`{full}` measured nothing:\n{}",
        r.out
    );
    r.out
}

#[test]
fn every_collective_type_and_op_verifies_on_1_2_and_4_gpus() {
    for coll in ncclbench::core::collective::Collective::ALL {
        for g in [1, 2, 4] {
            let args = format!(
                "{} -g {g} -b 1K -e 64K -f 8 -d all -o all -r -1 -n 2 -w 1",
                coll.name()
            );
            let out = verified(&args, &[]);
            // Every type: ten (fp8 needs compute capability 9.0, which the fake reports).
            let types: std::collections::BTreeSet<&str> = out
                .lines()
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| l.split_whitespace().nth(2))
                .collect();
            assert_eq!(types.len(), 12, "{args}: {types:?}");
        }
    }
}

#[test]
fn threads_times_gpus_make_the_ranks() {
    for coll in ["all_reduce", "alltoall", "hypercube", "broadcast"] {
        let out = verified(&format!("{coll} -t 2 -g 2 -b 1K -e 64K -f 8 -r -1"), &[]);
        assert_eq!(out.matches("#  Rank ").count(), 4, "{coll}");
    }
}

#[test]
fn every_timing_and_buffer_mode_verifies() {
    let modes = [
        "-G 3",
        "-G 2 -o mulsum",
        "-R 1",
        "-R 2",
        "-m 3",
        "-z 1",
        "-z 2",
        "-z 3 -I 1",
        "-I 1 -K 1 -n 4",
        "-u 3 -d half",
        "-y 1",
        "--devices 0,0",
        "--devices 3,1",
        "--timer device",
        "--timer device -G 2",
        "--timer device -I 1 -m 2",
        "-x 1 -M 1",
        "-c 3 -N 2",
        "-C 1 -S 1",
    ];
    for mode in modes {
        for coll in [
            "all_reduce",
            "all_gather",
            "reduce_scatter",
            "alltoall",
            "gather",
            "hypercube",
            "sendrecv",
        ] {
            verified(&format!("{coll} -g 2 -b 1K -e 16K -f 4 -n 2 {mode}"), &[]);
        }
    }
}

/// The calls the fake recorded, one line per NCCL API call.
fn trace(args: &str, envs: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace");
    let p = path.to_str().unwrap();
    let mut all: Vec<(&str, &str)> = vec![("FAKE_NCCL_TRACE", p)];
    all.extend_from_slice(envs);
    verified(args, &all);
    std::fs::read_to_string(&path)
        .expect("trace written")
        .lines()
        .map(str::to_string)
        .collect()
}

/// `key=value` field of a trace line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split('\t')
        .find_map(|f| f.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
}

fn calls<'a>(t: &'a [String], name: &str) -> Vec<&'a str> {
    t.iter()
        .filter(|l| l.split('\t').next() == Some(name))
        .map(String::as_str)
        .collect()
}

#[test]
fn in_place_all_gather_passes_nccl_tests_offsets_counts_and_groups() {
    // 1 KiB of float over 2 ranks: 128 elements per rank; in place, rank r sends from its block
    // (r * 512 bytes into the receive buffer) and receives at the buffer's start.
    let t = trace("all_gather -g 2 -b 1K -e 1K -n 1 -w 0", &[]);
    let ag = calls(&t, "ncclAllGather");
    assert!(!ag.is_empty());
    for l in &ag {
        assert_eq!(field(l, "count"), "128", "{l}");
        assert_eq!(field(l, "dtype"), "7", "float is ncclFloat32: {l}");
        assert_eq!(field(l, "group"), "1", "both ranks in one group: {l}");
    }
    let in_place: Vec<_> = ag
        .iter()
        .filter(|l| field(l, "send").split('+').next() == field(l, "recv").split('+').next())
        .collect();
    assert!(!in_place.is_empty(), "some calls are in place");
    for l in in_place {
        let rank: usize = field(l, "rank").parse().unwrap();
        let send_off: usize = field(l, "send").split('+').nth(1).unwrap().parse().unwrap();
        let recv_off: usize = field(l, "recv").split('+').nth(1).unwrap().parse().unwrap();
        assert_eq!((send_off, recv_off), (rank * 512, 0), "{l}");
    }
}

#[test]
fn each_data_type_reaches_nccl_as_its_own_code_in_nccl_tests_order() {
    let t = trace("all_reduce -b 1K -e 1K -n 1 -w 0 -c 0 -d all", &[]);
    let mut codes: Vec<&str> = calls(&t, "ncclAllReduce")
        .iter()
        .map(|l| field(l, "dtype"))
        .collect();
    codes.dedup();
    let expected: Vec<String> = (0..12).map(|c| c.to_string()).collect();
    assert_eq!(codes, expected);
}

/// NCCL has no one-rank fp8 PreMulSum kernel (avg and mulsum on f8e4m3/f8e5m2 return
/// ncclInvalidArgument on a one-rank communicator; nccl-tests stops there): those sweeps are
/// skipped with the reason in the header, every other pair still runs, and two ranks run them.
#[test]
fn one_rank_fp8_avg_and_mulsum_are_skipped_with_the_reason() {
    for coll in ["all_reduce", "reduce", "reduce_scatter"] {
        let args = format!("{coll} -g 1 -b 1K -e 4K -f 4 -n 1 -w 0 -d all -o all");
        let out = verified(&args, &[]);
        let pairs: std::collections::BTreeSet<(String, String)> = rows(&out)
            .iter()
            .map(|r| (r[2].to_string(), r[3].to_string()))
            .collect();
        for t in ["f8e4m3", "f8e5m2"] {
            for op in ["avg", "mulsum"] {
                assert!(
                    !pairs.contains(&(t.into(), op.into())),
                    "{args}: {t} {op} ran"
                );
                assert!(
                    out.contains(&format!("# skipping {t}/{op}")),
                    "{args}:\n{out}"
                );
            }
            for op in ["sum", "prod", "max", "min"] {
                assert!(
                    pairs.contains(&(t.into(), op.into())),
                    "{args}: no {t} {op}"
                );
            }
        }
        assert!(pairs.contains(&("bfloat16".into(), "avg".into())), "{args}");
        assert_eq!(pairs.len(), 12 * 6 - 4, "{args}: {pairs:?}");
        assert!(out.contains("one-rank communicator"), "{args}:\n{out}");
    }
    let out = verified(
        "all_reduce -g 2 -b 1K -e 4K -f 4 -n 1 -w 0 -d f8e4m3 -o all",
        &[],
    );
    assert!(!out.contains("# skipping"), "{out}");
    assert_eq!(rows(&out).len(), 2 * 6, "{out}");
    // Types and ops that never reach the refusal print no note.
    let out = verified("all_reduce -g 1 -b 1K -e 1K -n 1 -w 0 -d all -o sum", &[]);
    assert!(!out.contains("one-rank communicator"), "{out}");
}

#[test]
fn mulsum_makes_a_premulsum_per_call_and_rank_with_nccl_tests_scalars() {
    let t = trace("reduce -g 4 -b 1K -e 1K -n 1 -w 0 -o mulsum -d int32", &[]);
    let reduces = calls(&t, "ncclReduce");
    assert!(!reduces.is_empty());
    for l in &reduces {
        let rank: usize = field(l, "rank").parse().unwrap();
        let want = if rank % 2 == 0 {
            "premulsum(1.0)"
        } else {
            "premulsum(2.0)"
        };
        assert_eq!(field(l, "op"), want, "{l}");
    }
    assert_eq!(calls(&t, "ncclRedOpCreatePreMulSum").len(), reduces.len());
}

#[test]
fn aggregation_nests_the_rank_group_inside_the_m_group() {
    let t = trace("all_reduce -g 2 -b 1K -e 1K -n 1 -w 0 -c 0 -m 3", &[]);
    let depths: std::collections::BTreeSet<&str> = calls(&t, "ncclAllReduce")
        .iter()
        .map(|l| field(l, "group"))
        .collect();
    // The untimed launch is grouped per rank only; the timed ones sit inside -m's group.
    assert_eq!(depths.into_iter().collect::<Vec<_>>(), vec!["1", "2"]);
}

#[test]
fn old_libraries_get_grouped_send_recv_for_alltoall_gather_and_scatter() {
    for (coll, native) in [
        ("alltoall", "ncclAlltoAll"),
        ("gather", "ncclGather"),
        ("scatter", "ncclScatter"),
    ] {
        let args = format!("{coll} -g 4 -b 1K -e 1K -n 1 -w 0 -r 1");
        let old = trace(&args, &[("FAKE_NCCL_VERSION", "22304")]);
        assert!(calls(&old, native).is_empty(), "{coll} on 2.23");
        assert!(!calls(&old, "ncclSend").is_empty(), "{coll} on 2.23");
        let new = trace(&args, &[("FAKE_NCCL_VERSION", "22800")]);
        assert!(!calls(&new, native).is_empty(), "{coll} on 2.28");
        assert!(calls(&new, "ncclSend").is_empty(), "{coll} on 2.28");
    }
    let out = verified(
        "alltoall -g 2 -b 1K -e 1K",
        &[("FAKE_NCCL_VERSION", "22304")],
    );
    assert!(
        out.contains("# alltoall runs as grouped ncclSend/ncclRecv"),
        "{out}"
    );
}

#[test]
fn registration_and_cta_policy_reach_nccl_or_are_named_as_ignored() {
    let t = trace("all_reduce -g 2 -b 1K -e 1K -n 1 -w 0 -R 1 -x 1", &[]);
    assert_eq!(
        calls(&t, "ncclCommRegister").len(),
        4,
        "send and recv of 2 ranks"
    );
    for l in calls(&t, "ncclCommInitRankConfig") {
        assert_eq!(field(l, "cta_policy"), "1", "{l}");
    }
    let t = trace("all_reduce -g 2 -b 1K -e 1K -n 1 -w 0 -R 2", &[]);
    let windows = calls(&t, "ncclCommWindowRegister");
    assert_eq!(windows.len(), 4);
    assert!(
        windows.iter().all(|l| field(l, "group") == "1"),
        "collective: one group"
    );
    let out = verified(
        "all_reduce -g 2 -b 1K -e 1K -R 2 -x 1",
        &[("FAKE_NCCL_VERSION", "22304")],
    );
    assert!(
        out.contains("# -R 2 (ncclCommWindowRegister) ignored: needs NCCL 2.27.0"),
        "{out}"
    );
    assert!(
        out.contains("# -x 1 (ncclConfig_t.CTAPolicy) ignored"),
        "{out}"
    );
}

#[test]
fn communicators_are_finalized_and_destroyed_on_the_normal_path() {
    let t = trace("all_reduce -g 2 -b 1K -e 1K -n 1 -w 0", &[]);
    assert_eq!(calls(&t, "ncclCommFinalize").len(), 2);
    assert_eq!(calls(&t, "ncclCommDestroy").len(), 2);
    assert!(calls(&t, "ncclCommAbort").is_empty());
}

#[test]
fn corrupted_device_data_is_counted_and_exits_7() {
    // Per communicator: out-of-place untimed (op 0), timed (1), verification (2).
    let r = run(
        "all_reduce --backend nccl -g 2 -b 1K -e 1K -w 0 -n 1",
        &[("FAKE_NCCL_CORRUPT_AT", "2")],
    );
    assert_eq!(r.code, Some(7), "{}\n{}", r.out, r.err);
    let row = &rows(&r.out)[0];
    assert_ne!(row[8], "0", "out-of-place #wrong: {row:?}");
    assert!(
        r.out.contains("# Out of bounds values : 1 FAILED"),
        "{}",
        r.out
    );
}

#[test]
fn a_hung_collective_times_out_naming_the_case_and_keeps_completed_rows() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let start = Instant::now();
    // Each size takes six ops per communicator (untimed, timed, verification; out of place
    // then in place): op 8 is the second size's out-of-place verification launch.
    let args = format!(
        "all_reduce --backend nccl -g 2 -b 1K -e 4K -f 2 -w 0 -n 1 -T 2 --csv {}",
        csv.display()
    );
    let r = run(&args, &[("FAKE_NCCL_HANG_AT", "8")]);
    // Well under the fake's own 60 s synchronize limit, so only -T 2 can have ended the run,
    // with room for a loaded machine.
    assert!(
        start.elapsed() < Duration::from_secs(45),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(r.code, Some(4), "{}\n{}", r.out, r.err);
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    assert!(
        r.err.contains("Test timeout (2s)") && r.err.contains("2048 B out_of_place (verification)"),
        "{}",
        r.err
    );
    assert!(r.err.contains("communicators aborted"), "{}", r.err);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(
        text.lines().count(),
        3,
        "header and both placements of the one completed size:\n{text}"
    );
}

#[test]
fn an_asynchronous_nccl_error_aborts_and_exits_3() {
    let r = run(
        "all_reduce --backend nccl -g 2 -b 1K -e 1K -w 0 -n 1 -T 10",
        &[("FAKE_NCCL_ASYNC_ERROR_AT", "1")],
    );
    assert_eq!(r.code, Some(3), "{}\n{}", r.out, r.err);
    assert!(
        r.err.contains("NCCL failure on rank") && r.err.contains("ncclResult_t 6"),
        "{}",
        r.err
    );
}

#[test]
fn too_few_gpus_exit_5_with_nccl_tests_words() {
    let r = run(
        "all_reduce --backend nccl -g 2 -b 1K -e 1K",
        &[("FAKE_CUDA_DEVICES", "1")],
    );
    assert_eq!(r.code, Some(5), "{}", r.err);
    assert!(
        r.err
            .contains("Invalid number of GPUs: 2 requested but only 1 were found"),
        "{}",
        r.err
    );
    let r = run(
        "all_reduce --backend nccl -b 1K -e 1K",
        &[("FAKE_CUDA_DEVICES", "2"), ("NCCL_TESTS_DEVICE", "2")],
    );
    assert_eq!(r.code, Some(5), "{}", r.err);
}

#[test]
fn max_bytes_is_clamped_to_device_memory_with_nccl_tests_rule() {
    // 2.1 GiB devices: 1 GiB reserve, (2.1 - 1 - 1) GiB / 3 buffers = 35791394 bytes.
    let out = verified(
        "all_reduce -b 1G -e 1G -n 1 -w 0",
        &[("FAKE_CUDA_MEM_GIB", "2.1")],
    );
    assert!(
        out.contains("#\n# Reducing maxBytes to 35791394 due to memory limitation\n"),
        "{out}"
    );
    assert_eq!(
        rows(&out)[0][0],
        "35791392",
        "float-aligned size of the one row"
    );
}

#[test]
fn auto_picks_nccl_when_a_driver_gpus_and_libnccl_are_there() {
    let r = run("all_reduce -g 2 -b 1K -e 1K", &[]);
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert!(r.out.contains("# NCCL library "), "{}", r.out);
    assert!(!r.out.contains("chose host"), "{}", r.out);
}

#[test]
fn env_lists_the_fake_gpus_and_library() {
    let r = run("env --json", &[("FAKE_CUDA_DEVICES", "3")]);
    assert_eq!(r.code, Some(0), "{}", r.err);
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(v["cuda"]["devices"].as_array().unwrap().len(), 3);
    assert_eq!(v["cuda"]["devices"][1]["name"], "Fake GPU 1");
    assert_eq!(v["cuda"]["driver_version"], "12.4");
    let path = v["nccl"]["path"].as_str().unwrap();
    assert!(Path::new(path).ends_with("libfake_nccl.so"), "{path}");
}
