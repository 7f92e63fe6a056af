//! Real published nccl-tests tables (`../shared/fixtures/real/`, never copied into the
//! repository) read by a deliberately tiny parser for the current layout only (the project's
//! readers cover every layout; this keeps the fit tests independent of them).

use super::synthetic::row;
use ncclbench::analysis::input::{InputRow, ReadSet};
use ncclbench::core::collective::Collective;
use ncclbench::core::real_fixtures;
use ncclbench::result::Placement;
use std::path::PathBuf;

/// Path of a fixture, or `None` (with a message; a failure under `CI=true`) when absent.
pub fn fixture(name: &str) -> Option<PathBuf> {
    real_fixtures::path(name)
}

/// Rows of every current-layout table in `text`: the collective from `Collective test
/// starting` lines (else `default`), ranks from the `#  Rank` device lines, both placements.
pub fn parse(text: &str, default: Collective) -> ReadSet {
    let (mut collective, mut nranks, mut rows) = (default, 0usize, Vec::new());
    for line in text.lines() {
        if let Some(name) = line.split("Collective test starting:").nth(1) {
            collective = Collective::parse(name.trim()).unwrap_or(default);
            nranks = 0;
        } else if line.starts_with("#  Rank") {
            nranks += 1;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(bytes), true) = (f.first().and_then(|s| s.parse::<u64>().ok()), f.len() == 13)
        else {
            continue;
        };
        for (placement, at) in [(Placement::OutOfPlace, 5), (Placement::InPlace, 9)] {
            let Ok(time_us) = f[at].parse::<f64>() else {
                continue;
            };
            let factor = collective.busbw_factor(nranks);
            let mut r: InputRow = row(collective, nranks, bytes, time_us, factor);
            r.placement = placement;
            r.dtype = f[2].into();
            rows.push(r);
        }
    }
    ReadSet {
        rows,
        skipped: vec![],
        inferred: vec![],
        group_rows: 0,
    }
}
