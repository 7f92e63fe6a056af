//! NCCL's own evidence during a benchmark run (`--tuning`, `--show-algo`, `--nvtx`).
//!
//! [`Session::start`] sets NCCL's debug environment before the library is loaded ([`mod@env`]):
//! INFO level, INIT,ENV,GRAPH,TUNING,COLL added to the user's subsystems, and a per-process
//! `nccl-debug.%h.%p.log` in the output directory. As the run's [`Observer`], the session
//! hears every call the harness makes ([`OpKey`]); after each measurement it reads the lines
//! NCCL added to this process's file ([`tail`]) and joins rank 0's decisions to the calls by
//! order and bytes ([`join`]), which becomes the measurement's [`Tuning`]. At the end it
//! reports how the log matched, the opCount mapping included ([`TuningReport`]). With
//! `--nvtx` it also opens an NVTX range per size, placement and phase ([`nvtx`]).

pub mod env;
pub mod join;
pub mod nvtx;
pub mod tail;

use crate::bench::backend::BackendInfo;
use crate::bench::observe::{Observer, OpKey};
use crate::config::RunConfig;
use crate::core::error::Error;
use crate::logs::NcclVersion;
use crate::result::tuning::{Tuning, TuningReport};
use crate::result::{Placement, RowKey};
use join::Joiner;
use nvtx::Nvtx;
use std::path::PathBuf;
use tail::LogTail;

/// The capture and join of one run.
pub struct Session {
    pattern: Option<String>,
    notes: Vec<String>,
    tail: Option<LogTail>,
    joiner: Option<Joiner>,
    nvtx: Option<Nvtx>,
    read_errors: u64,
}

impl Session {
    /// Before the NCCL library is loaded: sets the debug environment for `--tuning` and opens
    /// NVTX for `--nvtx`. `None` when neither is asked for.
    pub fn start(cfg: &RunConfig) -> Option<Session> {
        let opts = cfg.tuning;
        if !opts.capture && !opts.nvtx {
            return None;
        }
        let mut s = Session {
            pattern: None,
            notes: Vec::new(),
            tail: None,
            joiner: None,
            nvtx: opts.nvtx.then(Nvtx::open),
            read_errors: 0,
        };
        if opts.capture {
            let dir = env::out_dir(cfg.csv.as_deref(), cfg.json.as_deref());
            let plan = env::plan(|k| std::env::var(k).ok(), &dir);
            for (k, v) in &plan.set {
                std::env::set_var(k, v);
            }
            s.notes = plan.notes;
            s.pattern = Some(plan.file_pattern);
        }
        Some(s)
    }

    /// Once the backend is open: the header lines, and the joiner set up for rank 0's
    /// communicator. A backend without NCCL cannot give NCCL's log (usage error).
    pub fn begin(&mut self, info: &BackendInfo) -> Result<Vec<String>, Error> {
        let mut lines = std::mem::take(&mut self.notes);
        if let Some(n) = &self.nvtx {
            if !n.loaded() {
                lines.push("# --nvtx: libnvToolsExt not found; no NVTX ranges".into());
            }
        }
        let Some(pattern) = &self.pattern else {
            return Ok(lines);
        };
        if info.nccl_library.is_none() {
            return Err(Error::usage(format!(
                "--tuning reads NCCL's debug log, but the {} backend runs without NCCL",
                info.name
            )));
        }
        let path = env::expand(
            pattern,
            &crate::core::host::gethostname_short(),
            std::process::id(),
        );
        lines.push(format!(
            "# --tuning: NCCL debug log (INIT,ENV,GRAPH,TUNING,COLL) in {}",
            path.display()
        ));
        let version = info.nccl_library.and_then(version_of_code);
        if let Some(v) = version.filter(|v| (v.major, v.minor) < (2, 20)) {
            lines.push(format!(
                "# --tuning: NCCL {v} prints no per-call decision lines (2.20 and later do); \
                 the algo/proto/channels fields stay empty"
            ));
        }
        if info.first_rank == 0 {
            let mut j = Joiner::new(info.nranks, Some(std::process::id()));
            if let Some(v) = version {
                j.assume_version(v);
            }
            self.joiner = Some(j);
            self.tail = Some(LogTail::new(path));
        }
        Ok(lines)
    }

    /// The log this process reads, once known.
    pub fn log_path(&self) -> Option<PathBuf> {
        self.tail.as_ref().map(|t| t.path().to_path_buf())
    }

    /// What this process's NCCL log shows about the topology so far
    /// ([`crate::logs::topology::from_log_file`]); `None` without a log (not `--tuning`, not
    /// the process of rank 0) or when it holds no init-time line yet.
    pub fn topology(&self) -> Option<crate::logs::topology::TopologySummary> {
        crate::logs::topology::from_log_file(self.tail.as_ref()?.path())
    }

    fn read_log(&mut self) {
        let (Some(tail), Some(joiner)) = (self.tail.as_mut(), self.joiner.as_mut()) else {
            return;
        };
        if tail.read(&mut |r| joiner.record(&r)).is_err() {
            self.read_errors += 1;
        }
    }
}

/// `NCCL_VERSION_CODE` (`22703`, or `2703` before 2.9) as a version.
pub fn version_of_code(code: i32) -> Option<NcclVersion> {
    let code = u32::try_from(code).ok()?;
    let (major, minor, patch) = if code >= 10000 {
        (code / 10000, code / 100 % 100, code % 100)
    } else {
        (code / 1000, code / 100 % 10, code % 100)
    };
    Some(NcclVersion {
        major,
        minor,
        patch,
    })
}

impl Observer for Session {
    fn call(&mut self, op: &OpKey) {
        if let Some(j) = self.joiner.as_mut() {
            j.call(op);
        }
    }

    fn range_push(&mut self, name: &str) {
        if let Some(n) = &self.nvtx {
            n.push(name);
        }
    }

    fn range_pop(&mut self) {
        if let Some(n) = &self.nvtx {
            n.pop();
        }
    }

    fn measured(&mut self, _key: &RowKey, _placement: Placement) -> Option<Tuning> {
        self.joiner.as_ref()?;
        self.read_log();
        self.joiner.as_mut().map(Joiner::take_measurement)
    }

    fn report(&mut self) -> Option<TuningReport> {
        self.read_log();
        let tail = self.tail.as_ref()?;
        let j = self.joiner.as_ref()?;
        let mut notes = Vec::new();
        if !tail.seen() {
            notes.push(format!(
                "--tuning: {} was never written (NCCL could not open it, or logs elsewhere)",
                tail.path().display()
            ));
        }
        if self.read_errors > 0 {
            notes.push(format!(
                "--tuning: reading the log failed {} time(s)",
                self.read_errors
            ));
        }
        Some(TuningReport {
            log: tail.path().display().to_string(),
            nccl_version: j.version().map(|v| v.to_string()),
            calls: j.calls,
            decisions: j.decisions,
            joined: j.joined,
            coll_matched: j.coll_matched,
            coll_mismatched: j.coll_mismatched,
            op_count: j.op_count_text(),
            notes,
            topology: crate::logs::topology::from_log_file(tail.path()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_codes_of_both_schemes_decode() {
        let v = version_of_code(22703).unwrap();
        assert_eq!((v.major, v.minor, v.patch), (2, 27, 3));
        let v = version_of_code(2708).unwrap();
        assert_eq!((v.major, v.minor, v.patch), (2, 7, 8));
        assert!(version_of_code(-1).is_none());
    }
}
