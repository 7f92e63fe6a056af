//! The header facts of a run and the thresholds it reads from the environment.

use crate::bench::backend::Backend;
use crate::bench::environment::recorded_env;
use crate::bench::runner::local_time;
use crate::config::RunConfig;
use crate::core::error::Error;
use crate::result::RunMeta;

/// `NCCL_TESTS_MIN_BW` in GB/s; unset, empty or -1 means no check (as nccl-tests).
pub(super) fn min_bw_threshold() -> Result<Option<f64>, Error> {
    match std::env::var("NCCL_TESTS_MIN_BW") {
        Err(_) => Ok(None),
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(-1.0) => Ok(None),
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
            _ => Err(Error::usage(format!(
                "NCCL_TESTS_MIN_BW={v:?} is not a bandwidth in GB/s"
            ))),
        },
    }
}

/// The header facts of a run.
pub(super) fn run_meta(cfg: &RunConfig, backend: &dyn Backend) -> RunMeta {
    let info = backend.info();
    let env = recorded_env();
    RunMeta {
        version: env!("CARGO_PKG_VERSION").to_string(),
        program: cfg.program(),
        backend: info.name,
        backend_lines: info.header_lines.clone(),
        nccl_headers: info.nccl_headers,
        nccl_library: info.nccl_library,
        argv: cfg.argv.clone(),
        env,
        nthreads: cfg.nthreads,
        ngpus: cfg.ngpus,
        min_bytes: cfg.min_bytes,
        max_bytes: cfg.max_bytes,
        step: cfg.step,
        warmup_iters: cfg.warmup_iters,
        iters: cfg.iters,
        agg_iters: cfg.agg_iters,
        check: cfg.check,
        graph: cfg.graph,
        unalign: cfg.unalign,
        blocking: cfg.blocking,
        per_iter: cfg.per_iter,
        per_iter_skip: cfg.per_iter_skip,
        parallel_init: cfg.parallel_init,
        report_cputime: cfg.report_cputime,
        report_timestamps: cfg.report_timestamps,
        show_algo: cfg.tuning.show_algo,
        nranks: info.nranks,
        devices: backend.devices(),
        reduced_max_bytes: None,
        start_time: local_time(),
        environment: None,
        groups: Vec::new(),
    }
}
