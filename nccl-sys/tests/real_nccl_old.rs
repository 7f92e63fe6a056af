//! Tests against a real older libnccl: the one `NCCLBENCH_TEST_NCCL_LIB_OLD` names (CI fetches
//! the nvidia-nccl-cu11 2.21.5 wheel's with `scripts/fetch-nccl DIR nvidia-nccl-cu11==2.21.5`).
//! Skipped with a note when unset, except under `CI=true`, where a missing library fails.
//!
//! The fake impersonates old versions by refusing calls, but still exports every symbol; a
//! real old library lacks them. These tests check the version gates against NVIDIA's own
//! symbol table, and NCCL's last message on a failure that really happened.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nccl_sys::{bindings as b, version::version_code, Nccl};

const OLD_LIB_ENV: &str = "NCCLBENCH_TEST_NCCL_LIB_OLD";
const CHILD_ENV: &str = "NCCL_SYS_OLD_TEST_CHILD";

fn old_lib(test: &str) -> Option<PathBuf> {
    match std::env::var_os(OLD_LIB_ENV).filter(|v| !v.is_empty()) {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{test}: CI=true but {OLD_LIB_ENV} is unset (.ci/run fetches it)")
        }
        None => {
            eprintln!("skipped {test}: set {OLD_LIB_ENV} (scripts/fetch-nccl DIR nvidia-nccl-cu11==2.21.5)");
            None
        }
    }
}

fn open(lib: &Path) -> Nccl {
    Nccl::open(Some(lib)).unwrap_or_else(|e| panic!("{OLD_LIB_ENV}={}: {e}", lib.display()))
}

/// The release each optional entry point first appeared in, as the gates of ncclbench assume.
const FIRST_RELEASE: [(&str, (i32, i32)); 16] = [
    ("ncclCommInitRankConfig", (2, 14)),
    ("ncclCommFinalize", (2, 14)),
    ("ncclGetLastError", (2, 13)),
    ("ncclAlltoAll", (2, 28)),
    ("ncclGather", (2, 28)),
    ("ncclScatter", (2, 28)),
    ("ncclRedOpCreatePreMulSum", (2, 11)),
    ("ncclRedOpDestroy", (2, 11)),
    ("ncclCommRegister", (2, 19)),
    ("ncclCommDeregister", (2, 19)),
    ("ncclCommWindowRegister", (2, 27)),
    ("ncclCommWindowDeregister", (2, 27)),
    ("ncclMemAlloc", (2, 19)),
    ("ncclMemFree", (2, 19)),
    ("ncclCommInitAll", (2, 0)),
    ("ncclCommSplit", (2, 18)),
];

#[test]
fn the_old_library_lacks_exactly_the_entry_points_newer_than_it() {
    let Some(lib) = old_lib("the_old_library_lacks_exactly_the_entry_points_newer_than_it") else {
        return;
    };
    let nccl = open(&lib);
    assert_eq!(nccl.version_string(), "2.21.5");
    assert_eq!(nccl.version(), 22105);
    assert_eq!(
        FIRST_RELEASE.map(|(name, _)| name),
        nccl_sys::OptionalApi::SYMBOLS,
        "the table covers every optional entry point, in order"
    );
    let expected_missing: Vec<&str> = FIRST_RELEASE
        .iter()
        .filter(|(_, (major, minor))| version_code(*major, *minor, 0) > nccl.version())
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(nccl.optional().missing(), expected_missing);
    assert_eq!(
        expected_missing,
        [
            "ncclAlltoAll",
            "ncclGather",
            "ncclScatter",
            "ncclCommWindowRegister",
            "ncclCommWindowDeregister"
        ]
    );
    // 2.21 has bfloat16, avg and PreMulSum, but no fp8 (2.24).
    assert!(nccl.supports_dtype(nccl_sys::data_type::BFLOAT16));
    assert!(!nccl.supports_dtype(nccl_sys::data_type::FLOAT8E4M3));
    assert!(nccl.supports_premulsum());
}

#[test]
fn a_real_failure_carries_its_warn_and_a_later_status_does_not() {
    let Some(lib) = old_lib("a_real_failure_carries_its_warn_and_a_later_status_does_not") else {
        return;
    };
    // SAFETY: only asks the dynamic loader whether a CUDA driver library exists here.
    if unsafe { libloading::Library::new("libcuda.so.1") }.is_ok() {
        eprintln!("skipped: a CUDA driver is present, so ncclCommInitRank may succeed");
        return;
    }
    // Communicator creation runs in a child under a deadline: it must not crash or hang us.
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut child = Command::new(exe)
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &lib)
        .env("NCCL_DEBUG", "WARN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the child test");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the child hung in ncclCommInitRank");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("the child's output");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let result = |key: &str| {
        let prefix = format!("RESULT {key}=");
        text.lines()
            .find_map(|l| l.split_once(prefix.as_str()).map(|(_, v)| v.to_owned()))
            .unwrap_or_else(|| panic!("no {key} in:\n{text}"))
    };
    let failure = result("init");
    assert!(
        failure.starts_with("ncclCommInitRank failed: unhandled cuda error"),
        "{failure}"
    );
    assert!(
        failure.contains("(ncclResult_t 1); NCCL's last message: Cuda failure"),
        "{failure}"
    );
    assert_eq!(result("in_progress_detail"), "");
}

/// The child half of the test above: does nothing unless started by it.
#[test]
fn child() {
    let Some(lib) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let nccl = open(Path::new(&lib));
    let id = nccl.get_unique_id().expect("ncclGetUniqueId");
    let mut comm = std::ptr::null_mut();
    // SAFETY: one rank of a one-rank communicator, with a fresh id; `comm` receives the handle.
    let code = unsafe { (nccl.api().ncclCommInitRank)(&mut comm, 1, id.to_raw(), 0) };
    match nccl.check("ncclCommInitRank", code) {
        Ok(()) => println!("RESULT init=succeeded"),
        Err(e) => println!("RESULT init={e}"),
    }
    // NCCL's buffer still holds the failure above; a status reported without a WARN must not
    // pick it up.
    let later = nccl
        .check("ncclCommGetAsyncError", b::ncclInProgress)
        .expect_err("ncclInProgress is not success");
    println!("RESULT in_progress_detail={}", later.detail);
}
