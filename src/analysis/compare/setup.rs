//! How two sides' setups differ, and the banner that says so: rank counts, GPU models,
//! host/process layouts, backends, collectives and types are warnings (unlike setups); the
//! NCCL version is a note, since it is what an upgrade comparison changes.

use super::model::{Difference, Setup};

/// How two setups differ: warnings (unlike setups) first, then the NCCL version, which is
/// reported but expected to change in an upgrade. A fact recorded on one side only is not a
/// difference (nothing to compare it with).
pub fn differences(before: &Setup, after: &Setup) -> Vec<Difference> {
    let strings = |v: &[usize]| v.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let pairs: [(&str, Vec<String>, Vec<String>, bool); 7] = [
        (
            "nranks",
            strings(&before.nranks),
            strings(&after.nranks),
            true,
        ),
        ("gpus", before.gpus.clone(), after.gpus.clone(), true),
        (
            "layouts",
            before.layouts.clone(),
            after.layouts.clone(),
            true,
        ),
        (
            "backends",
            before.backends.clone(),
            after.backends.clone(),
            true,
        ),
        (
            "collectives",
            before.collectives.clone(),
            after.collectives.clone(),
            true,
        ),
        ("dtypes", before.dtypes.clone(), after.dtypes.clone(), true),
        (
            "nccl_versions",
            before.nccl_versions.clone(),
            after.nccl_versions.clone(),
            false,
        ),
    ];
    pairs
        .into_iter()
        .filter(|(_, b, a, _)| !b.is_empty() && !a.is_empty() && b != a)
        .map(|(what, before, after, warning)| Difference {
            what: what.to_string(),
            before,
            after,
            warning,
        })
        .collect()
}

/// The words for a difference's subject.
fn label(what: &str) -> &str {
    match what {
        "nranks" => "rank counts",
        "gpus" => "GPU models",
        "layouts" => "host/process layouts",
        "backends" => "backends",
        "collectives" => "collectives",
        "dtypes" => "data types",
        "nccl_versions" => "NCCL version",
        other => other,
    }
}

/// The report's top lines: a loud `!!!` block when any difference is a warning, then the NCCL
/// version change as a plain note.
pub fn banner(diffs: &[Difference]) -> Vec<String> {
    let mut lines = Vec::new();
    let join = |v: &[String]| v.join(", ");
    if diffs.iter().any(|d| d.warning) {
        lines.push(
            "!!! UNLIKE SETUPS: before and after were not measured the same way; only matching \
             curves are compared"
                .to_string(),
        );
    }
    for d in diffs {
        if d.warning {
            lines.push(format!(
                "!!! {} differ: before {}; after {}",
                label(&d.what),
                join(&d.before),
                join(&d.after)
            ));
        } else {
            lines.push(format!(
                "note: {} {} -> {} (expected for an upgrade)",
                label(&d.what),
                join(&d.before),
                join(&d.after)
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_changes_are_notes_and_other_differences_warnings() {
        let before = Setup {
            nranks: vec![8],
            nccl_versions: vec!["2.19.3".into()],
            gpus: vec!["A".into()],
            ..Setup::default()
        };
        let after = Setup {
            nranks: vec![8],
            nccl_versions: vec!["2.21.5".into()],
            gpus: vec![],
            ..Setup::default()
        };
        let d = differences(&before, &after);
        assert_eq!(d.len(), 1, "unrecorded GPUs are not a difference: {d:?}");
        assert!(!d[0].warning);
        assert_eq!(
            banner(&d),
            ["note: NCCL version 2.19.3 -> 2.21.5 (expected for an upgrade)"]
        );
        let after = Setup {
            nranks: vec![16],
            ..before.clone()
        };
        let b = banner(&differences(&before, &after));
        assert!(b[0].starts_with("!!! UNLIKE SETUPS"));
        assert_eq!(b[1], "!!! rank counts differ: before 8; after 16");
    }
}
