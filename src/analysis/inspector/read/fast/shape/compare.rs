//! Comparing a shape's step with the bytes that come next: eight bytes at a time, as the
//! steps are a few dozen bytes each and most of a record's bytes are compared this way.

use super::super::cursor::Cursor;

/// Whether two slices of equal length hold the same bytes, compared eight at a time: the
/// steps of a shape are a few dozen bytes each, and a call to the C library's `memcmp` per
/// step was a tenth of the reading time.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    let word = |s: &[u8]| u64::from_ne_bytes(s.try_into().expect("eight bytes"));
    let (mut x, mut y) = (a, b);
    while x.len() >= 8 {
        if word(&x[..8]) != word(&y[..8]) {
            return false;
        }
        (x, y) = (&x[8..], &y[8..]);
    }
    if x.len() >= 4 {
        let half = |s: &[u8]| u32::from_ne_bytes(s.try_into().expect("four bytes"));
        let n = x.len();
        // Two overlapping words cover 4 to 7 bytes.
        return half(&x[..4]) == half(&y[..4]) && half(&x[n - 4..]) == half(&y[n - 4..]);
    }
    x.iter().zip(y).all(|(p, q)| p == q)
}

/// Whether `lit` comes next at `c`, byte for byte (consumed if so).
#[inline]
pub(super) fn follows(c: &mut Cursor<'_>, lit: &[u8]) -> bool {
    let rest = c.rest();
    let yes = rest.len() >= lit.len() && same(&rest[..lit.len()], lit);
    if yes {
        c.advance(lit.len());
    }
    yes
}
