//! Tests of the shipped profiles and of loading a profile by name or from a file.

mod parse;

use super::*;
use crate::core::error::Error;
use std::path::Path;

/// The message of a usage error (anything else fails the test).
pub(super) fn usage(result: Result<Profile, Error>) -> String {
    match result {
        Err(Error::Usage(msg)) => msg,
        other => panic!("expected a usage error, got {other:?}"),
    }
}

pub(super) const HEAD: &str = "[profile]\nname = \"t\"\n";

/// Each shipped profile, loaded by name, carries exactly the numbers of its typical ranges:
/// (name, ranks, busbw low, busbw high, 8 B time low/high).
#[test]
fn shipped_profiles_carry_their_typical_numbers() {
    type Row = (&'static str, usize, f64, f64, Option<(f64, f64)>);
    let table: [Row; 6] = [
        ("h100-nvswitch", 8, 350.0, 480.0, Some((10.0, 20.0))),
        ("a100-nvswitch", 8, 220.0, 280.0, Some((12.0, 25.0))),
        ("pcie4-8gpu", 8, 10.0, 25.0, Some((20.0, 40.0))),
        (
            "h100-2node-400g-per-gpu",
            16,
            340.0,
            480.0,
            Some((25.0, 45.0)),
        ),
        ("h100-2node-200g-per-gpu", 16, 170.0, 240.0, None),
        ("h100-2node-400g-per-node", 16, 40.0, 48.0, None),
    ];
    for (name, ranks, lo, hi, time) in table {
        let p = load(Some(name)).unwrap();
        assert_eq!(p.name, name);
        assert_eq!(p.source, "builtin");
        assert!(p.typical, "{name}");
        assert_eq!(p.ranks, Some(ranks), "{name}");
        assert_eq!(p.suite, Suite::default(), "{name}");
        assert_eq!(
            p.busbw,
            [BusbwCheck {
                collective: Collective::AllReduce,
                min_bytes: 1 << 30,
                max_bytes: Some(8 << 30),
                min_gbs: lo,
                typical_gbs: Some((lo, hi)),
            }],
            "{name}"
        );
        let latency: Vec<LatencyCheck> = time
            .map(|(tlo, thi)| LatencyCheck {
                collective: Collective::AllReduce,
                min_bytes: 0,
                max_bytes: 8,
                max_us: thi,
                typical_us: Some((tlo, thi)),
            })
            .into_iter()
            .collect();
        assert_eq!(p.latency, latency, "{name}");
        assert_eq!(p.baseline, None);
        assert!(p.text.contains("not guarantees"), "{name}");
        assert!(p.text.contains("--make-profile"), "{name}");
    }
}

/// `h200-nvswitch` judges the sizes its sources name (8-16 GiB, so its sweep runs to 16 GiB)
/// with Azure's 431 GB/s node health check floor, and has no latency check.
#[test]
fn h200_profile_judges_8_to_16_gib_with_the_health_check_floor() {
    let p = load(Some("h200-nvswitch")).unwrap();
    assert_eq!(
        (p.name.as_str(), p.ranks, p.typical),
        ("h200-nvswitch", Some(8), true)
    );
    assert_eq!(
        p.suite,
        Suite {
            perf_max_bytes: 16 << 30,
            ..Suite::default()
        }
    );
    assert_eq!(
        p.busbw,
        [BusbwCheck {
            collective: Collective::AllReduce,
            min_bytes: 8 << 30,
            max_bytes: Some(16 << 30),
            min_gbs: 431.0,
            typical_gbs: Some((431.0, 482.0)),
        }]
    );
    assert!(p.latency.is_empty() && p.baseline.is_none());
    assert!(p.text.contains("NVLS off"), "the NVLS-off note is missing");
}

/// `load(None)` is the thresholdless `default` profile with the default suite.
#[test]
fn no_spec_loads_default_without_thresholds() {
    let p = load(None).unwrap();
    assert_eq!(p, load(Some("default")).unwrap());
    assert_eq!(p.name, "default");
    assert!(!p.typical);
    assert_eq!(p.ranks, None);
    assert!(p.busbw.is_empty() && p.latency.is_empty() && p.baseline.is_none());
    assert!(p.description.contains("correctness and completion only"));
    assert_eq!(p.suite.collectives, Collective::ALL.to_vec());
    assert_eq!(
        (p.suite.correctness_max_bytes, p.suite.perf_max_bytes),
        (16 << 20, 8 << 30)
    );
}

/// `builtins()` lists every shipped file once, `default` first, with its description.
#[test]
fn builtins_list_every_shipped_profile() {
    let list = builtins();
    let names: Vec<&str> = list.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "default",
            "h100-nvswitch",
            "h200-nvswitch",
            "a100-nvswitch",
            "pcie4-8gpu",
            "h100-2node-400g-per-gpu",
            "h100-2node-200g-per-gpu",
            "h100-2node-400g-per-node"
        ]
    );
    assert_eq!(list[1].1, "8x H100 SXM in one node, NVSwitch");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|f| f.strip_suffix(".toml").map(str::to_string))
        .collect();
    files.sort();
    let mut sorted: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    sorted.sort();
    assert_eq!(files, sorted, "profiles/*.toml and BUILTIN differ");
}

/// An unknown builtin name is a usage error listing the builtin names.
#[test]
fn unknown_name_lists_builtins() {
    let msg = usage(load(Some("h200")));
    assert!(
        msg.starts_with(
            "unknown profile 'h200' (builtin profiles: default, h100-nvswitch, h200-nvswitch,"
        ),
        "{msg}"
    );
    let msg = usage(load(Some("/nonexistent/p.toml")));
    assert!(
        msg.starts_with("profile /nonexistent/p.toml: cannot read:"),
        "{msg}"
    );
}

/// A profile file keeps its path as source and resolves relative baseline paths against
/// its own directory; absolute ones stay as written.
#[test]
fn file_profiles_resolve_baseline_paths_against_their_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.toml");
    let text = format!(
        "{HEAD}[baseline]\npaths = [\"healthy/performance\", \"/abs/run.csv\"]\nthreshold_pct = 7.5\n"
    );
    std::fs::write(&file, &text).unwrap();
    let spec = file.display().to_string();
    let p = load(Some(&spec)).unwrap();
    assert_eq!(p.source, spec);
    assert_eq!(p.text, text);
    assert_eq!(
        p.baseline,
        Some(Baseline {
            paths: vec![
                dir.path().join("healthy/performance"),
                PathBuf::from("/abs/run.csv")
            ],
            threshold_pct: 7.5,
        })
    );
    // Without a base directory relative paths are left as written; default threshold 5.
    let p = parse(&format!("{HEAD}[baseline]\npaths = [\"run\"]\n"), "x", None).unwrap();
    assert_eq!(
        p.baseline,
        Some(Baseline {
            paths: vec![PathBuf::from("run")],
            threshold_pct: 5.0
        })
    );
}
