//! Two things the first GPU machine would have shown, end to end through the binary on
//! fake-nccl (which refuses them as NCCL does): alltoall, gather and scatter as send/recv
//! before NCCL 2.28 must be grouped even for one rank per process (a send to self outside a
//! group is refused by NCCL), and `--devices 0,0` (two ranks on one GPU) needs NCCL 2.30+ with
//! `NCCL_MULTI_RANK_GPU_ENABLE=1`, which ncclbench sets unless the user did, or a clear usage
//! error before any init on older libraries.

use crate::support::bin::{self, Run};
use crate::support::fake_nccl::fake_command;

const MULTI_RANK_ENV: &str = "NCCL_MULTI_RANK_GPU_ENABLE";

/// Runs `ncclbench <args> --backend nccl -T 30` on the fake (so a hang ends as exit 4) with
/// extra environment variables; `NCCL_MULTI_RANK_GPU_ENABLE` is not inherited.
fn on_fake_nccl(args: &str, envs: &[(&str, &str)]) -> Run {
    let mut cmd = fake_command(&format!("{args} --backend nccl -T 30"), &[]);
    cmd.env_remove(MULTI_RANK_ENV).envs(envs.iter().copied());
    bin::run(&mut cmd)
}

/// Asserts a clean run whose every measurement verified; returns stdout.
fn verified(args: &str, envs: &[(&str, &str)]) -> String {
    let r = on_fake_nccl(args, envs);
    assert_eq!(r.code, Some(0), "`{args}` {envs:?}:\n{}\n{}", r.out, r.err);
    assert!(
        r.out.contains("# Out of bounds values : 0 OK"),
        "`{args}`:\n{}",
        r.out
    );
    r.out
}

/// The fake's call trace of a verified run.
fn trace(args: &str, envs: &[(&str, &str)]) -> (String, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace");
    let mut all = vec![("FAKE_NCCL_TRACE", path.to_str().unwrap())];
    all.extend_from_slice(envs);
    let out = verified(args, &all);
    let lines = std::fs::read_to_string(&path).expect("trace written");
    (out, lines.lines().map(str::to_string).collect())
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split('\t')
        .find_map(|f| f.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
}

#[test]
fn before_2_28_alltoall_gather_and_scatter_group_their_send_recv_on_any_rank_count() {
    for coll in ["alltoall", "gather", "scatter"] {
        let roots = if coll == "alltoall" { "" } else { "-r -1" };
        // -g 1: one rank in the process (as with one GPU per MPI process); -g 2 and -t 2: two.
        for ranks in ["-g 1", "-g 2", "-t 2"] {
            let args = format!("{coll} {ranks} -b 1K -e 8K -f 8 -n 2 -w 1 -c 1 {roots}");
            let (out, calls) = trace(&args, &[("FAKE_NCCL_VERSION", "22105")]);
            assert!(
                out.contains(&format!("# {coll} runs as grouped ncclSend/ncclRecv")),
                "{out}"
            );
            let p2p: Vec<&String> = calls
                .iter()
                .filter(|l| l.starts_with("ncclSend\t") || l.starts_with("ncclRecv\t"))
                .collect();
            assert!(!p2p.is_empty(), "{args}: no send/recv");
            for l in p2p {
                assert_ne!(field(l, "group"), "0", "{args}: outside a group: {l}");
            }
        }
    }
}

#[test]
fn before_2_30_two_ranks_on_one_gpu_are_a_usage_error_before_any_init() {
    for v in ["22105", "22907"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace");
        let r = on_fake_nccl(
            "all_reduce -g 2 --devices 0,0 -b 1K -e 1K",
            &[
                ("FAKE_NCCL_VERSION", v),
                ("FAKE_NCCL_TRACE", path.to_str().unwrap()),
            ],
        );
        assert_eq!(r.code, Some(2), "{v}:\n{}\n{}", r.out, r.err);
        let err = r.err.trim();
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(
            err.contains("CUDA device 0") && err.contains("NCCL 2.30"),
            "{err}"
        );
        let calls = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            !calls.contains("ncclCommInit"),
            "{v}: refused after init began:\n{calls}"
        );
    }
}

#[test]
fn from_2_30_two_ranks_on_one_gpu_run_with_nccl_multi_rank_gpu_enable_set() {
    for v in ["23000", "23203"] {
        for coll in ["all_reduce", "alltoall", "sendrecv"] {
            let out = verified(
                &format!("{coll} -g 2 --devices 0,0 -b 1K -e 16K -f 4 -n 2"),
                &[("FAKE_NCCL_VERSION", v)],
            );
            assert!(
                out.contains("NCCL_MULTI_RANK_GPU_ENABLE=1 set"),
                "{v} {coll}:\n{out}"
            );
        }
    }
    // Distinct devices need nothing.
    let out = verified("all_reduce -g 2 --devices 1,0 -b 1K -e 1K", &[]);
    assert!(!out.contains(MULTI_RANK_ENV), "{out}");
}

#[test]
fn a_users_nccl_multi_rank_gpu_enable_is_kept() {
    // The user's 0 stands: NCCL then refuses the shared GPU at init (exit 3, its words).
    let r = on_fake_nccl(
        "all_reduce -g 2 --devices 0,0 -b 1K -e 1K",
        &[(MULTI_RANK_ENV, "0")],
    );
    assert_eq!(r.code, Some(3), "{}\n{}", r.out, r.err);
    assert!(
        r.err.contains("Set NCCL_MULTI_RANK_GPU_ENABLE=1"),
        "{}",
        r.err
    );
    let out = verified(
        "all_reduce -g 2 --devices 0,0 -b 1K -e 1K",
        &[(MULTI_RANK_ENV, "1")],
    );
    assert!(out.contains("from the environment"), "{out}");
}
