//! The library search through the binary, on a machine the test builds: fake-nccl's libcuda
//! (GPUs present) on `LD_LIBRARY_PATH` without any libnccl, and a `python3` on `PATH` that is a
//! script printing a site directory, which holds the fake as the nvidia-nccl wheel's (or
//! torch's) `libnccl.so.2` or nothing at all; the real nvidia-nccl-cu11 2.21.5 library
//! (`NCCLBENCH_TEST_NCCL_LIB_OLD`) in that layout. Also NCCL's last message: attached only to
//! the codes NCCL records one for.

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::bin::{ncclbench, run, Run};
use crate::support::fake_nccl::fake_lib_dir;

/// A machine with GPUs (the fake driver) and no libnccl except where a test puts one.
struct Machine {
    dir: tempfile::TempDir,
}

impl Machine {
    /// `python3` prints `site` (the test's site directory); `python` is the script's body
    /// instead when given.
    fn new(python: Option<&str>) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let cuda = dir.path().join("cuda");
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&cuda).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(dir.path().join("site")).unwrap();
        for name in ["libcuda.so.1", "libcuda.so"] {
            symlink(fake_lib_dir().join(name), cuda.join(name)).unwrap();
        }
        let site = dir.path().join("site");
        let body = python.map_or_else(|| format!("echo {}", site.display()), str::to_owned);
        let py = bin.join("python3");
        std::fs::write(&py, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self { dir }
    }

    fn site(&self) -> PathBuf {
        self.dir.path().join("site")
    }

    /// Puts the fake's libnccl at `rel` under the site directory; returns that path.
    fn install(&self, rel: &str) -> PathBuf {
        self.install_from(&fake_lib_dir().join("libnccl.so.2"), rel)
    }

    /// Links `lib` at `rel` under the site directory, as a wheel would hold it.
    fn install_from(&self, lib: &Path, rel: &str) -> PathBuf {
        let path = self.site().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        symlink(lib, &path).unwrap();
        path
    }

    /// `ncclbench ARGS` on this machine: only its directories on the search paths.
    fn cmd(&self, args: &str) -> Command {
        let mut cmd = ncclbench();
        cmd.args(args.split_whitespace())
            .current_dir(self.dir.path())
            .env("LD_LIBRARY_PATH", self.dir.path().join("cuda"))
            .env("PATH", self.dir.path().join("bin"))
            .env_remove("NCCLBENCH_NCCL_LIB")
            .env_remove("CONDA_PREFIX");
        cmd
    }

    fn run(&self, args: &str) -> Run {
        run(&mut self.cmd(args))
    }
}

/// Whether this machine has a libnccl of its own where the search would find it first.
fn machine_has_nccl() -> bool {
    if Path::new("/usr/local/cuda/lib64/libnccl.so.2").exists() {
        eprintln!("skipped: /usr/local/cuda/lib64 holds a libnccl");
        return true;
    }
    false
}

#[test]
fn a_gpu_machine_without_libnccl_is_an_error_listing_where_it_looked() {
    if machine_has_nccl() {
        return;
    }
    let m = Machine::new(None);
    let r = m.run("all_reduce -b 8 -e 64 -g 1");
    assert_eq!(r.code, Some(2), "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(!r.out.contains("chose host"), "{}", r.out);
    assert!(r.err.contains("cannot find libnccl"), "{}", r.err);
    for place in [
        "the dynamic loader: no libnccl.so.2 or libnccl.so",
        "$CONDA_PREFIX/lib: CONDA_PREFIX is unset",
        "/usr/local/cuda/lib64: no /usr/local/cuda/lib64/libnccl.so.2",
        &format!(
            "python3's nvidia-nccl wheel: no nvidia/nccl/lib/libnccl.so.2 in {}",
            m.site().display()
        ),
        "python3's torch: no torch/lib/libnccl.so.2",
        "--nccl-lib PATH or NCCLBENCH_NCCL_LIB=PATH",
    ] {
        assert!(r.err.contains(place), "missing {place:?} in:\n{}", r.err);
    }
    assert!(r.err.lines().count() <= 8, "a short block:\n{}", r.err);
    assert!(!r.err.contains("panicked"), "{}", r.err);
}

#[test]
fn the_python_wheel_is_found_and_named_in_the_header_and_the_records() {
    let m = Machine::new(None);
    let wheel = m.install("nvidia/nccl/lib/libnccl.so.2");
    let json = m.dir.path().join("out.json");
    let r = m.run(&format!("all_reduce -b 8 -e 64 -g 1 -J {}", json.display()));
    assert_eq!(r.code, Some(0), "{}", r.err);
    let note = format!(
        "# NCCL library found by python3's nvidia-nccl wheel: {}",
        wheel.display()
    );
    assert!(r.out.contains(&note), "{}", r.out);
    assert!(r.out.contains("# NCCL library /"), "{}", r.out);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let nccl = &v["ncclbench"]["environment"]["system"]["nccl"];
    assert_eq!(nccl["found_by"], "python_nvidia_nccl", "{nccl}");
    assert_eq!(nccl["found_as"], wheel.display().to_string());

    let env = m.run("env");
    assert_eq!(env.code, Some(0), "{}", env.err);
    let line = format!(
        "NCCL library found by: python3's nvidia-nccl wheel ({})",
        wheel.display()
    );
    assert!(env.out.contains(&line), "{}", env.out);
}

/// The machine's real `python3` (no stub script): a virtual environment with the fake as its
/// nvidia-nccl wheel's library, as `pip install nvidia-nccl-cu12` (or PyTorch) would leave it.
#[test]
fn the_real_python3_finds_the_wheel_in_a_virtual_environment() {
    if machine_has_nccl() {
        return;
    }
    let m = Machine::new(None);
    let venv = m.dir.path().join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("python3 on PATH (the tests need the machine's real python3)");
    assert!(made.success(), "python3 -m venv: {made}");
    let lib = std::fs::read_dir(venv.join("lib")).unwrap();
    let site = lib
        .map(|e| e.unwrap().path().join("site-packages"))
        .find(|p| p.is_dir())
        .expect("the environment's site-packages");
    let wheel = site.join("nvidia/nccl/lib/libnccl.so.2");
    std::fs::create_dir_all(wheel.parent().unwrap()).unwrap();
    symlink(fake_lib_dir().join("libnccl.so.2"), &wheel).unwrap();

    let r = run(m.cmd("env --json").env("PATH", venv.join("bin")));
    assert_eq!(r.code, Some(0), "{}", r.err);
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(v["nccl"]["found_by"], "python_nvidia_nccl", "{}", r.out);
    assert_eq!(v["nccl"]["found_as"], wheel.display().to_string());
}

#[test]
fn torch_is_looked_at_after_the_wheels() {
    let m = Machine::new(None);
    let torch = m.install("torch/lib/libnccl.so.2");
    let r = m.run("env --json");
    assert_eq!(r.code, Some(0), "{}", r.err);
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(v["nccl"]["found_by"], "python_torch", "{}", r.out);
    assert_eq!(v["nccl"]["found_as"], torch.display().to_string());
}

#[test]
fn a_named_library_that_does_not_load_is_an_error_never_a_fallback() {
    let m = Machine::new(None);
    m.install("nvidia/nccl/lib/libnccl.so.2");
    let missing = m.dir.path().join("nowhere/libnccl.so.2");
    let r = run(m
        .cmd("all_reduce -b 8 -e 64 -g 1")
        .env("NCCLBENCH_NCCL_LIB", &missing));
    assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
    let line = format!(
        "NCCLBENCH_NCCL_LIB {} cannot be used: no such file",
        missing.display()
    );
    assert!(r.err.contains(&line), "{}", r.err);
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);

    let not_nccl = m.dir.path().join("bin/python3");
    let r = m.run(&format!(
        "all_reduce -b 8 -e 64 -g 1 --nccl-lib {}",
        not_nccl.display()
    ));
    assert_eq!(r.code, Some(2), "{}\n{}", r.out, r.err);
    assert!(r.err.contains("--nccl-lib "), "{}", r.err);
    assert!(r.err.contains(" cannot be used: cannot load "), "{}", r.err);

    let env = m.run(&format!("env --json --nccl-lib {}", missing.display()));
    let v: serde_json::Value = serde_json::from_str(&env.out).unwrap();
    assert_eq!(v["nccl"]["path"], serde_json::Value::Null);
    assert!(v["nccl"]["error"]
        .as_str()
        .unwrap()
        .contains("no such file"));
}

#[test]
fn a_slow_python_ends_only_its_step() {
    if machine_has_nccl() {
        return;
    }
    let sleep = ["/bin/sleep", "/usr/bin/sleep"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("a sleep command");
    // The stand-in python sleeps ten minutes; ending within a fifth of that (fifty times the
    // 3 s it is given) shows it was cut off, however loaded the machine is.
    let m = Machine::new(Some(&format!("exec {sleep} 600")));
    let start = std::time::Instant::now();
    let r = m.run("env");
    assert!(start.elapsed().as_secs() < 120, "{:?}", start.elapsed());
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert!(
        r.out
            .contains("python3's packages: python3 did not answer within 3 s"),
        "{}",
        r.out
    );
}

#[test]
fn auto_without_a_cuda_driver_still_chooses_host_with_its_note() {
    if ncclbench::bench::cuda::Driver::load().is_ok() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let m = Machine::new(None);
    m.install("nvidia/nccl/lib/libnccl.so.2");
    let r = run(m
        .cmd("all_reduce -b 8 -e 64 -g 1")
        .env("LD_LIBRARY_PATH", m.dir.path().join("bin")));
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert!(
        r.out
            .contains("# --backend auto chose host: no CUDA driver"),
        "{}",
        r.out
    );
}

/// NCCL never clears its last message: a status that NCCL reports without one must not
/// carry the text of an earlier failure.
#[test]
fn an_old_last_message_is_not_attached_to_a_later_status() {
    let nccl = nccl_sys::Nccl::open(Some(&fake_lib_dir().join("libnccl.so.2"))).unwrap();
    // SAFETY: an unmatched ncclGroupEnd only returns ncclInvalidUsage (and records why).
    let code = unsafe { (nccl.api().ncclGroupEnd)() };
    let first = nccl.check("ncclGroupEnd", code).unwrap_err();
    assert_eq!(first.code, nccl_sys::bindings::ncclInvalidUsage);
    assert!(first.detail.contains("without ncclGroupStart"), "{first}");
    let later = nccl
        .check("ncclCommGetAsyncError", nccl_sys::bindings::ncclInProgress)
        .unwrap_err();
    assert_eq!(later.detail, "", "{later}");
    // The text says whose message it is, since it may be older than the call.
    assert!(
        first.to_string().contains("; NCCL's last message: "),
        "{first}"
    );
}

/// The real older library, `NCCLBENCH_TEST_NCCL_LIB_OLD`; required under `CI=true`.
fn old_lib() -> Option<PathBuf> {
    match std::env::var_os("NCCLBENCH_TEST_NCCL_LIB_OLD") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but NCCLBENCH_TEST_NCCL_LIB_OLD is unset (.ci/run fetches it)")
        }
        _ => {
            eprintln!("skipped: NCCLBENCH_TEST_NCCL_LIB_OLD is unset (scripts/fetch-nccl DIR nvidia-nccl-cu11==2.21.5)");
            None
        }
    }
}

/// NVIDIA's 2.21.5 in the wheel's own layout: found by the python step, its true version,
/// and exactly the entry points newer than it reported missing (what the fake, which exports
/// every symbol at any impersonated version, cannot show).
#[test]
fn the_real_old_library_is_found_in_its_wheel_layout_with_its_gaps_named() {
    let Some(old) = old_lib() else { return };
    if machine_has_nccl() {
        return;
    }
    let m = Machine::new(None);
    let wheel = m.install_from(&old, "nvidia/nccl/lib/libnccl.so.2");
    let r = m.run("env --json");
    assert_eq!(r.code, Some(0), "{}", r.err);
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    let nccl = &v["nccl"];
    assert_eq!(nccl["found_by"], "python_nvidia_nccl", "{nccl}");
    assert_eq!(nccl["found_as"], wheel.display().to_string());
    assert_eq!(
        nccl["path"],
        std::fs::canonicalize(&old).unwrap().display().to_string()
    );
    assert_eq!(nccl["version"], "2.21.5");
    assert_eq!(nccl["version_code"], 22105);
    assert_eq!(
        nccl["missing_optional"],
        serde_json::json!([
            "ncclAlltoAll",
            "ncclGather",
            "ncclScatter",
            "ncclCommWindowRegister",
            "ncclCommWindowDeregister"
        ])
    );
}
