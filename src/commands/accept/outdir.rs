//! The output directory of an acceptance run: made new (or taken empty, or with `--force` one
//! holding an earlier run, whose files go) with the profile and environment in it before any
//! stage, and the report files written into it at the end; the baselines checked readable
//! before any stage; and how result directories given as a baseline or to `--make-profile`
//! are read.

use super::manifest;
use super::Acceptance;
use crate::accept::model::{AcceptReport, Stage};
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
    /// wrote, whose recorded files are removed), with the record of what this run will write,
    /// the profile and the environment in it. Decided from the whole directory before anything
    /// in it is touched.
    pub(super) fn prepare_dir(&self) -> Result<(), Error> {
        self.check_baselines()?;
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        let refuse =
            |why: String| Error::usage(format!("accept: --out {} {why}", self.out.display()));
        match std::fs::symlink_metadata(&self.out) {
            Ok(md) if !md.is_dir() => {
                return Err(refuse("is not a directory; give a new directory".into()))
            }
            Ok(_) if self.cfg.force => {
                let earlier = manifest::earlier_run(&self.out).map_err(|why| {
                    refuse(format!(
                        "is not only an earlier acceptance run: {why}; nothing was removed"
                    ))
                })?;
                manifest::remove(&earlier).map_err(Error::Output)?;
            }
            Ok(_) => {
                let mut entries = std::fs::read_dir(&self.out).map_err(io(&self.out))?;
                if entries.next().is_some() {
                    return Err(refuse(
                        "is not empty; give a new directory, or --force to replace an earlier \
                         acceptance run there (results are never overwritten otherwise)"
                            .into(),
                    ));
                }
            }
            Err(_) => {}
        }
        for sub in ["correctness", "performance"] {
            let d = self.out.join(sub);
            std::fs::create_dir_all(&d).map_err(io(&d))?;
        }
        self.manifest
            .record(self.planned_files())
            .map_err(Error::Output)?;
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

    /// Every file this run may write whose name is known before the first stage: the profile,
    /// the environment, each stage's table, CSV and sidecar, the locate stage's files and the
    /// report. (The baseline report's files are recorded once written.)
    fn planned_files(&self) -> Vec<String> {
        let mut files: Vec<String> = [
            "profile.toml",
            "environment.json",
            "accept.txt",
            "accept.json",
            "junit.xml",
        ]
        .map(String::from)
        .to_vec();
        for stage in [Stage::Correctness, Stage::Performance] {
            for c in &self.profile.suite.collectives {
                let stem = format!("{}/{}", stage.name(), c.name());
                files.extend([".txt", ".csv", ".csv.env.json"].map(|ext| format!("{stem}{ext}")));
            }
        }
        files.extend(
            ["locate.txt", "locate.json", "hostfile"]
                .map(|f| format!("{}/{f}", super::locate_stage::DIR)),
        );
        files
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
        // The table goes to stdout first: a report file that cannot be written (a full disk)
        // must not cost the user the verdict too.
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        let mut failed = None;
        for (name, body) in [
            ("accept.txt", text.clone()),
            ("accept.json", mask(report::json(report))),
            ("junit.xml", mask(report::junit(report))),
        ] {
            let p = self.out.join(name);
            if let Err(source) = write_whole(&p, body.as_bytes()) {
                failed.get_or_insert(Error::Io { path: p, source });
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(report.verdict.exit_status)
    }
}

/// Writes `path` whole or not at all: a temporary file beside it, renamed over it once every
/// byte is written, removed when a write fails (a full disk).
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = crate::bench::output::files::with_suffix(path, ".tmp");
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
