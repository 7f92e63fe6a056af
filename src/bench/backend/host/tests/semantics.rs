//! Every collective, out-of-place and in-place (at a nonzero base offset), against the naive
//! model: each rank's whole send and receive allocations are compared, so bytes outside the
//! result regions must come through untouched.

use super::model::{mix, model, value};
use crate::bench::backend::host::HostBackend;
use crate::bench::backend::{rank_args, Backend, Buf, BufPtr, Call, RankArgs};
use crate::core::collective::{Collective, Traffic};
use crate::core::dtype::DataType;
use crate::core::error::Error;
use crate::core::numeric::store;
use crate::core::op::RedOp;
use crate::result::Placement;

/// Requested bytes per case: nonzero counts for every dtype at 8 ranks, and not a multiple of
/// the chunk alignment.
const SIZE: usize = 1000;
/// The shared base offset (as buffer rotation or `-u` would give).
const BASE: usize = 40;

/// Every rank's `[send, recv]` allocation.
pub(super) fn snapshot(be: &mut HostBackend, n: usize) -> Vec<[Vec<u8>; 2]> {
    (0..n)
        .map(|r| {
            [Buf::Send, Buf::Recv].map(|buf| {
                let mut v = Vec::new();
                let len = be.arena.len(r, buf);
                be.inspect(r, buf, 0, len, &mut |b| v = b.to_vec()).unwrap();
                v
            })
        })
        .collect()
}

/// Fills every allocation entirely with elements of `dtype` derived from `seed`.
pub(super) fn fill_all(be: &mut HostBackend, n: usize, dtype: DataType, seed: u64) {
    for r in 0..n {
        for (k, buf) in [Buf::Send, Buf::Recv].into_iter().enumerate() {
            let len = be.arena.len(r, buf);
            be.fill(r, buf, 0, len, &mut |b| {
                for i in 0..b.len() / dtype.size() {
                    let h = mix(seed ^ (r as u64) << 40 ^ (k as u64) << 36 ^ i as u64);
                    store(dtype, b, i, value(dtype, h));
                }
            })
            .unwrap();
        }
    }
}

/// Runs `call` on freshly filled buffers and compares every allocation with the model.
pub(super) fn check_call(be: &mut HostBackend, call: &Call, label: &str) -> Result<(), Error> {
    let n = call.ranks.len();
    fill_all(
        be,
        n,
        call.dtype,
        mix(label.len() as u64 ^ call.count as u64),
    );
    let before = snapshot(be, n);
    be.launch(call)?;
    be.wait(None)?;
    let after = snapshot(be, n);
    let expected = model(call, n, &before);
    for r in 0..n {
        for (k, name) in ["send", "recv"].iter().enumerate() {
            let (got, want) = (&after[r][k], &expected[r][k]);
            if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
                panic!("{label}: rank {r} {name} allocation differs first at byte {i}");
            }
        }
    }
    Ok(())
}

/// Allocates for one case of the sweep and checks it.
fn check_case(
    be: &mut HostBackend,
    coll: Collective,
    dtype: DataType,
    op: RedOp,
    root: usize,
    placement: Placement,
) {
    let n = be.info.nranks;
    let shape = coll.shape(&Traffic::default(), SIZE, dtype, n);
    let elt = dtype.size();
    let send = BASE + shape.send_elems * elt + 24;
    let recv = BASE + shape.send_elems.max(shape.recv_elems) * elt + 24;
    be.allocate(send, recv).unwrap();
    let call = Call {
        coll,
        dtype,
        op,
        root,
        count: shape.count,
        traffic: Default::default(),
        ranks: (0..n)
            .map(|r| rank_args(coll, &shape, dtype, r, placement, BASE))
            .collect(),
    };
    let label = format!("{coll} {dtype} {op} root {root} on {n} ranks, {placement:?}");
    check_call(be, &call, &label).unwrap();
}

/// Roots to try: all of them for small communicators, the two ends for larger ones.
fn roots(coll: Collective, n: usize) -> Vec<usize> {
    match (coll.rooted(), n) {
        (false, _) => vec![0],
        (true, 1..=4) => (0..n).collect(),
        (true, _) => vec![0, n - 1],
    }
}

fn sweep(colls: &[Collective], dtypes: &[DataType], ops: &[RedOp]) {
    for n in [1, 2, 3, 4, 8] {
        let mut be = HostBackend::new(n).unwrap();
        for &coll in colls {
            if coll.needs_power_of_two_ranks() && !n.is_power_of_two() {
                continue;
            }
            for &dtype in dtypes {
                for &op in ops {
                    for root in roots(coll, n) {
                        for placement in Placement::BOTH {
                            check_case(&mut be, coll, dtype, op, root, placement);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn data_movement_collectives_match_the_model() {
    let colls: Vec<Collective> = Collective::ALL
        .into_iter()
        .filter(|c| !c.reduces())
        .collect();
    let dtypes = [
        DataType::Int8,
        DataType::Half,
        DataType::Float,
        DataType::Double,
    ];
    sweep(&colls, &dtypes, &[RedOp::Sum]);
}

#[test]
fn all_reduce_matches_the_model_for_every_dtype_and_op() {
    sweep(&[Collective::AllReduce], &DataType::ALL, &RedOp::ALL);
}

#[test]
fn reduce_matches_the_model_for_every_dtype_and_op() {
    sweep(&[Collective::Reduce], &DataType::ALL, &RedOp::ALL);
}

#[test]
fn reduce_scatter_matches_the_model_for_every_dtype_and_op() {
    sweep(&[Collective::ReduceScatter], &DataType::ALL, &RedOp::ALL);
}

/// Arguments with the send region `shift` elements after the receive region, both in the
/// receive allocation: overlaps the plans were not built for, which must run staged.
fn shifted(coll: Collective, n: usize, count: usize, shift: usize) -> Call {
    let at = |offset| BufPtr {
        buf: Buf::Recv,
        offset,
    };
    Call {
        coll,
        dtype: DataType::Float,
        op: RedOp::Sum,
        root: n - 1,
        count,
        traffic: Default::default(),
        ranks: vec![
            RankArgs {
                send: at(BASE + shift * 4),
                recv: at(BASE),
            };
            n
        ],
    }
}

#[test]
fn partially_overlapping_buffers_behave_as_if_all_inputs_were_read_first() {
    for coll in Collective::ALL {
        let n = 4;
        let mut be = HostBackend::new(n).unwrap();
        be.allocate(BASE + 64 * 4 * n, BASE + 80 * 4 * n).unwrap();
        for shift in [1, 5] {
            let call = shifted(coll, n, 16, shift);
            check_call(&mut be, &call, &format!("{coll} shifted by {shift}")).unwrap();
        }
    }
}

#[test]
fn a_zero_count_changes_nothing() {
    for coll in Collective::ALL {
        let mut be = HostBackend::new(4).unwrap();
        be.allocate(256, 256).unwrap();
        let shape = coll.shape(&Traffic::default(), 8, DataType::Float, 4);
        let call = Call {
            coll,
            dtype: DataType::Float,
            op: RedOp::Sum,
            root: 1,
            count: 0,
            traffic: Default::default(),
            ranks: (0..4)
                .map(|r| rank_args(coll, &shape, DataType::Float, r, Placement::InPlace, 16))
                .collect(),
        };
        check_call(&mut be, &call, &format!("{coll} count 0")).unwrap();
    }
}
