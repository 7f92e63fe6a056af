//! Proves the verifier with fault injection: a backend wrapper corrupts results in five ways
//! (flipped bit, dropped rank contribution, swapped chunks, chunk shifted by one element, stale
//! receive buffer) and the verifier's #wrong must equal the number of elements that really
//! differ from a clean run, for every collective, several types/ops, rank counts and both
//! placements; and it must be non-zero wherever the fault changed anything.

use crate::support::fault::{Fault, Faulty};
use ncclbench::bench::backend::host::HostBackend;
use ncclbench::bench::backend::{rank_args, Backend, Buf, Call};
use ncclbench::bench::verify::{self, CheckCase};
use ncclbench::core::collective::{Collective, Traffic};
use ncclbench::core::dtype::DataType;
use ncclbench::core::numeric;
use ncclbench::core::op::RedOp;
use ncclbench::result::Placement;

const SIZE: usize = 3 * 1024;
const BASE: usize = 24;

fn call_for(case: &CheckCase) -> Call {
    Call {
        coll: case.coll,
        dtype: case.dtype,
        op: case.op,
        root: case.root,
        count: case.shape.count,
        traffic: Default::default(),
        ranks: (0..case.nranks)
            .map(|r| {
                rank_args(
                    case.coll,
                    &case.shape,
                    case.dtype,
                    r,
                    case.placement,
                    case.base,
                )
            })
            .collect(),
    }
}

fn recv_elements(b: &mut dyn Backend, case: &CheckCase) -> Vec<Vec<u64>> {
    (0..case.nranks)
        .map(|r| {
            let p = call_for(case).ranks[r].recv;
            let mut out = Vec::new();
            b.inspect(
                r,
                p.buf,
                p.offset,
                case.shape.recv_elems * case.dtype.size(),
                &mut |bytes| {
                    out = (0..case.shape.recv_elems)
                        .map(|i| numeric::load(case.dtype, bytes, i))
                        .collect()
                },
            )
            .unwrap();
            out
        })
        .collect()
}

/// Runs `case` cleanly and with `fault`; returns (verifier's #wrong on the faulty run, number
/// of elements differing beyond tolerance between the two runs).
fn measure(case: &CheckCase, fault: Fault) -> (u64, u64) {
    let alloc = SIZE + BASE + 64;
    let mut clean = HostBackend::new(case.nranks).unwrap();
    let mut faulty = Faulty::new(HostBackend::new(case.nranks).unwrap(), fault);
    clean.allocate(alloc, alloc).unwrap();
    faulty.allocate(alloc, alloc).unwrap();
    let call = call_for(case);
    for b in [&mut clean as &mut dyn Backend, &mut faulty] {
        verify::prepare(b, case).unwrap();
        b.launch(&call).unwrap();
        b.wait(None).unwrap();
    }
    assert_eq!(
        verify::check(&mut clean, case).unwrap(),
        0,
        "clean run must verify: {case:?}"
    );
    let wrong = verify::check(&mut faulty, case).unwrap();
    let tol = verify::tolerance(case.dtype, case.op);
    let (a, b) = (
        recv_elements(&mut clean, case),
        recv_elements(&mut faulty, case),
    );
    let diff = a
        .iter()
        .zip(&b)
        .flat_map(|(x, y)| x.iter().zip(y))
        .filter(|(x, y)| x.abs_diff(**y) > tol)
        .count() as u64;
    (wrong, diff)
}

fn case(coll: Collective, dtype: DataType, op: RedOp, n: usize, placement: Placement) -> CheckCase {
    CheckCase {
        coll,
        dtype,
        op,
        root: 0,
        traffic: Default::default(),
        shape: coll.shape(&Traffic::default(), SIZE, dtype, n),
        nranks: n,
        first_rank: 0,
        local_ranks: n,
        base: BASE,
        placement,
        seed: 1234,
    }
}

/// (type, op) pairs covering every op and every type family.
const REDUCTIONS: [(DataType, RedOp); 8] = [
    (DataType::Float, RedOp::Sum),
    (DataType::Int32, RedOp::Prod),
    (DataType::Half, RedOp::Min),
    (DataType::Int8, RedOp::Max),
    (DataType::Double, RedOp::Avg),
    (DataType::Bfloat16, RedOp::MulSum),
    (DataType::F8e4m3, RedOp::Sum),
    (DataType::Uint64, RedOp::Avg),
];
const MOVES: [DataType; 3] = [DataType::Float, DataType::Uint8, DataType::F8e5m2];

fn all_cases() -> Vec<CheckCase> {
    let mut out = Vec::new();
    for coll in Collective::ALL {
        let ranks: &[usize] = if coll.needs_power_of_two_ranks() {
            &[2, 4]
        } else {
            &[2, 3, 4]
        };
        let pairs: Vec<(DataType, RedOp)> = if coll.reduces() {
            REDUCTIONS.to_vec()
        } else {
            MOVES.iter().map(|&d| (d, RedOp::Sum)).collect()
        };
        for &n in ranks {
            for &(d, o) in &pairs {
                for p in Placement::BOTH {
                    if p == Placement::InPlace && !coll.checks_in_place() {
                        continue;
                    }
                    out.push(case(coll, d, o, n, p));
                }
            }
        }
    }
    out
}

/// The rank whose data matters for the fault: the root where only the root sends or receives.
fn victim(c: &CheckCase) -> usize {
    match c.coll {
        Collective::Broadcast | Collective::Scatter | Collective::Reduce | Collective::Gather => {
            c.root
        }
        _ => 1,
    }
}

fn sender(c: &CheckCase) -> usize {
    match c.coll {
        Collective::Broadcast | Collective::Scatter => c.root,
        _ => 1,
    }
}

#[test]
fn a_flipped_top_bit_is_exactly_one_wrong_element() {
    for c in all_cases() {
        let bit = 8 * c.dtype.size() as u32 - 1;
        let (wrong, diff) = measure(
            &c,
            Fault::FlipBit {
                rank: victim(&c),
                elem: 1,
                bit,
            },
        );
        assert_eq!((wrong, diff), (1, 1), "{c:?}");
    }
}

#[test]
fn a_flipped_low_bit_is_one_wrong_element_except_within_float_avg_tolerance() {
    for c in all_cases() {
        let (wrong, diff) = measure(
            &c,
            Fault::FlipBit {
                rank: victim(&c),
                elem: 2,
                bit: 0,
            },
        );
        assert_eq!(wrong, diff, "{c:?}");
        let tolerated = c.dtype.is_float() && c.op == RedOp::Avg && c.coll.reduces();
        assert_eq!(wrong, if tolerated { 0 } else { 1 }, "{c:?}");
    }
}

#[test]
fn a_dropped_rank_contribution_is_counted_exactly() {
    for c in all_cases() {
        let (wrong, diff) = measure(&c, Fault::DropRank { rank: sender(&c) });
        assert_eq!(wrong, diff, "{c:?}");
        assert!(
            wrong > 0,
            "dropping rank {} went unnoticed: {c:?}",
            sender(&c)
        );
    }
}

#[test]
fn swapped_chunks_are_counted_exactly() {
    for c in all_cases() {
        let (wrong, diff) = measure(&c, Fault::SwapChunks { rank: victim(&c) });
        assert_eq!(wrong, diff, "{c:?}");
        assert!(wrong > 0, "swap went unnoticed: {c:?}");
    }
}

#[test]
fn a_chunk_shifted_by_one_element_is_counted_exactly() {
    for c in all_cases() {
        let (wrong, diff) = measure(&c, Fault::ShiftChunk { rank: victim(&c) });
        assert_eq!(wrong, diff, "{c:?}");
        assert!(wrong > 0, "shift went unnoticed: {c:?}");
    }
}

#[test]
fn a_stale_receive_buffer_is_counted_exactly() {
    for c in all_cases() {
        let (wrong, diff) = measure(&c, Fault::Stale);
        assert_eq!(wrong, diff, "{c:?}");
        assert!(wrong > 0, "stale buffer went unnoticed: {c:?}");
    }
}

#[test]
fn buffers_are_untouched_outside_the_receive_region_by_the_fault_wrapper() {
    // Guards the harness itself: a flip outside the region must not happen.
    let c = case(
        Collective::AllReduce,
        DataType::Float,
        RedOp::Sum,
        2,
        Placement::OutOfPlace,
    );
    let (wrong, diff) = measure(
        &c,
        Fault::FlipBit {
            rank: 0,
            elem: c.shape.recv_elems,
            bit: 3,
        },
    );
    assert_eq!((wrong, diff), (0, 0));
    let _ = Buf::Recv;
}
