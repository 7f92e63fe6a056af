//! Tests of the verifiable patterns and of `prepare`/`check`: exactness under every reduction
//! order, the float `avg` tolerance proof, every collective through a mock backend, and
//! sensitivity to the faults verification exists to catch.

mod avg;
mod chunks;
mod collectives;
mod mock;
mod reduce_props;
mod reducer;
mod sensitivity;

use crate::bench::verify::{write_content, Pattern};
use crate::core::collective::Content;
use crate::core::numeric::{load, store};

/// Every rank's inputs for `elems` elements starting at global index `first`: `[rank][k]`.
pub(crate) fn inputs(p: &Pattern, first: usize, elems: usize) -> Vec<Vec<u64>> {
    let dt = p.dtype();
    (0..p.nranks())
        .map(|r| {
            let mut buf = vec![0u8; elems * dt.size()];
            write_content(p, r, Content::ReduceInput { first }, 0, &mut buf);
            (0..elems).map(|k| load(dt, &buf, k)).collect()
        })
        .collect()
}

/// Element bits as a little-endian buffer.
pub(crate) fn bytes(dt: crate::core::dtype::DataType, vals: &[u64]) -> Vec<u8> {
    let mut buf = vec![0u8; vals.len() * dt.size()];
    for (k, &v) in vals.iter().enumerate() {
        store(dt, &mut buf, k, v);
    }
    buf
}
