//! The plugin's record objects read in one pass without serde: the common case (keys and
//! strings of printable ASCII without escapes, unsigned integers, plain decimals) is walked by
//! hand into the same [`Raw`] the serde path builds, and anything else gives up (`None`) so the
//! serde path reads the object and has the last word, errors and their wording included.
//!
//! So the fast path must never accept what serde would read differently. It takes only
//! well-formed JSON (the grammar is checked in skipped values too), gives up on a known field
//! written twice inside a section (serde's derive refuses that), on a value of a type serde's
//! struct would not take, on escapes, control or non-ASCII bytes in strings, on negative
//! numbers, exponents and integers too large for their field, and on nesting deeper than
//! [`MAX_DEPTH`]. Sections other than the known four are skipped like serde skips them, the
//! first unknown section's name kept. Decimals parse to the correctly rounded `f64`, as
//! serde_json's `float_roundtrip` does: exactly `digits / 10^k` while both are exact in `f64`,
//! else the standard library's (correctly rounding) parser. Tests hold the two paths equal on
//! mutated records.

use super::json::{Header, Meta, Perf, Raw, TraceTs};
use serde::de::IgnoredAny;
use std::borrow::Cow;

/// Nesting depth beyond which the fast path leaves the object to serde (serde_json's own limit
/// is 128).
const MAX_DEPTH: u32 = 64;

/// Exact powers of ten in `f64` (10^22 is the largest).
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// Reads the object at the start of `text` (`text[0] == b'{'`); its length and its content, or
/// `None` where serde must decide.
pub(super) fn raw(text: &[u8]) -> Option<(usize, Raw<'_>)> {
    let mut c = Cursor { b: text, i: 0 };
    let mut raw = Raw::default();
    c.members(|c, key| {
        match key {
            b"header" => raw.header = Some(c.section(header)?),
            b"metadata" => raw.metadata = Some(c.section(meta)?),
            b"coll_perf" => raw.coll = Some(c.section(perf)?),
            b"p2p_perf" => raw.p2p = Some(c.section(perf)?),
            other => {
                if raw.other.is_none() {
                    raw.other = Some(ascii(other).to_string());
                }
                c.skip(1)?;
            }
        }
        Some(())
    })?;
    Some((c.i, raw))
}

/// Bytes [`Cursor::string`] took, all printable ASCII, as text.
fn ascii(bytes: &[u8]) -> &str {
    debug_assert!(bytes.iter().all(|b| (0x20..0x7f).contains(b)));
    // SAFETY: `Cursor::string` returns only bytes in 0x20..0x7f, which are ASCII and so UTF-8;
    // `std::str::from_utf8` here would be a fifth of the reader's time.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// Marks field `bit` as seen; `None` when it was (serde refuses a duplicate field).
fn once(seen: &mut u32, bit: u32) -> Option<()> {
    if *seen & bit != 0 {
        return None;
    }
    *seen |= bit;
    Some(())
}

/// Stores the value read for field `bit` in `slot`, once.
fn put<T>(seen: &mut u32, bit: u32, slot: &mut T, value: Option<T>) -> Option<()> {
    once(seen, bit)?;
    *slot = value?;
    Some(())
}

fn header<'a>(c: &mut Cursor<'a>) -> Option<Header<'a>> {
    let (mut h, mut seen) = (Header::default(), 0);
    c.members(|c, key| {
        match key {
            b"id" => put(&mut seen, 1, &mut h.id, c.opt_str())?,
            b"comm_name" => put(&mut seen, 2, &mut h.comm_name, c.opt_str())?,
            b"rank" => put(&mut seen, 4, &mut h.rank, c.opt_u32())?,
            b"n_ranks" => put(&mut seen, 8, &mut h.n_ranks, c.opt_u32())?,
            b"nnodes" => put(&mut seen, 16, &mut h.nnodes, c.opt_u32())?,
            _ => c.skip(2)?,
        }
        Some(())
    })?;
    Some(h)
}

fn meta<'a>(c: &mut Cursor<'a>) -> Option<Meta<'a>> {
    let (mut m, mut seen) = (Meta::default(), 0);
    c.members(|c, key| {
        match key {
            b"inspector_output_format_version" => put(
                &mut seen,
                1,
                &mut m.inspector_output_format_version,
                c.opt_str(),
            )?,
            b"dump_timestamp_us" => put(&mut seen, 2, &mut m.dump_timestamp_us, c.opt_u64())?,
            b"hostname" => put(&mut seen, 4, &mut m.hostname, c.opt_str())?,
            b"pid" => put(&mut seen, 8, &mut m.pid, c.opt_u32())?,
            _ => c.skip(2)?,
        }
        Some(())
    })?;
    Some(m)
}

fn perf<'a>(c: &mut Cursor<'a>) -> Option<Perf<'a>> {
    let (mut p, mut seen) = (Perf::default(), 0);
    c.members(|c, key| {
        match key {
            b"coll" | b"p2p" => put(&mut seen, 1, &mut p.coll, c.opt_str())?,
            b"coll_sn" | b"p2p_sn" => put(&mut seen, 2, &mut p.coll_sn, c.opt_u64())?,
            b"p2p_peer" => put(&mut seen, 4, &mut p.p2p_peer, c.opt_u32())?,
            b"coll_msg_size_bytes" | b"p2p_msg_size_bytes" => {
                put(&mut seen, 8, &mut p.coll_msg_size_bytes, c.opt_u64())?
            }
            b"coll_exec_time_us" | b"p2p_exec_time_us" => {
                put(&mut seen, 16, &mut p.coll_exec_time_us, c.opt_f64())?
            }
            b"coll_timing_source" | b"p2p_timing_source" => {
                put(&mut seen, 32, &mut p.coll_timing_source, c.opt_str())?
            }
            b"coll_algobw_gbs" | b"p2p_algobw_gbs" => {
                put(&mut seen, 64, &mut p.coll_algobw_gbs, c.bandwidth())?
            }
            b"coll_busbw_gbs" | b"p2p_busbw_gbs" => {
                put(&mut seen, 128, &mut p.coll_busbw_gbs, c.bandwidth())?
            }
            b"event_trace_sn" => {
                once(&mut seen, 256)?;
                p.event_trace_sn = if c.null()? {
                    None
                } else {
                    c.skip(2)?;
                    Some(IgnoredAny)
                };
            }
            b"event_trace_ts" => {
                once(&mut seen, 512)?;
                p.event_trace_ts = if c.null()? {
                    None
                } else {
                    Some(c.object(2, trace_ts)?)
                };
            }
            _ => c.skip(2)?,
        }
        Some(())
    })?;
    Some(p)
}

fn trace_ts(c: &mut Cursor<'_>) -> Option<TraceTs> {
    let (mut t, mut seen) = (TraceTs::default(), 0);
    c.members(|c, key| {
        match key {
            b"coll_start_ts" | b"p2p_start_ts" => {
                put(&mut seen, 1, &mut t.coll_start_ts, c.opt_u64())?
            }
            _ => c.skip(3)?,
        }
        Some(())
    })?;
    Some(t)
}

/// A position in the bytes of one object.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
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
    fn members(&mut self, mut f: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            f(self, key)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A known section: an object (serde also takes an array for a struct: left to it).
    fn section<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        self.object(1, f)
    }

    fn object<T>(&mut self, depth: u32, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
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
    fn null(&mut self) -> Option<bool> {
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

    fn opt_str(&mut self) -> Option<Option<Cow<'a, str>>> {
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

    fn opt_u64(&mut self) -> Option<Option<u64>> {
        if self.null()? {
            return Some(None);
        }
        self.peek()?;
        let (v, _) = self.digits()?;
        (!self.more_number()).then_some(Some(v))
    }

    fn opt_u32(&mut self) -> Option<Option<u32>> {
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

    fn opt_f64(&mut self) -> Option<Option<f64>> {
        if self.null()? {
            return Some(None);
        }
        self.peek()?;
        Some(Some(self.number()?))
    }

    /// A bandwidth: a number, or a string or `null` read as not written.
    fn bandwidth(&mut self) -> Option<Option<f64>> {
        match self.peek()? {
            b'n' => self.literal(b"null").map(|_| None),
            b'"' => self.string().map(|_| None),
            _ => Some(Some(self.number()?)),
        }
    }

    /// Skips one well-formed value at nesting `depth`.
    fn skip(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.members(|c, _| c.skip(depth + 1)),
            b'[' => {
                self.i += 1;
                if self.eat(b']').is_some() {
                    return Some(());
                }
                loop {
                    self.skip(depth + 1)?;
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
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
