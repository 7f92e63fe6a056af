//! Verification catches the faults it exists for: a single flipped bit, a dropped rank, swapped
//! or shifted chunks, a decoy in an output and a receive buffer the collective never wrote.

use super::collectives::{case, launch, prepared};
use super::reducer::{reduce, Order};
use super::{bytes, inputs};
use crate::bench::backend::{rank_args, Buf};
use crate::bench::verify::{check, count_wrong, tolerance, write_content, Pattern};
use crate::core::collective::{Collective, Content};
use crate::core::dtype::DataType;
use crate::core::numeric::{to_f64, width_mask};
use crate::core::op::{mulsum_scalar, RedOp};
use crate::result::Placement;

const ELEMS: usize = 64;

/// The correct reduced output of `p` for `ELEMS` elements at global index 0.
fn reduced_bytes(p: &Pattern) -> Vec<u8> {
    let mut buf = vec![0u8; ELEMS * p.dtype().size()];
    write_content(p, 0, Content::Reduced { first: 0 }, 0, &mut buf);
    buf
}

#[test]
fn one_flipped_bit_is_exactly_one_wrong_element_beyond_the_tolerance() {
    for dt in DataType::ALL {
        for op in RedOp::ALL {
            let p = Pattern::new(dt, op, 4, 21);
            let good = reduced_bytes(&p);
            let reduced = Content::Reduced { first: 0 };
            assert_eq!(count_wrong(&p, 0, reduced, 0, &good), 0);
            for bit in 0..8 * dt.size() {
                let mut bad = good.clone();
                let k = (bit * 7) % ELEMS;
                bad[k * dt.size() + bit / 8] ^= 1 << (bit % 8);
                // Flipping bit b moves the pattern by 2^b units: within tolerance only for the
                // two low bits of float avg.
                let want = ((1u64 << bit) > tolerance(dt, op)) as u64;
                assert_eq!(
                    count_wrong(&p, 0, reduced, 0, &bad),
                    want,
                    "{dt} {op} bit {bit}"
                );
                let plain = Content::Plain { first: 5 };
                let mut good = vec![0u8; bad.len()];
                write_content(&p, 0, plain, 0, &mut good);
                good[k * dt.size() + bit / 8] ^= 1 << (bit % 8);
                assert_eq!(
                    count_wrong(&p, 0, plain, 0, &good),
                    1,
                    "{dt} plain bit {bit}"
                );
            }
        }
    }
}

/// Whether rank `r`'s input `x` changes the result of `op` (its pre-multiplied contribution is
/// not the identity), computed from the values alone.
fn contributes(dt: DataType, op: RedOp, r: usize, x: u64) -> bool {
    let s = mulsum_scalar(r) as u64;
    match (dt.is_float(), op) {
        (true, RedOp::Prod) => to_f64(dt, x) != 1.0,
        (true, _) => to_f64(dt, x) != 0.0,
        (false, RedOp::Prod) => x != 1,
        (false, RedOp::MulSum) => x.wrapping_mul(s) & width_mask(dt) != 0,
        (false, _) => x != 0,
    }
}

#[test]
fn dropping_a_rank_is_caught_exactly_where_it_contributes() {
    for dt in DataType::ALL {
        for op in [RedOp::Sum, RedOp::MulSum, RedOp::Prod] {
            for n in [4usize, 8] {
                let p = Pattern::new(dt, op, n, 31);
                let ins = inputs(&p, 0, ELEMS);
                let identity = if op == RedOp::Prod { bytes_one(dt) } else { 0 };
                for dropped in 0..n {
                    let out: Vec<u64> = (0..ELEMS)
                        .map(|k| {
                            let col: Vec<u64> = (0..n)
                                .map(|r| if r == dropped { identity } else { ins[r][k] })
                                .collect();
                            reduce(dt, op, &col, Order::Tree)
                        })
                        .collect();
                    let want = ins[dropped]
                        .iter()
                        .filter(|&&x| contributes(dt, op, dropped, x))
                        .count() as u64;
                    let got =
                        count_wrong(&p, 0, Content::Reduced { first: 0 }, 0, &bytes(dt, &out));
                    assert_eq!(got, want, "{dt} {op} n={n} dropped rank {dropped}");
                    assert!(
                        want > 0 || (dt.size() == 1 && n == 8),
                        "{dt} {op} n={n}: rank {dropped} never counts"
                    );
                }
            }
        }
    }
}

/// The bits of 1 in `dt` (the product's identity).
fn bytes_one(dt: DataType) -> u64 {
    if dt.is_float() {
        crate::core::numeric::from_f64(dt, 1.0)
    } else {
        1
    }
}

/// A correct all_gather over 4 ranks, then `damage` applied to rank 2's receive buffer; returns
/// (wrong elements counted, elements whose bits changed).
fn damaged_all_gather(dt: DataType, damage: impl Fn(&mut [u8], usize)) -> (u64, u64) {
    let c = case(
        Collective::AllGather,
        dt,
        RedOp::Sum,
        4,
        Placement::OutOfPlace,
    );
    let mut mock = prepared(&c, Order::Left);
    launch(&mut mock, &c);
    let elt = dt.size();
    let recv = rank_args(c.coll, &c.shape, dt, 2, c.placement, c.base).recv;
    let region = c.base..c.base + c.shape.recv_elems * elt;
    let before = mock.buffer(2, Buf::Recv)[region.clone()].to_vec();
    damage(
        &mut mock.buffer(2, recv.buf)[region.clone()],
        c.shape.count * elt,
    );
    let after = &mock.buffer(2, Buf::Recv)[region];
    let changed = before
        .chunks(elt)
        .zip(after.chunks(elt))
        .filter(|(a, b)| a != b)
        .count();
    (check(&mut mock, &c).unwrap(), changed as u64)
}

#[test]
fn swapped_and_shifted_chunks_are_caught_element_by_element() {
    for dt in DataType::ALL {
        let (wrong, changed) = damaged_all_gather(dt, |b, chunk| {
            let (x, y) = b.split_at_mut(chunk);
            x.swap_with_slice(&mut y[..chunk]);
        });
        assert!(
            changed > 0 && wrong == changed,
            "{dt} swap: {wrong} wrong, {changed} changed"
        );
        let elt = dt.size();
        let (wrong, changed) = damaged_all_gather(dt, |b, chunk| {
            b.copy_within(chunk..2 * chunk - elt, chunk + elt);
        });
        assert!(
            changed > 0 && wrong == changed,
            "{dt} shift: {wrong} wrong, {changed} changed"
        );
    }
}

#[test]
fn an_untouched_receive_buffer_is_caught() {
    for dt in DataType::ALL {
        for op in RedOp::ALL {
            let c = case(Collective::AllReduce, dt, op, 4, Placement::OutOfPlace);
            let mut mock = prepared(&c, Order::Left);
            let wrong = check(&mut mock, &c).unwrap();
            let all = (c.nranks * c.shape.recv_elems) as u64;
            // Float sums are never zero by construction: every element is caught.
            let exact = dt.is_float() && matches!(op, RedOp::Sum | RedOp::MulSum);
            assert!(
                wrong > all / 2 && (!exact || wrong == all),
                "{dt} {op}: {wrong} of {all}"
            );
        }
        for coll in [
            Collective::Broadcast,
            Collective::AllGather,
            Collective::AllToAll,
            Collective::AllToAllv,
        ] {
            let c = case(coll, dt, RedOp::Sum, 4, Placement::OutOfPlace);
            let mut mock = prepared(&c, Order::Left);
            assert!(check(&mut mock, &c).unwrap() > 0, "{coll} {dt}");
        }
    }
}

#[test]
fn a_decoy_in_an_output_is_caught() {
    for dt in DataType::ALL {
        let p = Pattern::new(dt, RedOp::Sum, 4, 41);
        let mut decoy = vec![0u8; 256 * dt.size()];
        write_content(&p, 1, Content::Decoy, 0, &mut decoy);
        let wrong = count_wrong(&p, 1, Content::Plain { first: 0 }, 0, &decoy);
        assert!(
            wrong > 200,
            "{dt}: only {wrong} of 256 decoy elements caught"
        );
    }
}

#[test]
fn the_float_average_tolerance_is_two_units_and_no_more() {
    let dt = DataType::Half;
    let p = Pattern::new(dt, RedOp::Avg, 3, 1);
    let good = reduced_bytes(&p);
    let v = crate::core::numeric::load(dt, &good, 0);
    for (delta, want) in [(1, 0), (2, 0), (3, 1)] {
        for bits in [v + delta, v - delta] {
            let mut out = good.clone();
            crate::core::numeric::store(dt, &mut out, 0, bits);
            let got = count_wrong(&p, 0, Content::Reduced { first: 0 }, 0, &out);
            assert_eq!(got, want, "{delta} units");
        }
    }
}
