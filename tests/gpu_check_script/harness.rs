//! The harness of the GPU-check tests: runs scripts/gpu-check.sh on the fake NCCL with small
//! sizes and the stand-in CuPy and torch (tests/gpu_check_script/py, ctypes over fake-nccl),
//! unpacks what it left and reads its step manifest.

use crate::support::bin::{root, EXE};
use crate::support::fake_nccl::fake_env;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One line of the check's step manifest (raw/steps.tsv in results.tar.gz).
pub struct Step {
    pub name: String,
    pub tool: String,
    pub kind: String,
    pub coll: String,
    pub status: String,
    pub rc: String,
    pub limit_s: String,
    pub note: String,
}

/// What one run of the script left: exit code, OUTDIR's files, the unpacked raw folder.
pub struct Check {
    pub code: Option<i32>,
    pub files: BTreeMap<String, u64>,
    pub summary: String,
    pub raw: PathBuf,
    pub steps: Vec<Step>,
    pub dir: tempfile::TempDir,
}

impl Check {
    pub fn named(&self, prefix: &str) -> Vec<&Step> {
        self.steps
            .iter()
            .filter(|s| s.name.starts_with(prefix))
            .collect()
    }
    pub fn raw_text(&self, rel: &str) -> String {
        fs::read_to_string(self.raw.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }
}

/// A folder of `<coll>_perf` links to the nccl-tests stand-in, as NCCL_TESTS_BIN.
pub fn standin_bin(dir: &Path) -> PathBuf {
    let bin = dir.join("nccl-tests-bin");
    fs::create_dir_all(&bin).unwrap();
    for c in [
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "broadcast",
        "alltoall",
        "sendrecv",
    ] {
        let target = root().join("tests/support/nccl_tests_standin.py");
        std::os::unix::fs::symlink(target, bin.join(format!("{c}_perf"))).unwrap();
    }
    bin
}

/// Runs the script with small sizes; `setup` adds settings.
pub fn check(setup: impl FnOnce(&Path, &mut Command)) -> Check {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut cmd = Command::new(root().join("scripts/gpu-check.sh"));
    // The check's own settings come from each test alone, never from the caller's environment.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if [
            "GPU_CHECK_",
            "NCCL_TESTS_",
            "FAKE_NCCL_TESTS_",
            "PYTHON",
            "NCCL_DEBUG",
        ]
        .iter()
        .any(|p| k.starts_with(p))
        {
            cmd.env_remove(&*k);
        }
    }
    fake_env(&mut cmd)
        .env("FAKE_CUDA_DEVICES", "1")
        .env("GPU_CHECK_SMALL_MAX", "4K")
        .env("GPU_CHECK_MAX", "64K")
        .env("GPU_CHECK_CHECK_MAX", "4K")
        .env("GPU_CHECK_ITERS", "50")
        .env("PYTHONPATH", root().join("tests/gpu_check_script/py"))
        .env("TMPDIR", dir.path());
    setup(dir.path(), &mut cmd);
    let o = cmd
        .arg(&out)
        .arg(EXE)
        .output()
        .expect("run scripts/gpu-check.sh");
    let summary = fs::read_to_string(out.join("summary.txt")).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let mut files = BTreeMap::new();
    for e in fs::read_dir(&out).unwrap() {
        let e = e.unwrap();
        files.insert(
            e.file_name().to_string_lossy().into_owned(),
            e.metadata().unwrap().len(),
        );
    }
    let unpacked = dir.path().join("unpacked");
    fs::create_dir_all(&unpacked).unwrap();
    let tar = Command::new("tar")
        .arg("xzf")
        .arg(out.join("results.tar.gz"))
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(
        tar.success(),
        "results.tar.gz does not unpack\n{summary}\n{stderr}"
    );
    let raw = unpacked.join("raw");
    let manifest = fs::read_to_string(raw.join("steps.tsv")).expect("raw/steps.tsv packed");
    let steps = manifest
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 10, "manifest line {l:?}");
            let s = |i: usize| f[i].to_string();
            Step {
                name: s(0),
                tool: s(1),
                kind: s(2),
                coll: s(3),
                status: s(4),
                rc: s(5),
                limit_s: s(7),
                note: s(9),
            }
        })
        .collect();
    assert!(files.len() <= 8, "{files:?}");
    assert!(files.values().all(|&n| n <= 16 << 20), "{files:?}");
    Check {
        code: o.status.code(),
        files,
        summary,
        raw,
        steps,
        dir,
    }
}

/// The data rows of an nccl-tests-format table: size -> out-of-place time (us).
pub fn times(text: &str) -> BTreeMap<u64, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.first()?.parse().ok()?, f.get(5)?.parse().ok()?))
        })
        .collect()
}

/// `scripts/gpu-check.sh --plan` with `envs`: each step's (bound in s, name), and the total line.
pub fn plan(envs: &[(&str, &str)]) -> (Vec<(u64, String)>, String) {
    let mut cmd = Command::new(root().join("scripts/gpu-check.sh"));
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("GPU_CHECK_") || k == "NCCL_TESTS_BIN" {
            cmd.env_remove(k);
        }
    }
    let o = cmd
        .arg("--plan")
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let steps = text
        .lines()
        .filter_map(|l| {
            let (n, name) = l.trim_start().split_once(" s  ")?;
            Some((n.parse().ok()?, name.to_string()))
        })
        .collect();
    let total = text
        .lines()
        .find(|l| l.starts_with("total: "))
        .unwrap_or("")
        .to_string();
    (steps, total)
}

/// The median of `xs`.
pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}
