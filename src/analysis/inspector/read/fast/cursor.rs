//! The JSON grammar the fast path reads, one token at a time over the bytes of one object:
//! whitespace, objects member by member, strings of printable ASCII without escapes, unsigned
//! integers, plain decimals, `null`, and any well-formed value skipped. Every method returns
//! `None` where serde must decide instead (see the parent module).

use super::shape::{Mark, Slot};
use std::borrow::Cow;

/// Nesting depth beyond which the fast path leaves the object to serde (serde_json's own limit
/// is 128).
pub(super) const MAX_DEPTH: u32 = 64;

/// Powers of ten up to the most fraction digits the exact path takes (all exact in `f64`).
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// Bytes [`Cursor::string`] took, all printable ASCII, as text.
pub(super) fn ascii(bytes: &[u8]) -> &str {
    debug_assert!(bytes.iter().all(|b| (0x20..0x7f).contains(b)));
    // SAFETY: `Cursor::string` returns only bytes in 0x20..0x7f, which are ASCII and so UTF-8;
    // `std::str::from_utf8` here was an eighth of the reader's time in a profile.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// A position in the bytes of one object, and, while learning, where each value read lay.
pub(super) struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
    /// Where each field's value lay (`None`: not learning).
    marks: Option<Vec<Mark>>,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(b: &'a [u8]) -> Self {
        Cursor {
            b,
            i: 0,
            marks: None,
        }
    }

    /// A cursor that notes where each value read through [`Cursor::slot`] lay, in `marks`
    /// (emptied first).
    pub(super) fn learning(b: &'a [u8], mut marks: Vec<Mark>) -> Self {
        marks.clear();
        Cursor {
            b,
            i: 0,
            marks: Some(marks),
        }
    }

    /// The marks noted (empty when not learning).
    pub(super) fn into_marks(self) -> Vec<Mark> {
        self.marks.unwrap_or_default()
    }

    /// How many bytes were read.
    pub(super) fn at(&self) -> usize {
        self.i
    }

    /// Reads a value with `f` and, while learning, notes where it lay as `slot`'s.
    #[inline]
    pub(super) fn slot<T>(
        &mut self,
        slot: Slot,
        f: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<T> {
        let start = self.i;
        let value = f(self)?;
        if let Some(marks) = &mut self.marks {
            marks.push(Mark {
                start,
                end: self.i,
                slot,
            });
        }
        Some(value)
    }

    /// Notes, while learning, that a section's value starts here.
    pub(super) fn begin(&mut self, slot: Slot) {
        self.slot(slot, |_| Some(()));
    }

    /// The bytes not read yet.
    pub(super) fn rest(&self) -> &'a [u8] {
        &self.b[self.i..]
    }

    /// Steps over `n` bytes the caller has checked.
    pub(super) fn advance(&mut self, n: usize) {
        self.i += n;
    }

    /// The next byte after JSON whitespace, not consumed.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        while let Some(&c) = self.b.get(self.i) {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(c);
            }
            self.i += 1;
        }
        None
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// An object's members: `f` reads each value after its key.
    pub(super) fn members(
        &mut self,
        mut f: impl FnMut(&mut Self, &'a [u8]) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        self.list(b'}', |c| {
            let key = c.string()?;
            c.eat(b':')?;
            f(c, key)
        })
    }

    /// The items of an object or array after its opening byte, up to `close`: `item` reads
    /// each, and they are separated by commas.
    fn list(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if self.eat(close).is_some() {
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.i += 1,
                c if c == close => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A known section: an object (serde also takes an array for a struct: left to it).
    pub(super) fn section<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        self.object(1, f)
    }

    pub(super) fn object<T>(
        &mut self,
        depth: u32,
        f: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<T> {
        (self.peek()? == b'{' && depth <= MAX_DEPTH).then_some(())?;
        f(self)
    }

    /// The bytes of a string of printable ASCII without escapes.
    #[inline]
    fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' | 0..=0x1f | 0x7f.. => return None,
                _ => self.i += 1,
            }
        }
        self.i += 1;
        Some(&self.b[start..self.i - 1])
    }

    /// Whether the value is `null` (consumed if so).
    pub(super) fn null(&mut self) -> Option<bool> {
        if self.peek()? != b'n' {
            return Some(false);
        }
        self.literal(b"null")?;
        Some(true)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    pub(super) fn opt_str(&mut self) -> Option<Option<Cow<'a, str>>> {
        if self.null()? {
            return Some(None);
        }
        Some(Some(Cow::Borrowed(ascii(self.string()?))))
    }

    /// Digits of an unsigned integer without a leading zero; the value and the digit count.
    #[inline]
    fn digits(&mut self) -> Option<(u64, usize)> {
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(&d @ b'0'..=b'9') = self.b.get(self.i) {
            v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            self.i += 1;
        }
        let n = self.i - start;
        if n == 0 || (n > 1 && self.b[start] == b'0') {
            return None;
        }
        Some((v, n))
    }

    /// Whether a fraction or exponent follows (not consumed).
    fn more_number(&self) -> bool {
        matches!(self.b.get(self.i), Some(b'.' | b'e' | b'E'))
    }

    pub(super) fn opt_u64(&mut self) -> Option<Option<u64>> {
        if self.null()? {
            return Some(None);
        }
        self.peek()?;
        let (v, _) = self.digits()?;
        (!self.more_number()).then_some(Some(v))
    }

    pub(super) fn opt_u32(&mut self) -> Option<Option<u32>> {
        match self.opt_u64()? {
            Some(v) => Some(Some(u32::try_from(v).ok()?)),
            None => Some(None),
        }
    }

    /// A non-negative number without an exponent, as `f64`.
    fn number(&mut self) -> Option<f64> {
        let start = self.i;
        let (int, int_digits) = self.digits()?;
        if self.b.get(self.i) != Some(&b'.') {
            return (!self.more_number()).then_some(int as f64);
        }
        self.i += 1;
        let frac_start = self.i;
        let mut sig = int;
        while let Some(&d @ b'0'..=b'9') = self.b.get(self.i) {
            sig = sig.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            self.i += 1;
        }
        let frac = self.i - frac_start;
        if frac == 0 || matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            return None;
        }
        if int_digits + frac <= 15 {
            // Both exact in f64: one division rounds correctly.
            return Some(sig as f64 / POW10[frac]);
        }
        std::str::from_utf8(&self.b[start..self.i])
            .ok()?
            .parse()
            .ok()
    }

    pub(super) fn opt_f64(&mut self) -> Option<Option<f64>> {
        if self.null()? {
            return Some(None);
        }
        self.peek()?;
        Some(Some(self.number()?))
    }

    /// A bandwidth: a number, or a string or `null` read as not written.
    pub(super) fn bandwidth(&mut self) -> Option<Option<f64>> {
        match self.peek()? {
            b'n' => self.literal(b"null").map(|_| None),
            b'"' => self.string().map(|_| None),
            _ => Some(Some(self.number()?)),
        }
    }

    /// Skips one well-formed value at nesting `depth`.
    pub(super) fn skip(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.members(|c, _| c.skip(depth + 1)),
            b'[' => {
                self.i += 1;
                self.list(b']', |c| c.skip(depth + 1))
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => {
                if self.b[self.i] == b'-' {
                    self.i += 1;
                }
                self.digits_any()?;
                if self.b.get(self.i) == Some(&b'.') {
                    self.i += 1;
                    self.run_of_digits()?;
                }
                if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
                    self.i += 1;
                    if matches!(self.b.get(self.i), Some(b'+' | b'-')) {
                        self.i += 1;
                    }
                    self.run_of_digits()?;
                }
                Some(())
            }
        }
    }

    /// An integer part of any length (no leading zero).
    fn digits_any(&mut self) -> Option<()> {
        let start = self.i;
        self.run_of_digits()?;
        (self.i - start == 1 || self.b[start] != b'0').then_some(())
    }

    /// One or more digits.
    fn run_of_digits(&mut self) -> Option<()> {
        let start = self.i;
        while matches!(self.b.get(self.i), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        (self.i > start).then_some(())
    }
}
