//! Tests against a real libnccl: the one `NCCLBENCH_TEST_NCCL_LIB` names (CI fetches the
//! nvidia-nccl-cu12 wheel's with `scripts/fetch-nccl`). Each test says it skipped when unset.
//!
//! They prove that the loader opens NVIDIA's library and reads its true version and file, that
//! the calls ncclbench makes before touching a GPU work on a machine without one, and that
//! communicator creation without a CUDA driver returns an error code instead of crashing or
//! hanging. Calls that could crash or hang run in a child process (this test binary run again
//! with `NCCL_SYS_TEST_CHILD` set) under a deadline.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nccl_sys::{version, Nccl, HEADERS_VERSION};

const TEST_LIB_ENV: &str = "NCCLBENCH_TEST_NCCL_LIB";
/// The version the library under test must report; defaults to the bindings' header version,
/// which is the wheel `scripts/fetch-nccl` pins.
const TEST_VERSION_ENV: &str = "NCCLBENCH_TEST_NCCL_VERSION";
const CHILD_ENV: &str = "NCCL_SYS_TEST_CHILD";
const CHILD_DEADLINE: Duration = Duration::from_secs(120);

fn test_lib(test: &str) -> Option<PathBuf> {
    match std::env::var_os(TEST_LIB_ENV).filter(|v| !v.is_empty()) {
        Some(path) => Some(PathBuf::from(path)),
        None => {
            eprintln!(
                "skipped {test}: set {TEST_LIB_ENV} to a libnccl.so.2 (scripts/fetch-nccl DIR)"
            );
            None
        }
    }
}

fn open(lib: &Path) -> Nccl {
    match Nccl::open(Some(lib)) {
        Ok(nccl) => nccl,
        Err(e) => panic!("{TEST_LIB_ENV}={} does not load: {e}", lib.display()),
    }
}

#[test]
fn loads_and_reports_its_true_version_and_file() {
    let Some(lib) = test_lib("loads_and_reports_its_true_version_and_file") else {
        return;
    };
    let nccl = open(&lib);
    let expected = std::env::var(TEST_VERSION_ENV).unwrap_or_else(|_| HEADERS_VERSION.into());
    assert_eq!(nccl.version_string(), expected);
    if expected == "2.32.3" {
        assert_eq!(nccl.version(), 23203);
    }
    let mut again = 0;
    // SAFETY: ncclGetVersion writes one int.
    let code = unsafe { (nccl.api().ncclGetVersion)(&mut again) };
    assert_eq!((code, again), (0, nccl.version()));

    let canonical = std::fs::canonicalize(&lib).expect("the test library exists");
    assert!(nccl.path().is_absolute(), "{}", nccl.path().display());
    assert_eq!(nccl.path(), canonical);

    eprintln!(
        "{} is NCCL {}; optional entry points present: {:?}, missing: {:?}",
        nccl.path().display(),
        nccl.version_string(),
        nccl.optional().present(),
        nccl.optional().missing()
    );
    // Window registration (the newest of them) arrived in 2.27: from there on, all are present.
    if nccl.version() >= version::version_code(2, 27, 0) {
        assert!(nccl.optional().missing().is_empty());
        assert!(nccl.alltoall().is_some() && nccl.comm_window_register().is_some());
    }
    assert!(nccl.supports_dtype(nccl_sys::data_type::BFLOAT16));
    assert!(nccl.supports_premulsum());
}

#[test]
fn a_library_opened_through_a_symlink_reports_the_real_file() {
    let Some(lib) = test_lib("a_library_opened_through_a_symlink_reports_the_real_file") else {
        return;
    };
    let canonical = std::fs::canonicalize(&lib).expect("the test library exists");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let link = dir.path().join("libnccl.so");
    std::os::unix::fs::symlink(&canonical, &link).expect("a symlink");
    let nccl = open(&link);
    assert_eq!(nccl.path(), canonical);
}

#[test]
fn error_strings_and_checks_come_from_the_library() {
    let Some(lib) = test_lib("error_strings_and_checks_come_from_the_library") else {
        return;
    };
    let nccl = open(&lib);
    assert_eq!(nccl.error_string(0), "no error");
    assert!(nccl.error_string(1).starts_with("unhandled cuda error"));
    assert!(nccl.error_string(4).starts_with("invalid argument"));
    assert_eq!(nccl.error_string(9999), "unknown result code");
    assert!(nccl.check("ncclGroupStart", 0).is_ok());
    let err = nccl
        .check("ncclAllReduce", 5)
        .expect_err("code 5 is an error");
    assert_eq!(err.code, 5);
    assert!(err.text.starts_with("invalid usage"), "{err}");
    assert!(err
        .to_string()
        .starts_with("ncclAllReduce failed: invalid usage"));
}

#[test]
fn unique_id_needs_no_gpu() {
    let Some(lib) = test_lib("unique_id_needs_no_gpu") else {
        return;
    };
    let nccl = open(&lib);
    let first = nccl
        .get_unique_id()
        .expect("ncclGetUniqueId works without a GPU");
    let second = nccl.get_unique_id().expect("ncclGetUniqueId works twice");
    assert_ne!(
        first.as_bytes(),
        &[0u8; 128],
        "an id carries the bootstrap address"
    );
    assert_ne!(first, second, "each id is new");
}

/// What a child process reported as `RESULT key=value` lines, and all it printed.
struct ChildReport {
    output: String,
}

impl ChildReport {
    fn get(&self, key: &str) -> Option<&str> {
        let prefix = format!("RESULT {key}=");
        // libtest may print "test child ... " on the same line before the child's first line.
        self.output
            .lines()
            .find_map(|l| l.split_once(prefix.as_str()).map(|(_, value)| value))
    }
}

/// Runs this binary's `child` test with `CHILD_ENV=role` (plus `envs`), killing it at the deadline.
fn run_child(role: &str, envs: &[(&str, &std::ffi::OsStr)]) -> ChildReport {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, role)
        .env("NCCL_DEBUG", "WARN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn the child test");
    // Drain both pipes on threads so a chatty child cannot block on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if start.elapsed() > CHILD_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("child {role} hung: still running after {CHILD_DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = format!(
        "{}{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    eprintln!(
        "--- child {role} ({status}, {:?}):\n{output}---",
        start.elapsed()
    );
    assert!(status.success(), "child {role} failed or crashed: {status}");
    ChildReport { output }
}

#[test]
fn comm_init_without_a_cuda_driver_returns_an_error_code() {
    let Some(lib) = test_lib("comm_init_without_a_cuda_driver_returns_an_error_code") else {
        return;
    };
    let report = run_child("init", &[(TEST_LIB_ENV, lib.as_os_str())]);
    let code: u32 = report
        .get("init")
        .and_then(|c| c.parse().ok())
        .expect("the child reports ncclCommInitRank's code");
    // SAFETY: only asks the dynamic loader whether a CUDA driver library exists here.
    let driver = unsafe { libloading::Library::new("libcuda.so.1") }.is_ok();
    if driver {
        eprintln!("a CUDA driver is present: ncclCommInitRank(nranks 1) returned {code}");
    } else {
        assert_ne!(
            code, 0,
            "ncclCommInitRank cannot succeed without a CUDA driver"
        );
        let error = report.get("error").unwrap_or_default();
        assert!(error.starts_with("ncclCommInitRank failed: "), "{error}");
    }
}

#[test]
fn default_search_finds_the_library_on_the_loader_path() {
    let Some(lib) = test_lib("default_search_finds_the_library_on_the_loader_path") else {
        return;
    };
    let canonical = std::fs::canonicalize(&lib).expect("the test library exists");
    if lib.file_name() != Some(std::ffi::OsStr::new("libnccl.so.2")) {
        eprintln!("skipped: {} is not named libnccl.so.2", lib.display());
        return;
    }
    let dir = lib.parent().expect("a file has a directory");
    let report = run_child("default-search", &[("LD_LIBRARY_PATH", dir.as_os_str())]);
    assert_eq!(report.get("path").map(PathBuf::from), Some(canonical));
}

/// The child half of the tests above: does nothing unless started by `run_child`.
#[test]
fn child() {
    let Ok(role) = std::env::var(CHILD_ENV) else {
        return;
    };
    match role.as_str() {
        "init" => child_init(),
        "default-search" => match Nccl::open(None) {
            Ok(nccl) => println!("RESULT path={}", nccl.path().display()),
            Err(e) => println!("RESULT error={e}"),
        },
        other => panic!("unknown child role {other}"),
    }
}

fn child_init() {
    let lib = std::env::var_os(TEST_LIB_ENV).expect("the parent passes the library");
    let nccl = open(Path::new(&lib));
    let id = nccl.get_unique_id().expect("ncclGetUniqueId");
    let mut comm = std::ptr::null_mut();
    // SAFETY: one rank of a one-rank communicator, with a fresh id; `comm` receives the handle.
    let code = unsafe { (nccl.api().ncclCommInitRank)(&mut comm, 1, id.to_raw(), 0) };
    println!("RESULT init={code}");
    match nccl.check("ncclCommInitRank", code) {
        Ok(()) => {
            // SAFETY: the communicator was just created and is used by nothing else.
            let destroyed = unsafe { (nccl.api().ncclCommDestroy)(comm) };
            println!("RESULT destroy={destroyed}");
        }
        Err(e) => println!("RESULT error={e}"),
    }
}
