//! The benchmark flags `accept` and `locate` take for every run they start (`--backend`, `-t`,
//! `-g`, `--nccl-lib`, `--devices`, and `accept`'s `--redact`), checked once by the CLI as a
//! benchmark's flags are, and the configuration every such run starts from.

use super::{BackendChoice, RunConfig};
use std::path::PathBuf;

/// The benchmark flags of `accept` or `locate`, as given, and the run they make.
#[derive(Debug, Clone, PartialEq)]
pub struct StageBase {
    /// nccl-tests' defaults with the flags below applied, validated as a benchmark's own
    /// command line is; a stage or a locate job changes only what it sets itself.
    pub config: RunConfig,
    /// The flags given, kept to write a stage's command line for rerunning it by hand.
    pub given: GivenFlags,
}

/// Which benchmark flags were given, and their values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GivenFlags {
    /// `--backend`.
    pub backend: Option<BackendChoice>,
    /// `-t`.
    pub nthreads: Option<usize>,
    /// `-g`.
    pub ngpus: Option<usize>,
    /// `--nccl-lib`.
    pub nccl_lib: Option<PathBuf>,
    /// `--devices`.
    pub devices: Option<Vec<usize>>,
    /// `--redact`.
    pub redact: bool,
}

impl GivenFlags {
    /// The flags as a benchmark command line spells them, in a fixed order.
    pub fn args(&self) -> Vec<String> {
        let mut a = Vec::new();
        let mut flag = |f: &str, v: Option<String>| {
            if let Some(v) = v {
                a.extend([f.to_string(), v]);
            }
        };
        flag("--backend", self.backend.map(|b| b.name().to_string()));
        flag("-t", self.nthreads.map(|n| n.to_string()));
        flag("-g", self.ngpus.map(|n| n.to_string()));
        flag(
            "--nccl-lib",
            self.nccl_lib.as_ref().map(|p| p.display().to_string()),
        );
        flag(
            "--devices",
            self.devices.as_ref().map(|d| {
                d.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            }),
        );
        if self.redact {
            a.push("--redact".into());
        }
        a
    }
}
