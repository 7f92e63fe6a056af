//! Which libnccl a run loads: the search order, as data ([`Step`]) and as one function
//! ([`search`]) over an injectable view of the machine ([`Probe`]), so the order is tested
//! without depending on what this machine has installed.
//!
//! The order: `--nccl-lib`, then `NCCLBENCH_NCCL_LIB` (either one, when given, is the only
//! candidate: a named library that does not load is an error, never replaced by a library
//! found later), then the dynamic loader (`libnccl.so.2`, `libnccl.so`), `$CONDA_PREFIX/lib`,
//! `/usr/local/cuda/lib64`, and the Python packages of the `python3` on `PATH`
//! (`nvidia/nccl/lib/` of the nvidia-nccl wheels in every site directory, then `torch/lib/` of
//! older torch builds). The first candidate that exists is the answer: one that exists but does
//! not load stops the search with its error, so a broken install is reported, not skipped.

pub mod python;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::dl::Miss;
use crate::LoadError;

/// The environment variable naming the libnccl to load when `--nccl-lib` is not given.
pub const LIB_ENV: &str = "NCCLBENCH_NCCL_LIB";

/// What the default search asks the dynamic loader for, in order.
pub const DEFAULT_SONAMES: [&str; 2] = ["libnccl.so.2", "libnccl.so"];

/// Where the CUDA toolkit installs its libraries (NCCL's own packages put it there too).
pub const CUDA_LIB_DIR: &str = "/usr/local/cuda/lib64";

/// The library file inside a site directory for the nvidia-nccl-cu11/-cu12/-cu13 wheels.
pub const WHEEL_LIB: &str = "nvidia/nccl/lib/libnccl.so.2";

/// The library file inside a site directory for torch builds that bundle NCCL.
pub const TORCH_LIB: &str = "torch/lib/libnccl.so.2";

/// One step of the search: how a library was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// `--nccl-lib PATH`.
    CommandLine,
    /// [`LIB_ENV`].
    Environment,
    /// The dynamic loader's own search for [`DEFAULT_SONAMES`] (`LD_LIBRARY_PATH`, the cache).
    DynamicLoader,
    /// `$CONDA_PREFIX/lib/libnccl.so.2`.
    CondaPrefix,
    /// `/usr/local/cuda/lib64/libnccl.so.2`.
    CudaToolkit,
    /// [`WHEEL_LIB`] in a site directory of `python3`.
    PythonWheel,
    /// [`TORCH_LIB`] in a site directory of `python3`.
    PythonTorch,
}

impl Step {
    /// Every step, in search order.
    pub const ORDER: [Step; 7] = [
        Step::CommandLine,
        Step::Environment,
        Step::DynamicLoader,
        Step::CondaPrefix,
        Step::CudaToolkit,
        Step::PythonWheel,
        Step::PythonTorch,
    ];

    /// A stable identifier, for JSON (`"python_nvidia_nccl"`).
    pub fn key(self) -> &'static str {
        match self {
            Step::CommandLine => "command_line",
            Step::Environment => "environment",
            Step::DynamicLoader => "dynamic_loader",
            Step::CondaPrefix => "conda_prefix",
            Step::CudaToolkit => "cuda_toolkit",
            Step::PythonWheel => "python_nvidia_nccl",
            Step::PythonTorch => "python_torch",
        }
    }

    /// How a reader is told about the step (`"python3's nvidia-nccl wheel"`).
    pub fn label(self) -> &'static str {
        match self {
            Step::CommandLine => "--nccl-lib",
            Step::Environment => LIB_ENV,
            Step::DynamicLoader => "the dynamic loader",
            Step::CondaPrefix => "$CONDA_PREFIX/lib",
            Step::CudaToolkit => CUDA_LIB_DIR,
            Step::PythonWheel => "python3's nvidia-nccl wheel",
            Step::PythonTorch => "python3's torch",
        }
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// What one candidate asks the loader for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Exactly this file.
    File(PathBuf),
    /// A soname, resolved by the dynamic loader.
    Soname(&'static str),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::File(p) => write!(f, "{}", p.display()),
            Target::Soname(s) => f.write_str(s),
        }
    }
}

/// The library the search settled on: the step and what that step asked for (the path as
/// found, before symlinks are resolved: `.../nvidia/nccl/lib/libnccl.so.2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// How it was found.
    pub step: Step,
    /// What was loaded.
    pub target: Target,
}

/// The machine, as the search sees it; [`crate::Nccl::find`] uses the real one.
pub(crate) trait Probe {
    /// What a successful load yields.
    type Lib;
    /// An environment variable.
    fn var(&self, name: &str) -> Option<OsString>;
    /// `python3`'s site directories, or why there are none.
    fn site_dirs(&self) -> Result<Vec<PathBuf>, String>;
    /// Loads one candidate.
    fn load(&self, target: &Target) -> Result<Self::Lib, Miss>;
}

/// Runs the search: `cli` is `--nccl-lib`. Returns the first library that loads and how it
/// was found, or an error naming the failing candidate or listing every place looked in.
pub(crate) fn search<P: Probe>(
    probe: &P,
    cli: Option<&Path>,
) -> Result<(P::Lib, Found), LoadError> {
    let explicit = match cli {
        Some(path) => Some((Step::CommandLine, path.to_path_buf())),
        None => probe
            .var(LIB_ENV)
            .filter(|v| !v.is_empty())
            .map(|v| (Step::Environment, PathBuf::from(v))),
    };
    if let Some((step, path)) = explicit {
        let target = Target::File(path.clone());
        return match probe.load(&target) {
            Ok(lib) => Ok((lib, Found { step, target })),
            Err(miss) => Err(LoadError::Requested {
                step,
                path: path.display().to_string(),
                reason: match miss {
                    Miss::Absent => "no such file".to_owned(),
                    Miss::Broken(e) => e.to_string(),
                },
            }),
        };
    }
    search_default(probe)
}

/// The search after the explicit steps: loader, conda, CUDA toolkit, python packages.
pub(crate) fn search_default<P: Probe>(probe: &P) -> Result<(P::Lib, Found), LoadError> {
    let mut looked = Vec::new();
    let try_all =
        |step: Step, targets: Vec<Target>| -> Result<Option<(P::Lib, Found)>, LoadError> {
            for target in targets {
                match probe.load(&target) {
                    Ok(lib) => return Ok(Some((lib, Found { step, target }))),
                    Err(Miss::Absent) => {}
                    Err(Miss::Broken(error)) => {
                        return Err(LoadError::Broken {
                            step,
                            error: Box::new(error),
                        })
                    }
                }
            }
            Ok(None)
        };
    let sonames = DEFAULT_SONAMES.iter().map(|s| Target::Soname(s)).collect();
    if let Some(found) = try_all(Step::DynamicLoader, sonames)? {
        return Ok(found);
    }
    looked.push(format!(
        "{}: no {}",
        Step::DynamicLoader,
        DEFAULT_SONAMES.join(" or ")
    ));

    match probe.var("CONDA_PREFIX").filter(|v| !v.is_empty()) {
        Some(prefix) => {
            let file = Path::new(&prefix).join("lib/libnccl.so.2");
            if let Some(found) = try_all(Step::CondaPrefix, vec![Target::File(file.clone())])? {
                return Ok(found);
            }
            looked.push(format!("{}: no {}", Step::CondaPrefix, file.display()));
        }
        None => looked.push(format!("{}: CONDA_PREFIX is unset", Step::CondaPrefix)),
    }

    let file = Path::new(CUDA_LIB_DIR).join("libnccl.so.2");
    if let Some(found) = try_all(Step::CudaToolkit, vec![Target::File(file.clone())])? {
        return Ok(found);
    }
    looked.push(format!("{}: no {}", Step::CudaToolkit, file.display()));

    match probe.site_dirs() {
        Ok(dirs) => {
            for (step, rel) in [
                (Step::PythonWheel, WHEEL_LIB),
                (Step::PythonTorch, TORCH_LIB),
            ] {
                let targets = dirs.iter().map(|d| Target::File(d.join(rel))).collect();
                if let Some(found) = try_all(step, targets)? {
                    return Ok(found);
                }
                let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
                looked.push(match shown.is_empty() {
                    true => format!("{step}: python3 printed no site directory"),
                    false => format!("{step}: no {rel} in {}", shown.join(", ")),
                });
            }
        }
        Err(why) => looked.push(format!("python3's packages: {why}")),
    }
    Err(LoadError::NotFound { tried: looked })
}

#[cfg(test)]
mod tests;
