//! The output directory of an acceptance run: made new (or taken empty, or with `--force` one
//! holding an earlier run, whose files go) with the profile and environment in it before any
//! stage, and the report files written into it at the end; the baselines checked readable
//! before any stage; and how result directories given as a baseline or to `--make-profile`
//! are read.

use super::Acceptance;
use crate::accept::model::AcceptReport;
use crate::accept::report;
use crate::core::error::Error;
use crate::core::files::{dir_files, Take};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The result files of runs given as files or directories. A directory holding `performance/`
/// (an accept output directory) stands for that; a directory stands for its CSV files when it
/// has any, since a stage's text table holds the same rows as its CSV and reading both would
/// count every sample twice. Files are kept as given.
pub fn result_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let dir = if p.join("performance").is_dir() {
            p.join("performance")
        } else {
            p.clone()
        };
        let csvs = dir_files(&dir, Take::Extension("csv")).unwrap_or_default();
        if csvs.is_empty() {
            out.push(dir);
        } else {
            out.extend(csvs);
        }
    }
    out
}

/// What an acceptance run writes into its output directory.
const EARLIER_RUN_FILES: [&str; 8] = [
    "correctness",
    "performance",
    "baseline",
    "profile.toml",
    "environment.json",
    "accept.txt",
    "accept.json",
    "junit.xml",
];

impl Acceptance<'_> {
    /// Every baseline (`--baseline`, else the profile's) can be read, found before the first
    /// stage rather than after the whole suite.
    fn check_baselines(&self) -> Result<(), Error> {
        let (flag, paths) = if self.cfg.baseline.is_empty() {
            let paths = self.profile.baseline.as_ref().map(|b| b.paths.clone());
            ("the profile's baseline", paths.unwrap_or_default())
        } else {
            ("--baseline", self.cfg.baseline.clone())
        };
        for p in &paths {
            let readable = if p.is_dir() {
                std::fs::read_dir(p).map(drop)
            } else {
                std::fs::File::open(p).map(drop)
            };
            readable.map_err(|e| Error::usage(format!("accept: {flag} {}: {e}", p.display())))?;
        }
        Ok(())
    }

    /// The output directory, new or empty (or, with `--force`, one an earlier acceptance run
    /// wrote, whose files are removed), with the profile and the environment in it.
    pub(super) fn prepare_dir(&self) -> Result<(), Error> {
        self.check_baselines()?;
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        if self.out.exists() {
            if self.cfg.force {
                self.remove_earlier_run().map_err(io(&self.out))?;
            }
            let mut entries = std::fs::read_dir(&self.out).map_err(io(&self.out))?;
            if let Some(entry) = entries.next() {
                let hint = if self.cfg.force {
                    format!(
                        "it holds {}, which no acceptance run wrote",
                        entry.map_or_else(|_| "a file".into(), |e| e.path().display().to_string())
                    )
                } else {
                    "give a new directory, or --force to replace an earlier acceptance run \
                     there (results are never overwritten otherwise)"
                        .to_string()
                };
                return Err(Error::usage(format!(
                    "accept: --out {} is not empty; {hint}",
                    self.out.display()
                )));
            }
        }
        for sub in ["correctness", "performance"] {
            let d = self.out.join(sub);
            std::fs::create_dir_all(&d).map_err(io(&d))?;
        }
        let p = self.out.join("profile.toml");
        std::fs::write(&p, &self.profile.text).map_err(io(&p))?;
        let mut env =
            crate::bench::environment::collect(self.cfg.flags.base.config.nccl_lib.as_deref());
        if self.cfg.redact {
            crate::result::environment::redact_report(
                &mut env,
                &crate::bench::environment::process_redactor(),
            );
        }
        let p = self.out.join("environment.json");
        let text = serde_json::to_string_pretty(&env).map_err(std::io::Error::from);
        std::fs::write(&p, text.map_err(io(&p))? + "\n").map_err(io(&p))?;
        Ok(())
    }

    /// `--force`: removes what an acceptance run writes into its directory (and nothing
    /// else, so a mistyped `--out $HOME` loses no file of the user's).
    fn remove_earlier_run(&self) -> std::io::Result<()> {
        for name in EARLIER_RUN_FILES {
            let p = self.out.join(name);
            match std::fs::symlink_metadata(&p) {
                Ok(md) if md.is_dir() => std::fs::remove_dir_all(&p)?,
                Ok(_) => std::fs::remove_file(&p)?,
                Err(_) => {}
            }
        }
        Ok(())
    }

    /// Writes the report files and prints the table; returns the verdict's status.
    pub(super) fn write_report(&self, report: &AcceptReport) -> Result<u8, Error> {
        let redactor = self
            .cfg
            .redact
            .then(crate::bench::environment::process_redactor);
        let mask = |s: String| match &redactor {
            Some(r) => r.text(&s),
            None => s,
        };
        let text = mask(report::text(report));
        for (name, body) in [
            ("accept.txt", text.clone()),
            ("accept.json", mask(report::json(report))),
            ("junit.xml", mask(report::junit(report))),
        ] {
            let p = self.out.join(name);
            std::fs::write(&p, body).map_err(|source| Error::Io { path: p, source })?;
        }
        // The files hold the verdict; a reader of stdout that went away changes no status.
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        Ok(report.verdict.exit_status)
    }
}
