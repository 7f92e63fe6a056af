//! The host path in bounded pieces: every collective verifies clean when each run is filled and
//! checked a few elements at a time, no fill or inspection asks the backend for more than the
//! chunk, and wrong elements are counted exactly in every chunk, not only the first.

use super::collectives::{case, launch};
use super::mock::Mock;
use crate::bench::backend::{rank_args, Backend, Buf};
use crate::bench::verify::{check, check_in_chunks, prepare_in_chunks, CheckCase};
use crate::core::collective::Collective;
use crate::core::dtype::DataType;
use crate::core::op::RedOp;
use crate::result::Placement;

/// 42 bytes: not a multiple of any element size, so a chunk rounds down to whole elements.
const CHUNK: usize = 42;

/// A mock prepared for `c` in chunks of [`CHUNK`] bytes, the call launched.
fn launched(c: &CheckCase) -> Mock {
    let elems = c.shape.send_elems.max(c.shape.recv_elems);
    let bytes = c.base + elems * c.dtype.size();
    let mut mock = Mock::new(c.nranks);
    mock.allocate(bytes, bytes).unwrap();
    prepare_in_chunks(&mut mock, c, CHUNK).unwrap();
    launch(&mut mock, c);
    mock
}

#[test]
fn every_collective_verifies_clean_in_chunks_no_larger_than_asked() {
    for coll in Collective::ALL {
        for dtype in DataType::ALL {
            for placement in [Placement::OutOfPlace, Placement::InPlace] {
                let c = case(coll, dtype, RedOp::Sum, 4, placement);
                let mut mock = launched(&c);
                let wrong = check_in_chunks(&mut mock, &c, CHUNK).unwrap();
                assert_eq!(wrong, 0, "{} {dtype} {placement:?}", coll.name());
                assert!(mock.largest > 0, "{} {dtype}: nothing filled", coll.name());
                assert!(
                    mock.largest <= CHUNK,
                    "{} {dtype} {placement:?}: {} bytes at once",
                    coll.name(),
                    mock.largest
                );
            }
        }
    }
}

#[test]
fn wrong_elements_in_later_chunks_are_counted_exactly() {
    let c = case(
        Collective::AllReduce,
        DataType::Float,
        RedOp::Sum,
        4,
        Placement::OutOfPlace,
    );
    let elt = c.dtype.size();
    let per_chunk = CHUNK / elt;
    let mut mock = launched(&c);
    let recv = rank_args(c.coll, &c.shape, c.dtype, 1, c.placement, c.base).recv;
    assert_eq!(recv.buf, Buf::Recv);
    // One element in the first chunk, one in the middle, and the run's last element.
    let last = c.shape.recv_elems - 1;
    for k in [0, 3 * per_chunk + 1, last] {
        mock.buffer(1, Buf::Recv)[recv.offset + k * elt + elt - 1] ^= 0x40;
    }
    assert_eq!(check_in_chunks(&mut mock, &c, CHUNK).unwrap(), 3);
    assert_eq!(check(&mut mock, &c).unwrap(), 3, "one chunk holds it all");
}
