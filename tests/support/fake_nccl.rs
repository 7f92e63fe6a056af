//! The fake-nccl test double (libcuda + libnccl on host memory) for integration tests: built
//! once per test process into its own target directory (so it never waits on, or disturbs,
//! the outer build), then linked as `libcuda.so.1`, `libcuda.so` and `libnccl.so.2` in
//! `target/fake-nccl/lib`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The sonames the fake stands in for.
pub const SONAMES: [&str; 3] = ["libcuda.so.1", "libcuda.so", "libnccl.so.2"];

/// The directory holding the fake's sonames; builds it on first use. A failed build panics
/// with cargo's stderr.
pub fn fake_lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(build)
}

fn build() -> PathBuf {
    let root = super::bin::root();
    let target = root.join("target").join("fake-nccl");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root)
        .args([
            "build",
            "--offline",
            "--locked",
            "-p",
            "fake-nccl",
            "--target-dir",
        ])
        .arg(&target)
        .output()
        .expect("could not run cargo to build fake-nccl");
    if !out.status.success() {
        panic!(
            "building fake-nccl failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let so = target.join("debug").join("libfake_nccl.so");
    assert!(
        so.is_file(),
        "cargo built fake-nccl but {} is missing",
        so.display()
    );
    let lib = target.join("lib");
    std::fs::create_dir_all(&lib).expect("create target/fake-nccl/lib");
    for name in SONAMES {
        // Made under a unique name and renamed over the old link: atomic even when several
        // test processes do it at once.
        let tmp = lib.join(format!(".{name}.{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&so, &tmp).expect("symlink the fake");
        std::fs::rename(&tmp, lib.join(name)).expect("install the fake's symlink");
    }
    lib
}

/// Makes `cmd` load the fake: its directory first on `LD_LIBRARY_PATH`, and
/// `NCCLBENCH_NCCL_LIB` naming its `libnccl.so.2`.
pub fn fake_env(cmd: &mut Command) -> &mut Command {
    let dir = fake_lib_dir();
    let mut paths = vec![dir.to_path_buf()];
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        paths.extend(std::env::split_paths(&old));
    }
    let joined = std::env::join_paths(paths).expect("library paths without ':'");
    cmd.env("LD_LIBRARY_PATH", joined)
        .env("NCCLBENCH_NCCL_LIB", dir.join("libnccl.so.2"))
}

/// `ncclbench <args>` on the fake with extra environment variables; the caller's NCCL debug
/// settings are dropped (they would add lines to the output under test).
pub fn fake_command(args: &str, envs: &[(&str, &str)]) -> Command {
    let mut cmd = crate::support::bin::command(args);
    fake_env(&mut cmd);
    for k in ["NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"] {
        cmd.env_remove(k);
    }
    cmd.envs(envs.iter().copied());
    cmd
}

/// Runs `ncclbench <args>` on the fake with extra environment variables.
pub fn run_fake(args: &str, envs: &[(&str, &str)]) -> crate::support::bin::Run {
    crate::support::bin::run(&mut fake_command(args, envs))
}

/// Data rows of a text table, split on whitespace.
pub fn table_rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// The environment that makes every process of an `mpirun` job load the fake (8 devices per
/// process, so 8 one-GPU processes of one host each have their own), with its rendezvous
/// directories under `rdv`.
#[cfg(feature = "mpi")]
pub fn mpi_env(rdv: &Path) -> Vec<(&'static str, String)> {
    let dir = fake_lib_dir();
    vec![
        ("LD_LIBRARY_PATH", dir.display().to_string()),
        (
            "NCCLBENCH_NCCL_LIB",
            dir.join("libnccl.so.2").display().to_string(),
        ),
        ("FAKE_CUDA_DEVICES", "8".to_string()),
        ("FAKE_NCCL_RENDEZVOUS_DIR", rdv.display().to_string()),
    ]
}
