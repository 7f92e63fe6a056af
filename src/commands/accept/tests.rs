//! The stage command lines of `accept` parse as the runs they stand for.

use super::stage_config;
use crate::accept::model::Stage;
use crate::accept::profile::{self, Suite};
use crate::accept::suite::{one, StagePlan};
use crate::config::accept::StageFlags;
use crate::core::collective::Collective;
use std::path::Path;

fn suite() -> Suite {
    profile::load(None).unwrap().suite
}

fn parsed(p: &StagePlan) -> crate::config::RunConfig {
    stage_config(p).unwrap_or_else(|e| panic!("{:?} did not parse as a run: {e}", p.argv))
}

#[test]
fn correctness_checks_every_type_and_op_and_performance_only_measures() {
    let flags = StageFlags {
        passthrough: vec!["--backend".into(), "host".into(), "-g".into(), "2".into()],
        timeout_s: Some(9),
        perf_max_bytes: None,
    };
    let out = Path::new("/tmp/acc");
    let c = one(
        &suite(),
        &flags,
        out,
        Stage::Correctness,
        Collective::Reduce,
        1 << 20,
    );
    let cfg = parsed(&c);
    assert_eq!(cfg.check, 1);
    assert_eq!(cfg.dtypes.len(), crate::core::dtype::DataType::ALL.len());
    assert_eq!(cfg.ngpus, 2);
    assert_eq!(cfg.timeout, Some(std::time::Duration::from_secs(9)));
    assert_eq!(c.csv, "correctness/reduce.csv");
    assert_eq!(
        cfg.csv.as_deref(),
        Some(out.join("correctness/reduce.csv").as_path())
    );
    let p = one(
        &suite(),
        &flags,
        out,
        Stage::Performance,
        Collective::Reduce,
        1 << 20,
    );
    let cfg = parsed(&p);
    assert_eq!((cfg.check, cfg.max_bytes, cfg.min_bytes), (0, 1 << 20, 8));
    assert_eq!(cfg.iters, suite().iters);
}
