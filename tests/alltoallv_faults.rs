//! The verifier against alltoallv's own faults, for every type on 3 and 4 ranks: a segment
//! delivered to the wrong peer (the intended receiver keeps its zeros, the other one gets the
//! wrong data) and a short segment (its tail never arrives). `#wrong` must equal the number
//! of elements that really differ from the clean result. Each case carries its own traffic:
//! generated (spread 1, the default) or a matrix with unequal totals.

use ncclbench::bench::backend::host::HostBackend;
use ncclbench::bench::backend::{rank_args, Backend, Buf, Call};
use ncclbench::bench::verify::{self, CheckCase};
use ncclbench::core::collective::alltoallv::{pair_elems, parse_matrix};
use ncclbench::core::collective::{Collective, Traffic};
use ncclbench::core::dtype::DataType;
use ncclbench::core::op::RedOp;
use ncclbench::result::Placement;
use std::sync::Arc;

const SIZE: usize = 3 * 1024;
const BASE: usize = 16;

fn case(dtype: DataType, n: usize) -> CheckCase {
    case_with(Traffic::default(), dtype, n)
}

fn case_with(traffic: Traffic, dtype: DataType, n: usize) -> CheckCase {
    let coll = Collective::AllToAllv;
    CheckCase {
        coll,
        dtype,
        op: RedOp::Sum,
        root: 0,
        shape: coll.shape(&traffic, SIZE, dtype, n),
        traffic: Arc::new(traffic),
        nranks: n,
        first_rank: 0,
        local_ranks: n,
        base: BASE,
        placement: Placement::OutOfPlace,
        seed: 77,
    }
}

fn call(c: &CheckCase) -> Call {
    Call {
        coll: c.coll,
        dtype: c.dtype,
        op: c.op,
        root: 0,
        count: c.shape.count,
        traffic: c.traffic.clone(),
        ranks: (0..c.nranks)
            .map(|r| rank_args(c.coll, &c.shape, c.dtype, r, c.placement, c.base))
            .collect(),
    }
}

/// A verified clean run.
fn clean(c: &CheckCase) -> HostBackend {
    let mut b = HostBackend::new(c.nranks).unwrap();
    let alloc = SIZE + BASE + 64;
    b.allocate(alloc, alloc).unwrap();
    verify::prepare(&mut b, c).unwrap();
    b.launch(&call(c)).unwrap();
    b.wait(None).unwrap();
    assert_eq!(verify::check(&mut b, c).unwrap(), 0, "{c:?}");
    b
}

fn bytes(b: &mut HostBackend, rank: usize, buf: Buf, offset: usize, len: usize) -> Vec<u8> {
    let mut out = Vec::new();
    b.inspect(rank, buf, offset, len, &mut |d| out = d.to_vec())
        .unwrap();
    out
}

fn put(b: &mut HostBackend, rank: usize, offset: usize, data: &[u8]) {
    b.fill(rank, Buf::Recv, offset, data.len(), &mut |d| {
        d.copy_from_slice(data)
    })
    .unwrap();
}

/// Byte offset of `src`'s segment in `dst`'s receive buffer, and its length in elements.
fn segment(c: &CheckCase, src: usize, dst: usize) -> (usize, usize) {
    let pair = |s, d| pair_elems(&c.traffic, c.shape.count, c.dtype.size(), s, d, c.nranks);
    let before: usize = (0..src).map(|k| pair(k, dst)).sum();
    let recv = call(c).ranks[dst].recv.offset;
    (recv + before * c.dtype.size(), pair(src, dst))
}

/// Elements (of `elt` bytes) that differ between two byte strings.
fn differing(a: &[u8], b: &[u8], elt: usize) -> u64 {
    a.chunks(elt)
        .zip(b.chunks(elt))
        .filter(|(x, y)| x != y)
        .count() as u64
}

/// Every receive region of the run, to count what a fault changed.
fn regions(b: &mut HostBackend, c: &CheckCase) -> Vec<u8> {
    let len = c.shape.recv_elems * c.dtype.size();
    (0..c.nranks)
        .flat_map(|r| bytes(b, r, Buf::Recv, call(c).ranks[r].recv.offset, len))
        .collect()
}

#[test]
fn a_segment_sent_to_the_wrong_peer_is_counted_exactly() {
    for dtype in DataType::ALL {
        for n in [3, 4] {
            let c = case(dtype, n);
            let elt = dtype.size();
            let mut b = clean(&c);
            let before = regions(&mut b, &c);
            // Rank 0's segment for rank 1 lands at rank 2, where rank 0's segment belongs.
            let (at1, len1) = segment(&c, 0, 1);
            let (at2, len2) = segment(&c, 0, 2);
            assert!(len1 > 0 && len2 > 0, "{c:?}");
            let meant_for_1 = bytes(&mut b, 1, Buf::Recv, at1, len1 * elt);
            put(&mut b, 1, at1, &vec![0u8; len1 * elt]);
            let k = len1.min(len2) * elt;
            put(&mut b, 2, at2, &meant_for_1[..k]);
            let diff = differing(&before, &regions(&mut b, &c), elt);
            let wrong = verify::check(&mut b, &c).unwrap();
            assert_eq!(wrong, diff, "{dtype} n {n}");
            assert!(
                wrong as usize > len1 / 2,
                "{dtype} n {n}: {wrong} of {len1}"
            );
        }
    }
}

#[test]
fn a_short_segment_is_counted_exactly() {
    for dtype in DataType::ALL {
        for n in [3, 4] {
            let c = case(dtype, n);
            let elt = dtype.size();
            let mut b = clean(&c);
            let before = regions(&mut b, &c);
            // The last three elements of rank 2's segment for rank 1 never arrive.
            let (at, len) = segment(&c, 2, 1);
            put(&mut b, 1, at + (len - 3) * elt, &vec![0u8; 3 * elt]);
            let diff = differing(&before, &regions(&mut b, &c), elt);
            let wrong = verify::check(&mut b, &c).unwrap();
            assert_eq!(wrong, diff, "{dtype} n {n}");
            assert!(wrong > 0, "{dtype} n {n}");
        }
    }
}

#[test]
fn matrix_traffic_faults_are_counted_exactly() {
    // Unequal totals: received 176, 80 and 80 bytes, so ranks 1 and 2 have a tail that the
    // call must leave alone.
    let m = parse_matrix("0 64 32\n160 0 48\n16 16 0\n", "m", 1.0).unwrap();
    let traffic = Traffic::Matrix(m);
    for dtype in DataType::ALL {
        let c = case_with(traffic.clone(), dtype, 3);
        let elt = dtype.size();
        assert_eq!(
            (c.shape.count, c.shape.recv_elems * elt),
            (0, 176),
            "{dtype}"
        );
        // A write one element past rank 1's own total.
        let mut b = clean(&c);
        let before = regions(&mut b, &c);
        let (at, len) = segment(&c, 2, 1);
        put(&mut b, 1, at + len * elt, &vec![0x5a; elt]);
        let diff = differing(&before, &regions(&mut b, &c), elt);
        assert_eq!(
            (verify::check(&mut b, &c).unwrap(), diff),
            (1, 1),
            "{dtype}"
        );
        // Rank 1's segment from rank 0 delivered to rank 2 instead (over rank 0's segment).
        let mut b = clean(&c);
        let before = regions(&mut b, &c);
        let (at1, len1) = segment(&c, 0, 1);
        let (at2, len2) = segment(&c, 0, 2);
        let meant_for_1 = bytes(&mut b, 1, Buf::Recv, at1, len1 * elt);
        put(&mut b, 1, at1, &vec![0u8; len1 * elt]);
        put(&mut b, 2, at2, &meant_for_1[..len1.min(len2) * elt]);
        let diff = differing(&before, &regions(&mut b, &c), elt);
        let wrong = verify::check(&mut b, &c).unwrap();
        assert!(wrong == diff && wrong > 0, "{dtype}: {wrong} vs {diff}");
        // Rank 1's segment for rank 0 arrives one element short.
        let mut b = clean(&c);
        let before = regions(&mut b, &c);
        let (at, len) = segment(&c, 1, 0);
        put(&mut b, 0, at + (len - 1) * elt, &vec![0u8; elt]);
        let diff = differing(&before, &regions(&mut b, &c), elt);
        assert_eq!(verify::check(&mut b, &c).unwrap(), diff, "{dtype}");
    }
}
