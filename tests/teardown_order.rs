//! Teardown in nccl-tests' order: deregister the buffers, finalize and destroy the
//! communicators, then free the buffers. NCCL may still hold a communicator's buffers until it
//! is destroyed; fake-nccl's trace of `ncclMemFree` says how many communicators were still
//! alive on the buffer's device and how many registrations the buffer still had.

use crate::support::bin::{ncclbench, run};
use crate::support::fake_nccl::fake_env;

fn trace(args: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace");
    let mut cmd = ncclbench();
    fake_env(&mut cmd).args(args.split_whitespace());
    cmd.env("FAKE_NCCL_TRACE", &path);
    let r = run(&mut cmd);
    assert_eq!(r.code, Some(0), "`{args}`:\n{}\n{}", r.out, r.err);
    let text = std::fs::read_to_string(&path).expect("trace written");
    text.lines().map(str::to_string).collect()
}

#[test]
fn buffers_are_freed_after_the_communicators_are_destroyed() {
    for mode in ["", "-R 1", "-R 2", "-G 2", "-t 2 -g 1"] {
        let args = format!("all_reduce --backend nccl -g 2 -b 1K -e 4K -n 1 -w 0 {mode}");
        let t = trace(&args);
        let name = |l: &String| l.split('\t').next().unwrap_or("").to_string();
        let position = |n: &str| t.iter().position(|l| name(l) == n);
        let allocs = t.iter().filter(|l| name(l) == "ncclMemAlloc").count();
        let frees: Vec<&String> = t.iter().filter(|l| name(l) == "ncclMemFree").collect();
        assert_eq!(frees.len(), allocs, "`{args}`: every buffer freed once");
        let last_destroy = t.iter().rposition(|l| name(l) == "ncclCommDestroy");
        let first_free = position("ncclMemFree");
        assert!(
            last_destroy.is_some() && first_free > last_destroy,
            "`{args}`: frees after the last ncclCommDestroy:\n{}",
            t.join("\n")
        );
        for f in frees {
            assert!(f.ends_with("\tlive_comms=0\tregistered=0"), "`{args}`: {f}");
        }
    }
}
