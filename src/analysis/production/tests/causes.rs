//! The production report's causes on constructed records: each found where planted (a slow
//! rank, contention, small sizes, an unlike algorithm or protocol) and not found where absent.

use super::*;

#[test]
fn a_planted_slow_rank_is_found_and_a_uniform_comm_has_none() {
    let s = 16u64 << 20;
    let mut records = Vec::new();
    for call in 0..20 {
        for r in 0..8u32 {
            let speed = if r == 5 {
                0.3
            } else {
                0.95 + 0.001 * f64::from(call % 3)
            };
            records.push(rec("dp", r, s, t(s, speed)));
        }
    }
    let report = build(&records, Inputs::default(), Some(&base()));
    assert_eq!(
        kinds(&report),
        vec![("slow_rank".to_string(), Some(5), None)]
    );
    assert_eq!(report.causes[0].host.as_deref(), Some("h1"));
    let uniform: Vec<Record> = records
        .into_iter()
        .filter(|r| r.source.rank != Some(5))
        .collect();
    assert!(build(&uniform, Inputs::default(), Some(&base()))
        .causes
        .is_empty());
}

#[test]
fn a_rank_slow_only_on_the_calls_that_carry_the_time_is_still_slow() {
    // Rank 5 is slow on 20 calls of 16M; 200 calls of 1M run at the same speed on every rank.
    let mut records = Vec::new();
    for r in 0..8u32 {
        for _ in 0..20 {
            let speed = if r == 5 { 0.3 } else { 0.95 };
            records.push(rec("dp", r, 16 << 20, t(16 << 20, speed)));
        }
        for _ in 0..200 {
            records.push(rec("dp", r, 1 << 20, t(1 << 20, 0.95)));
        }
    }
    let report = build(&records, Inputs::default(), Some(&base()));
    assert_eq!(
        kinds(&report),
        vec![("slow_rank".to_string(), Some(5), None)]
    );
    // Weighted by the groups' median times (16M: 16 x 1M's), rank 5's 0.3/0.95 calls hold
    // 320 of its 520 weight units.
    assert!((report.ranks[5].rel_busbw_p50 - 0.3 / 0.95).abs() < 1e-12);
    assert_eq!(report.ranks[0].rel_busbw_p50, 1.0);
    assert_eq!(
        crate::analysis::production::aggregate::weighted_median([
            (1.0, 1.0),
            (2.0, 1.0),
            (3.0, 1.0),
            (4.0, 1.0)
        ]),
        2.0
    );
    assert_eq!(
        crate::analysis::production::aggregate::weighted_median([
            (1.0, 1.0),
            (9.0, 3.0),
            (f64::NAN, 9.0)
        ]),
        9.0
    );
    assert!(crate::analysis::production::aggregate::weighted_median([(1.0, 0.0)]).is_nan());
}

#[test]
fn a_bimodal_size_is_contention_and_a_unimodal_one_is_not() {
    let s = 32u64 << 20;
    let mut records = Vec::new();
    for call in 0..20u32 {
        for r in 0..8u32 {
            let speed = if call % 4 == 0 { 0.3 } else { 0.9 };
            let mut x = rec("tp", r, s, t(s, speed));
            re(&mut x, |p| p.seq = Some(u64::from(call)));
            records.push(x);
        }
    }
    let report = build(&records, Inputs::default(), Some(&base()));
    assert_eq!(
        kinds(&report),
        vec![("contention".to_string(), None, Some(s))]
    );
    assert!(
        report.causes[0].evidence.contains("40 below 50%"),
        "{}",
        report.causes[0].evidence
    );
    let steady: Vec<Record> = (0..160).map(|i| rec("tp", i % 8, s, t(s, 0.6))).collect();
    assert!(build(&steady, Inputs::default(), Some(&base()))
        .causes
        .is_empty());
}

#[test]
fn sizes_below_the_half_performance_size_are_small_and_larger_ones_are_not() {
    let small: Vec<Record> = (0..8).map(|r| rec("dp", r, 64 << 10, 30.0)).collect();
    let report = build(&small, Inputs::default(), Some(&base()));
    assert_eq!(
        kinds(&report),
        vec![("small_size".to_string(), None, Some(64 << 10))]
    );
    let advice = report.causes[0].advice.as_deref().unwrap();
    assert!(
        advice.contains("at least 256K") && advice.contains("1M"),
        "{advice}"
    );
    // Below the benchmark's smallest size: no ratio, the reason instead.
    assert!(report.groups[0].baseline.is_none());
    assert!(report.groups[0]
        .baseline_note
        .as_deref()
        .unwrap()
        .contains("not extrapolated"));
    let large: Vec<Record> = (0..8)
        .map(|r| rec("dp", r, 1 << 20, t(1 << 20, 1.0)))
        .collect();
    assert!(build(&large, Inputs::default(), Some(&base()))
        .causes
        .is_empty());
}

#[test]
fn an_algorithm_or_protocol_unlike_the_benchmarks_is_named() {
    let s = 4u64 << 20;
    let mut records: Vec<Record> = (0..8).map(|r| rec("dp", r, s, t(s, 0.9))).collect();
    for r in &mut records {
        r.source = Arc::new(Source {
            algo_proto: Some("Ring_ll".into()),
            ..Source::clone(&r.source)
        });
    }
    let report = build(&records, Inputs::default(), Some(&base()));
    assert_eq!(
        kinds(&report),
        vec![("algo_proto".to_string(), None, Some(s))]
    );
    for r in &mut records {
        r.source = Arc::new(Source {
            algo_proto: Some("Ring_ll128".into()),
            ..Source::clone(&r.source)
        });
    }
    assert!(build(&records, Inputs::default(), Some(&base()))
        .causes
        .is_empty());
}

#[test]
fn without_a_baseline_only_the_job_is_described_and_a_note_says_so() {
    let records: Vec<Record> = (0..8).map(|r| rec("dp", r, 64 << 10, 30.0)).collect();
    let report = build(&records, Inputs::default(), None);
    assert!(report.causes.is_empty());
    assert!(report.groups[0].baseline.is_none() && report.total_lost_us.is_none());
    assert!(report.notes.iter().any(|n| n.starts_with("no --baseline")));
    let other = build(
        &records,
        Inputs::default(),
        Some(&Baseline {
            files: vec![],
            curves: vec![],
        }),
    );
    assert!(other
        .notes
        .iter()
        .any(|n| n.contains("no benchmark curve for all_reduce at 8 ranks")));
}
