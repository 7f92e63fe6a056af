//! The collective of tables that do not name it: inferred from the legacy column sets, the
//! 2.13+ op and root columns, the in-place check, busbw/algbw against the rank count and a
//! `*_perf` program in the file; unknown, with the candidates, when two fit.

use super::legacy_columns::{legacy_text, LEGACY};
use crate::analysis::read::read_str;

/// The collective given to every row of `text`, and the inference's basis.
fn inferred(text: &str) -> (Option<String>, String) {
    let set = read_str("t", text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(set.inferred.len(), 1, "{:?}", set.inferred);
    let collectives: Vec<_> = set.rows.iter().map(|r| r.collective.clone()).collect();
    assert!(collectives.windows(2).all(|w| w[0] == w[1]));
    (
        set.inferred[0].collective.clone(),
        set.inferred[0].basis.clone(),
    )
}

#[test]
fn legacy_tables_at_8_ranks_name_their_collective_or_stay_unknown() {
    for l in &LEGACY {
        let (got, basis) = inferred(&legacy_text(l, 6));
        let expected = match l.program {
            // Same columns and the same (n-1)/n: nothing tells gather from scatter.
            "gather" | "scatter" => None,
            // Same columns and factor 1.
            "sendrecv" => None,
            p => Some(p.to_string()),
        };
        assert_eq!(got, expected, "{}: {basis}", l.program);
        if expected.is_none() {
            assert!(basis.starts_with("unknown: "), "{basis}");
        } else {
            assert!(basis.starts_with("inferred from "), "{basis}");
        }
    }
    let (_, basis) = inferred(&legacy_text(&LEGACY[0], 6));
    assert_eq!(
        basis,
        "inferred from legacy columns redop, no root; busbw/algbw 1.750 = 2(n-1)/n at 8 ranks"
    );
    let (_, basis) = inferred(&legacy_text(&LEGACY[6], 6));
    assert_eq!(
        basis,
        "unknown: gather, scatter all fit (legacy columns root, no redop; busbw/algbw 0.875 = (n-1)/n at 8 ranks)"
    );
}

#[test]
fn a_program_named_in_the_file_settles_what_the_table_cannot() {
    for (l, program) in [
        (&LEGACY[6], "gather"),
        (&LEGACY[7], "scatter"),
        (&LEGACY[4], "sendrecv"),
    ] {
        let text = format!(
            "$ mpirun -np 8 ./build/{program}_perf -b 1K -e 1M -f 4 -c 1\n{}",
            legacy_text(l, 6)
        );
        let (got, basis) = inferred(&text);
        assert_eq!(got.as_deref(), Some(program), "{basis}");
        assert!(
            basis.ends_with(&format!("program {program}_perf named in the file")),
            "{basis}"
        );
    }
    // A program that contradicts the table leaves it unknown rather than picking one.
    let text = format!("./all_gather_perf -g 8\n{}", legacy_text(&LEGACY[0], 6));
    let (got, basis) = inferred(&text);
    assert_eq!(got, None, "{basis}");
    assert!(
        basis.starts_with("unknown: the evidence disagrees"),
        "{basis}"
    );
}

/// A 2.13-2.16 table (current columns, no `Collective test starting` line) of 4 ranks.
fn current(op: &str, root: i64, factor: f64, in_place_wrong: &str) -> String {
    let mut s = String::from("# nThread 1 nGpus 4 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n");
    for r in 0..4 {
        s += &format!("#  Rank {r:2} Group  0 Pid   1234 on      node1 device {r:2} [0000:{:02x}:00] NVIDIA A100-SXM4-80GB\n", 16 + r);
    }
    s += "#\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
    for b in [1u64 << 20, 2 << 20, 4 << 20] {
        let t = 10.0 + b as f64 / 100e3;
        let alg = b as f64 / t / 1e3;
        s += &format!(
            "{b:>12}  {:>12}  {:>8}  {op:>6}  {root:>6}  {t:>7.2}  {alg:>6.2}  {:>6.2}  {:>6}  {t:>7.2}  {alg:>6.2}  {:>6.2}  {in_place_wrong:>6}\n",
            b / 4, "float", alg * factor, 0, alg * factor
        );
    }
    s
}

#[test]
fn current_columns_use_op_root_and_in_place_check() {
    let cases = [
        (current("sum", -1, 1.5, "0"), Some("all_reduce")),
        (current("sum", -1, 0.75, "0"), Some("reduce_scatter")),
        (current("sum", -1, 1.0, "N/A"), Some("sendrecv")),
        (current("sum", 2, 1.0, "0"), Some("reduce")),
        (current("none", 1, 1.0, "0"), Some("broadcast")),
        (current("none", -1, 0.75, "0"), Some("all_gather")),
        (current("none", -1, 0.75, "N/A"), Some("alltoall")),
        // gather and scatter: op none, a root, (n-1)/n.
        (current("none", 0, 0.75, "0"), None),
    ];
    for (text, expected) in cases {
        let (got, basis) = inferred(&text);
        assert_eq!(got.as_deref(), expected, "{basis}");
    }
}

#[test]
fn a_named_table_is_not_inferred() {
    let text = format!(
        "# Collective test starting: all_reduce_perf\n{}",
        current("sum", -1, 0.75, "0")
    );
    let set = read_str("t", &text).unwrap();
    assert!(set.inferred.is_empty());
    assert!(set
        .rows
        .iter()
        .all(|r| r.collective.as_deref() == Some("all_reduce")));
}
