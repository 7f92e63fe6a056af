//! alltoallv's sizes against nccl-tests' formulas, the matrix reader's refusals, and the
//! buffer layout under the default (generated, spread 1) traffic. The layout test passes the
//! default traffic explicitly, as every caller passes the run's own.

use super::{parse_matrix, Traffic};
use crate::core::collective::{Collective, Content};
use crate::core::dtype::DataType;

fn generated(spread: f64) -> Traffic {
    Traffic::Generated { spread }
}

#[test]
fn spread_one_weights_by_distance_and_sends_nothing_to_self() {
    // 4 ranks, count 1000 floats: each rank's total is 16000 bytes, distances sum to 6.
    let t = generated(1.0);
    let row: Vec<usize> = (0..4).map(|j| t.pair_bytes(1000, 4, 0, j, 4)).collect();
    assert_eq!(row, vec![0, 2656, 5328, 8000]); // floor16 of 0, 2666.7, 5333.3, 8000
    assert_eq!(t.pair_bytes(1000, 4, 2, 1, 4), 8000); // distance (1 - 2) mod 4 = 3
}

#[test]
fn spread_zero_is_uniform_and_half_blends() {
    assert_eq!(generated(0.0).pair_bytes(1000, 4, 1, 1, 4), 4000);
    // 0.5 x 4000 + 0.5 x 2666.67 = 3333.3 -> 3328.
    assert_eq!(generated(0.5).pair_bytes(1000, 4, 0, 1, 4), 3328);
    // One rank keeps its whole (floored) total.
    assert_eq!(generated(1.0).pair_bytes(7, 1, 0, 0, 1), 0);
    assert_eq!(generated(1.0).pair_bytes(37, 1, 0, 0, 1), 32);
}

#[test]
fn every_rank_sends_and_receives_the_same_total() {
    for n in [2, 3, 5, 8] {
        for spread in [0.0, 0.3, 1.0] {
            let t = generated(spread);
            let sent = |r: usize| {
                (0..n)
                    .map(|p| t.pair_bytes(4096, 2, r, p, n))
                    .sum::<usize>()
            };
            let got = |r: usize| {
                (0..n)
                    .map(|p| t.pair_bytes(4096, 2, p, r, n))
                    .sum::<usize>()
            };
            for r in 0..n {
                assert_eq!(
                    (sent(r), got(r)),
                    (sent(0), sent(0)),
                    "n {n} spread {spread}"
                );
            }
        }
    }
}

#[test]
fn generated_count_is_alltoalls_block_and_matrix_count_is_zero() {
    assert_eq!(generated(1.0).param_count(1000, 4, 3), 332);
    let m = Traffic::Matrix(parse_matrix("16 32\n48 0\n", "m", 1.0).unwrap());
    assert_eq!(m.param_count(1000, 4, 2), 0);
}

#[test]
fn matrix_values_are_scaled_then_floored_to_16_bytes() {
    let m = parse_matrix("  100 200 150\n\n50 100 75\n300 150 200", "m", 1.0).unwrap();
    assert_eq!(
        (m.dim, m.bytes(0, 1), m.bytes(1, 2), m.bytes(2, 0)),
        (3, 192, 64, 288)
    );
    let m = parse_matrix("1e3 0\t7.9\n 2 3 4\n5 6 7\n", "m", 2.5).unwrap();
    assert_eq!(
        (m.bytes(0, 0), m.bytes(0, 2), m.bytes(2, 2)),
        (2496, 16, 16)
    );
    assert_eq!(m.bytes(3, 0), 0);
}

#[test]
fn malformed_matrices_are_one_line_refusals() {
    for (text, needle) in [
        ("", "is empty"),
        ("\n \n", "is empty"),
        ("1 2\n3\n", "row 1 has 1 columns"),
        ("1 2\n3 4\n5 6\n", "must be square"),
        ("1 2 3\n4 5 6\n", "must be square (got 2x3)"),
        ("1 -2\n3 4\n", "row 0 column 1: -2 is negative"),
        ("1 2\nx 4\n", "row 1 column 0: \"x\" is not a number"),
        ("1 2\n3 4k\n", "\"4k\" is not a number"),
        ("nan 2\n3 4\n", "not a finite number"),
        ("1 inf\n3 4\n", "not a finite number"),
        ("1e300 1\n1 1\n", "overflows"),
    ] {
        let err = parse_matrix(text, "f.txt", 1e10).unwrap_err();
        assert!(err.contains(needle), "{text:?}: {err}");
        assert!(err.contains("f.txt") && !err.contains('\n'), "{err}");
    }
    let wide = "0 ".repeat(9000);
    assert!(parse_matrix(&wide, "w", 1.0)
        .unwrap_err()
        .contains("too large"));
}

#[test]
fn matrix_mode_rules_of_nccl_tests() {
    let m = Traffic::Matrix(parse_matrix("0 64 32\n16 0 0\n0 0 0\n", "m", 1.0).unwrap());
    assert_eq!(m.max_rank_bytes(0, 3), 96);
    assert_eq!(m.check_fits(3, 96, 96), Ok(()));
    assert!(m
        .check_fits(4, 96, 96)
        .unwrap_err()
        .contains("3x3 but this run has 4 ranks"));
    assert!(m
        .check_fits(3, 8, 96)
        .unwrap_err()
        .contains("-b equal to -e"));
    assert!(m
        .check_fits(3, 64, 64)
        .unwrap_err()
        .contains("at least 96 bytes"));
    // Two of three ranks of the matrix: only their cells count.
    assert_eq!(m.max_rank_bytes(0, 2), 64);
    assert_eq!(generated(1.0).check_fits(4, 8, 64), Ok(()));
}

#[test]
fn layout_delivers_each_sources_segment_in_rank_order() {
    // Default traffic: generated, spread 1.
    let (n, dtype) = (4, DataType::Half);
    let c = Collective::AllToAllv;
    let s = c.shape(&Traffic::default(), 1 << 12, dtype, n);
    assert_eq!(s.count, 512); // 4096 / 2 / 4, a multiple of 8 halves
    let plain = |seg: &super::Segment| match seg.content {
        Content::Plain { first } => first,
        other => panic!("{other:?}"),
    };
    for dst in 0..n {
        let expected = c.expected_contents(&Traffic::default(), &s, dst, n, 0);
        let (tail, segs) = expected.split_last().unwrap();
        assert_eq!(tail.content, Content::Unchanged);
        assert_eq!(tail.start + tail.len, s.recv_elems);
        for (src, seg) in segs.iter().enumerate() {
            let sent = c.send_contents(&Traffic::default(), &s, src, n, 0)[dst];
            assert_eq!(
                (seg.len, plain(seg)),
                (sent.len, plain(&sent)),
                "{src}->{dst}"
            );
        }
        assert_eq!(segs[dst].len, 0, "spread 1 sends nothing to self");
    }
    // The largest rank's total is the size column; algbw counts all of it.
    assert_eq!(s.bytes, s.send_elems * 2);
    assert_eq!(c.algbw_bytes(&s, dtype, n), s.bytes as f64);
    assert_eq!(c.busbw_factor(n), 0.75);
    assert!(!c.checks_in_place() && !c.rooted() && !c.reduces());
}
