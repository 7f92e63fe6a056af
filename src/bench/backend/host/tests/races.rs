//! The soundness argument of the direct plans, checked by brute force: within every phase, no
//! thread writes bytes another thread reads or writes, and no thread's op reads what an earlier
//! op of the same thread wrote, for every collective and rank count, out-of-place and in-place.

use crate::bench::backend::host::plan::{direct_ok, phases, Loc, Op};
use crate::bench::backend::{rank_args, Buf, Call};
use crate::core::collective::{Collective, Traffic};
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::result::Placement;

/// A byte range of one rank's allocation.
type Span = (usize, Buf, usize, usize);

fn span(l: &Loc, bytes: usize) -> Span {
    (l.rank, l.buf, l.offset, l.offset + bytes)
}

fn meet(a: &Span, b: &Span) -> bool {
    a.0 == b.0 && a.1 == b.1 && a.2 < b.3 && b.2 < a.3 && a.2 < a.3 && b.2 < b.3
}

/// (reads, writes) of one op, as the executor performs them.
fn accesses(op: &Op, elt: usize) -> (Vec<Span>, Vec<Span>) {
    match op {
        // A copy onto itself is skipped by the executor: it writes nothing.
        Op::Copy { src, dst, bytes } if src == dst => (vec![span(src, *bytes)], vec![]),
        Op::Copy { src, dst, bytes } => (vec![span(src, *bytes)], vec![span(dst, *bytes)]),
        Op::Reduce { src, dst, elems } => (
            src.iter().map(|l| span(l, elems * elt)).collect(),
            dst.iter().map(|l| span(l, elems * elt)).collect(),
        ),
    }
}

/// The first conflict in the direct execution of `call`, if any.
fn conflict(call: &Call, n: usize) -> Option<String> {
    let elt = call.dtype.size();
    let plans: Vec<Vec<Vec<Op>>> = (0..n).map(|t| phases(call, t, n)).collect();
    let count = plans[0].len();
    assert!(
        plans.iter().all(|p| p.len() == count),
        "phase counts differ"
    );
    for ph in 0..count {
        let per: Vec<Vec<(Vec<Span>, Vec<Span>)>> = plans
            .iter()
            .map(|p| p[ph].iter().map(|op| accesses(op, elt)).collect())
            .collect();
        for (t, ops) in per.iter().enumerate() {
            for (i, (_, w)) in ops.iter().enumerate() {
                // Within an op, a write may only coincide exactly with one of its own reads.
                let (r, _) = &ops[i];
                if w.iter().any(|w| r.iter().any(|r| meet(w, r) && w != r)) {
                    return Some(format!("phase {ph} thread {t} op {i} overlaps itself"));
                }
                // A later op of the same thread must not read what this one wrote.
                for (j, (r2, _)) in ops.iter().enumerate().skip(i + 1) {
                    if w.iter().any(|w| r2.iter().any(|r| meet(w, r))) {
                        return Some(format!(
                            "phase {ph} thread {t} op {j} reads op {i}'s output"
                        ));
                    }
                }
                for (u, other) in per.iter().enumerate().filter(|(u, _)| *u != t) {
                    for (r2, w2) in other {
                        if w.iter().any(|w| r2.iter().chain(w2).any(|x| meet(w, x))) {
                            return Some(format!("phase {ph}: thread {t} writes what {u} uses"));
                        }
                    }
                }
            }
        }
    }
    None
}

fn call(coll: Collective, n: usize, root: usize, placement: Placement) -> Call {
    let count = 7; // odd, so shares of the unchunked collectives are uneven
    let shape = coll.shape_from_count(&Traffic::default(), count, DataType::Float, n);
    Call {
        coll,
        dtype: DataType::Float,
        op: RedOp::Sum,
        root,
        count,
        traffic: Default::default(),
        ranks: (0..n)
            .map(|r| rank_args(coll, &shape, DataType::Float, r, placement, 24))
            .collect(),
    }
}

fn staged_by_design(coll: Collective, placement: Placement) -> bool {
    placement == Placement::InPlace
        && matches!(
            coll,
            Collective::AllToAll | Collective::AllToAllv | Collective::SendRecv
        )
}

#[test]
fn direct_plans_never_race_out_of_place_or_in_place() {
    for coll in Collective::ALL {
        for n in 1..=9usize {
            if coll.needs_power_of_two_ranks() && !n.is_power_of_two() {
                continue;
            }
            for root in 0..n {
                for placement in Placement::BOTH {
                    let c = call(coll, n, root, placement);
                    assert_eq!(direct_ok(&c, n), !staged_by_design(coll, placement));
                    if direct_ok(&c, n) {
                        assert_eq!(conflict(&c, n), None, "{coll} n={n} root={root}");
                    }
                }
            }
        }
    }
}

#[test]
fn in_place_alltoall_and_sendrecv_would_race_which_is_why_they_run_staged() {
    for coll in [Collective::AllToAll, Collective::SendRecv] {
        let c = call(coll, 3, 0, Placement::InPlace);
        assert!(conflict(&c, 3).is_some(), "{coll}");
        assert!(!direct_ok(&c, 3));
    }
}
