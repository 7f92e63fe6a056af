//! Every collective, end to end through `prepare` -> the mock's naive model -> `check`: a correct
//! execution verifies with 0 wrong for every dtype, every op where the collective reduces, rank
//! counts 1, 2, 3, 4, 8, both placements and a misaligning nonzero base.

use super::mock::Mock;
use super::reducer::Order;
use crate::bench::backend::{rank_args, Backend, Call};
use crate::bench::verify::{check, prepare, CheckCase};
use crate::core::collective::{Collective, Traffic};
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::result::Placement;

/// Requested size of every case, in bytes.
const SIZE: usize = 1024;

/// The case of `coll` over `n` ranks with a nonzero root and a base that is not a multiple of 16.
pub(crate) fn case(
    coll: Collective,
    dtype: DataType,
    op: RedOp,
    n: usize,
    placement: Placement,
) -> CheckCase {
    CheckCase {
        coll,
        dtype,
        op,
        root: n / 2,
        traffic: Default::default(),
        shape: coll.shape(&Traffic::default(), SIZE, dtype, n),
        nranks: n,
        first_rank: 0,
        local_ranks: n,
        base: 16 + 3 * dtype.size(),
        placement,
        seed: 99,
    }
}

/// A mock with both allocations large enough for `c` in either placement, prepared.
pub(crate) fn prepared(c: &CheckCase, order: Order) -> Mock {
    let elt = c.dtype.size();
    let elems = c.shape.send_elems.max(c.shape.recv_elems);
    let mut mock = Mock::new(c.nranks);
    mock.order = order;
    mock.allocate(c.base + elems * elt, c.base + elems * elt)
        .unwrap();
    prepare(&mut mock, c).unwrap();
    mock
}

/// Launches the case's call on the mock.
pub(crate) fn launch(mock: &mut Mock, c: &CheckCase) {
    let ranks = (0..c.nranks)
        .map(|r| rank_args(c.coll, &c.shape, c.dtype, r, c.placement, c.base))
        .collect();
    let call = Call {
        coll: c.coll,
        dtype: c.dtype,
        op: c.op,
        root: c.root,
        count: c.shape.count,
        traffic: Default::default(),
        ranks,
    };
    mock.launch(&call).unwrap();
}

/// Runs every case of `coll` and asserts a correct execution has no wrong element.
fn all_cases_verify(coll: Collective) {
    let ops: &[RedOp] = if coll.reduces() {
        &RedOp::ALL
    } else {
        &[RedOp::Sum]
    };
    let ranks: &[usize] = if coll.needs_power_of_two_ranks() {
        &[1, 2, 4, 8]
    } else {
        &[1, 2, 3, 4, 8]
    };
    for dtype in DataType::ALL {
        for &op in ops {
            for &n in ranks {
                for placement in Placement::BOTH {
                    let c = case(coll, dtype, op, n, placement);
                    assert!(c.shape.count > 0, "{coll} {dtype} n={n}: empty case");
                    let mut mock = prepared(&c, Order::Tree);
                    launch(&mut mock, &c);
                    let wrong = check(&mut mock, &c).unwrap();
                    assert_eq!(wrong, 0, "{coll} {dtype} {op} n={n} {}", placement.name());
                }
            }
        }
    }
}

#[test]
fn all_reduce_verifies() {
    all_cases_verify(Collective::AllReduce);
}

#[test]
fn reduce_verifies() {
    all_cases_verify(Collective::Reduce);
}

#[test]
fn reduce_scatter_verifies() {
    all_cases_verify(Collective::ReduceScatter);
}

#[test]
fn broadcast_verifies() {
    all_cases_verify(Collective::Broadcast);
}

#[test]
fn all_gather_verifies() {
    all_cases_verify(Collective::AllGather);
}

#[test]
fn gather_verifies() {
    all_cases_verify(Collective::Gather);
}

#[test]
fn scatter_verifies() {
    all_cases_verify(Collective::Scatter);
}

#[test]
fn alltoall_verifies() {
    all_cases_verify(Collective::AllToAll);
}

#[test]
fn alltoallv_verifies() {
    all_cases_verify(Collective::AllToAllv);
}

#[test]
fn sendrecv_verifies() {
    all_cases_verify(Collective::SendRecv);
}

#[test]
fn hypercube_verifies() {
    all_cases_verify(Collective::Hypercube);
}

#[test]
fn a_case_outside_the_communicator_is_a_usage_error_not_a_panic() {
    let mut c = case(
        Collective::Reduce,
        DataType::Float,
        RedOp::Sum,
        2,
        Placement::OutOfPlace,
    );
    let mut mock = prepared(&c, Order::Left);
    c.root = 2;
    assert!(matches!(
        check(&mut mock, &c),
        Err(crate::core::error::Error::Usage(_))
    ));
    c.root = 0;
    c.first_rank = 1;
    assert!(prepare(&mut mock, &c).is_err());
}

#[test]
fn a_process_driving_some_ranks_prepares_and_checks_exactly_its_global_ranks() {
    use crate::bench::backend::Buf;
    for coll in [
        Collective::ReduceScatter,
        Collective::AllToAll,
        Collective::AllToAllv,
        Collective::Gather,
    ] {
        let full = case(coll, DataType::Int32, RedOp::Sum, 4, Placement::InPlace);
        let mut whole = prepared(&full, Order::Left);
        // The process that drives global ranks 2 and 3 only.
        let part = CheckCase {
            first_rank: 2,
            local_ranks: 2,
            ..full.clone()
        };
        let mut half = Mock::new(2);
        let bytes = whole.buffer(0, Buf::Recv).len();
        half.allocate(bytes, bytes).unwrap();
        prepare(&mut half, &part).unwrap();
        for (local, global) in [(0, 2), (1, 3)] {
            for buf in [Buf::Send, Buf::Recv] {
                let want = whole.buffer(global, buf).clone();
                assert!(
                    *half.buffer(local, buf) == want,
                    "{coll} rank {global} {buf:?}"
                );
            }
        }
        launch(&mut whole, &full);
        for (local, global) in [(0, 2), (1, 3)] {
            for buf in [Buf::Send, Buf::Recv] {
                *half.buffer(local, buf) = whole.buffer(global, buf).clone();
            }
        }
        assert_eq!(check(&mut half, &part).unwrap(), 0, "{coll}");
        // Rank 1's result is not rank 3's: checking it as rank 3 fails.
        *half.buffer(1, Buf::Recv) = whole.buffer(1, Buf::Recv).clone();
        assert!(check(&mut half, &part).unwrap() > 0, "{coll}");
    }
}
