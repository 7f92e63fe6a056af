//! Validation of `ncclbench analyze`'s fitting on synthetic curves with known regimes
//! (generator in `analysis_fit/synthetic.rs`): at 2% noise the fit must recover every regime's
//! alpha within 10% and bus bandwidth within 3%, and every breakpoint within one grid step, for
//! 1, 2 and 3 regimes over 2 to 64 ranks and 50 seeds each; single-regime curves must get no
//! spurious breakpoint in at least 95% of seeds. Then real published tables (skipped when
//! `../shared` is absent): the regimes, steps and glitches an engineer sees in them.

mod synthetic;

use ncclbench::analysis::build::analyze;
use ncclbench::analysis::curve::CurveReport;
use ncclbench::analysis::input::{InputRow, ReadSet};
use ncclbench::core::collective::Collective;
use synthetic::{generate, Noise, Synthetic, TrueRegime};

const RANKS: [usize; 7] = [2, 3, 4, 8, 16, 32, 64];
/// A collective per rank count, so the busbw factor varies too.
const COLLECTIVES: [Collective; 7] = [
    Collective::AllReduce,
    Collective::AllGather,
    Collective::ReduceScatter,
    Collective::AllToAll,
    Collective::Broadcast,
    Collective::AllReduce,
    Collective::Reduce,
];
const SEEDS: u64 = 50;
const UNIFORM: Noise = Noise::Uniform(0.02);

fn regime(alpha_us: f64, busbw_gbs: f64) -> TrueRegime {
    TrueRegime {
        alpha_us,
        busbw_gbs,
    }
}

/// LL-like, LL128-like and Simple-like regimes, spaced to be identifiable.
fn base(regimes: usize) -> Vec<TrueRegime> {
    match regimes {
        1 => vec![regime(8.0, 100.0)],
        2 => vec![regime(5.0, 8.0), regime(120.0, 150.0)],
        _ => vec![regime(2.5, 2.0), regime(50.0, 20.0), regime(1000.0, 200.0)],
    }
}

fn fit(rows: Vec<InputRow>) -> CurveReport {
    let mut a = analyze(
        &ReadSet {
            rows,
            skipped: vec![],
            inferred: vec![],
            group_rows: 0,
        },
        None,
    );
    assert_eq!(a.curves.len(), 1);
    a.curves.remove(0)
}

/// Why a fitted curve does not match the truth, or `None` when it does.
fn mismatch(c: &CurveReport, s: &Synthetic) -> Option<String> {
    if c.regimes.len() != s.regimes.len() {
        return Some(format!(
            "{} regimes, want {}",
            c.regimes.len(),
            s.regimes.len()
        ));
    }
    for (j, (got, want)) in c.regimes.iter().zip(&s.regimes).enumerate() {
        let da = (got.alpha_us / want.alpha_us - 1.0).abs();
        let db = (got.busbw_gbs / want.busbw_gbs - 1.0).abs();
        if da > 0.10 || db > 0.03 {
            let (da, db) = (da * 100.0, db * 100.0);
            return Some(format!(
                "regime {j}: alpha off {da:.1}%, busbw off {db:.1}%"
            ));
        }
        let (g, w) = (got.from_bytes, s.firsts[j]);
        if !(w / 2..=w * 2).contains(&g) {
            return Some(format!("regime {j} starts at {g} B, want {w} B"));
        }
    }
    None
}

/// Fits every (ranks, seed) curve of `regimes` regimes, after `tamper` edits its rows; returns
/// the failures and the number of curves.
fn sweep(
    regimes: usize,
    noise: Noise,
    tamper: impl Fn(&mut Vec<InputRow>),
    check: impl Fn(&CurveReport, &Synthetic) -> Option<String>,
) -> (Vec<String>, usize) {
    let mut failures = Vec::new();
    for (i, &n) in RANKS.iter().enumerate() {
        for seed in 0..SEEDS {
            let s = generate(
                &base(regimes),
                COLLECTIVES[i],
                n,
                seed * 1000 + n as u64,
                noise,
            )
            .unwrap_or_else(|e| panic!("unidentifiable: n={n} seed={seed}: {e}"));
            let mut rows = s.rows.clone();
            tamper(&mut rows);
            if let Some(why) = check(&fit(rows), &s) {
                failures.push(format!("n={n} seed={seed}: {why}"));
            }
        }
    }
    (failures, RANKS.len() * SEEDS as usize)
}

#[test]
fn one_regime_is_recovered_without_spurious_breakpoints() {
    let (failures, total) = sweep(1, UNIFORM, |_| {}, mismatch);
    assert!(failures.len() * 20 <= total, "{failures:#?}");
}

#[test]
fn two_regimes_are_recovered() {
    let (failures, _) = sweep(2, UNIFORM, |_| {}, mismatch);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn three_regimes_are_recovered() {
    let (failures, _) = sweep(3, UNIFORM, |_| {}, mismatch);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn two_outlying_sizes_are_rejected_and_change_nothing() {
    // 256 B (flat latency region) and 256 MiB (bandwidth region) measured 30% slow.
    let slow = [1u64 << 8, 1 << 28];
    let tamper = |rows: &mut Vec<InputRow>| {
        for r in rows.iter_mut().filter(|r| slow.contains(&r.bytes)) {
            r.time_us *= 1.3;
        }
    };
    let check = |c: &CurveReport, s: &Synthetic| {
        let flagged: Vec<u64> = c
            .anomalies
            .iter()
            .filter(|a| a.kind == "outlier")
            .map(|a| a.bytes)
            .collect();
        let why = mismatch(c, s);
        (flagged != slow)
            .then(|| format!("outliers {flagged:?}"))
            .or(why)
    };
    let (failures, _) = sweep(2, UNIFORM, tamper, check);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn log_normal_noise_keeps_regime_counts_and_most_parameters() {
    // Heavier-tailed noise (sigma 2%): a 3% bandwidth is then about three standard errors for
    // the shortest regimes, so a few seeds miss it; the segmentation must still be right.
    for regimes in 1..=3 {
        let (failures, total) = sweep(regimes, Noise::LogNormal(0.02), |_| {}, mismatch);
        let wrong_count = failures
            .iter()
            .filter(|f| f.contains("regimes, want"))
            .count();
        assert!(
            wrong_count * 50 <= total,
            "{regimes} regimes: {failures:#?}"
        );
        assert!(
            failures.len() * 10 <= total,
            "{regimes} regimes: {failures:#?}"
        );
    }
}

#[test]
fn the_generator_refuses_unidentifiable_curves() {
    // Alphas only 3x apart: the first regime ends before its bandwidth term dominates.
    let close = [regime(5.0, 8.0), regime(15.0, 150.0)];
    let err = generate(&close, Collective::AllReduce, 8, 1, UNIFORM).err();
    assert!(err.is_some_and(|e| e.contains("bandwidth term")));
}

mod real;

/// The curves of a real fixture, or `None` when the shared fixtures are absent.
fn real_curves(name: &str, default: Collective) -> Option<Vec<CurveReport>> {
    let text = std::fs::read_to_string(real::fixture(name)?).expect("readable fixture");
    Some(analyze(&real::parse(&text, default), None).curves)
}

fn kinds_at(c: &CurveReport, kind: &str) -> Vec<u64> {
    c.anomalies
        .iter()
        .filter(|a| a.kind == kind)
        .map(|a| a.bytes)
        .collect()
}

#[test]
fn real_two_node_all_reduce_has_three_regimes_and_its_glitches_found() {
    let name = "001_nccltests_h100x16_2node_allreduce.txt";
    let Some(curves) = real_curves(name, Collective::AllReduce) else {
        return;
    };
    assert_eq!(curves.len(), 2);
    for c in &curves {
        assert_eq!(c.regimes.len(), 3, "{:?}", c.regimes);
        assert!(
            c.regimes.iter().all(|r| r.rms_rel_err < 0.03),
            "{:?}",
            c.regimes
        );
        // The step visible in the table (16 MiB 978 us -> 32 MiB 1060 us) is a switch point.
        let step = c.switch_points_bytes[1];
        assert!(
            (8 << 20..=32 << 20).contains(&step),
            "{:?}",
            c.switch_points_bytes
        );
        // The fitted plateau is the asymptote the 8 GiB row (338.8 GB/s) approaches.
        assert!((c.plateau_busbw_fit_gbs / 338.8 - 1.0).abs() < 0.05);
        // 1 KiB out-of-place took 147.1 us against 123.1 in place.
        assert_eq!(kinds_at(c, "placement_disagreement"), vec![1024]);
    }
    let oop = &curves[1];
    assert_eq!(oop.placement, "out_of_place");
    assert!(
        kinds_at(oop, "outlier").contains(&1024),
        "{:?}",
        oop.anomalies
    );
}

#[test]
fn real_single_node_tables_fit_every_collective() {
    let name = "015_nccltests_2.29.2_h100x8_single_node.txt";
    let Some(curves) = real_curves(name, Collective::AllReduce) else {
        return;
    };
    assert_eq!(curves.len(), 10, "five collectives x two placements");
    for c in &curves {
        let covered: usize = c.regimes.iter().map(|r| r.points).sum();
        assert_eq!(covered, 10, "{} {}", c.collective, c.placement);
        assert!(c.plateau_busbw_fit_gbs > 0.0 && c.half_perf_bytes.is_some_and(|h| h > 0.0));
        if c.collective == "sendrecv" {
            // 422 us at 32 MiB, then 820 us at both 64 and 128 MiB: not one alpha-beta line.
            assert!(
                kinds_at(c, "outlier").contains(&(64 << 20)),
                "{:?}",
                c.anomalies
            );
        } else {
            assert!(
                c.regimes.iter().all(|r| r.rms_rel_err < 0.02),
                "{:?}",
                c.regimes
            );
        }
    }
}

#[test]
fn real_broadcast_collapse_at_64_mib_is_a_dip() {
    let name = "009_nccltests_2.29.7_rtx5090_2rank_broadcast.txt";
    let Some(curves) = real_curves(name, Collective::Broadcast) else {
        return;
    };
    for c in &curves {
        assert_eq!(kinds_at(c, "dip"), vec![64 << 20], "{:?}", c.anomalies);
        assert_eq!(c.busbw_factor, 1.0);
    }
}
