//! A byte cursor for reading printf-formatted messages field by field. Every read checks its
//! bounds and returns `None` on a mismatch, so a truncated or foreign line is rejected, never
//! a panic; numbers saturate instead of overflowing.

/// Reads a message left to right: the cursor is the unread rest itself, so a read is one
/// comparison and one re-slice, with no offset to check against the whole.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `s`.
    pub fn new(s: &'a [u8]) -> Self {
        Cursor { rest: s }
    }

    /// What is left.
    #[inline(always)]
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// Whether nothing is left.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// Consumes `n` bytes (at most what is left).
    #[inline]
    fn skip(&mut self, n: usize) {
        self.rest = self.rest.get(n..).unwrap_or(&[]);
    }

    /// Consumes `lit` if the rest starts with it. Always inlined: every literal is a constant,
    /// and a comparison of known length is a couple of integer compares, not a `memcmp` call.
    #[inline(always)]
    pub fn lit(&mut self, lit: &[u8]) -> Option<()> {
        self.rest = self.rest.strip_prefix(lit)?;
        Some(())
    }

    /// Skips spaces.
    #[inline]
    pub fn spaces(&mut self) {
        while let [b' ', tail @ ..] = self.rest {
            self.rest = tail;
        }
    }

    /// An unsigned decimal (at least one digit; saturates at `u64::MAX`). COLL lines carry
    /// four decimals each: the digits are read once, with plain arithmetic, since 19 digits
    /// always fit; only a longer run is read again with saturation.
    #[inline]
    pub fn uint(&mut self) -> Option<u64> {
        let s = self.rest;
        let (mut v, mut n) = (0u64, 0usize);
        while let Some(&b) = s.get(n) {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            n += 1;
        }
        if n == 0 {
            return None;
        }
        if n > 19 {
            v = s[..n].iter().fold(0u64, |v, &b| {
                v.saturating_mul(10).saturating_add(u64::from(b - b'0'))
            });
        }
        self.skip(n);
        Some(v)
    }

    /// An unsigned decimal that fits `u32`.
    #[inline]
    pub fn u32(&mut self) -> Option<u32> {
        let save = self.rest;
        match self.uint().and_then(|v| u32::try_from(v).ok()) {
            Some(v) => Some(v),
            None => {
                self.rest = save;
                None
            }
        }
    }

    /// A signed decimal.
    #[inline]
    pub fn int(&mut self) -> Option<i64> {
        let neg = self.lit(b"-").is_some();
        let v = self.uint()?;
        let v = i64::try_from(v).unwrap_or(i64::MAX);
        Some(if neg { -v } else { v })
    }

    /// Hex digits with an optional `0x` (saturates; pointers and bus ids).
    #[inline]
    pub fn hex(&mut self) -> Option<u64> {
        let _ = self.lit(b"0x");
        // One pass: digit values from a table (a branch per digit class costs more on the two
        // 12-digit pointers of every COLL line). Bits are shifted out only past 16 digits, so
        // saturation is decided after the loop, from the digits after any leading zeros.
        let (mut v, mut n) = (0u64, 0usize);
        for &b in self.rest {
            let d = HEX[usize::from(b)];
            if d == NOT_HEX {
                break;
            }
            v = (v << 4) | u64::from(d);
            n += 1;
        }
        if n == 0 {
            return None;
        }
        let digits = &self.rest[..n];
        self.skip(n);
        if n > 16 && n - digits.iter().take_while(|&&b| b == b'0').count() > 16 {
            return Some(u64::MAX);
        }
        Some(v)
    }

    /// A decimal float as printf `%f`/`%g` writes it (`12.5`, `-3`, `1e+06`, `inf`).
    pub fn float(&mut self) -> Option<f64> {
        let n = self
            .rest
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+'))
            .count();
        let text = std::str::from_utf8(&self.rest[..n]).ok()?;
        let v: f64 = text.parse().ok()?;
        self.skip(n);
        Some(v)
    }

    /// Bytes up to (not including) the next space or the end.
    #[inline]
    pub fn word(&mut self) -> &'a [u8] {
        let rest = self.rest;
        let n = space_at(rest).unwrap_or(rest.len());
        self.skip(n);
        &rest[..n]
    }

    /// Bytes up to `stop` (exclusive, consumed), or `None` when it does not occur.
    pub fn until(&mut self, stop: &[u8]) -> Option<&'a [u8]> {
        let rest = self.rest;
        let at = memchr::memmem::find(rest, stop)?;
        self.skip(at + stop.len());
        Some(&rest[..at])
    }

    /// Alphanumeric characters (and `_`).
    #[inline]
    pub fn ident(&mut self) -> &'a [u8] {
        let rest = self.rest;
        let n = rest
            .iter()
            .position(|&b| !IDENT[usize::from(b)])
            .unwrap_or(rest.len());
        self.skip(n);
        &rest[..n]
    }
}

/// Value of each hex digit byte; [`NOT_HEX`] for every other byte.
static HEX: [u8; 256] = {
    let mut t = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// [`HEX`]'s mark for a byte that is no hex digit.
const NOT_HEX: u8 = 0xff;

/// The first space in `s`, eight bytes at a time: words here are short (pointers, numbers),
/// too short for a vector search to pay for its setup.
#[inline]
pub fn space_at(s: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    let mut chunks = s.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let x = w ^ SPACES;
        // The lowest byte that is zero sets its high bit here; bytes above it may be marked
        // falsely, so only the lowest mark is read.
        let zero = x.wrapping_sub(ONES) & !x & HIGHS;
        if zero != 0 {
            return Some(at + (zero.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b' ')
        .map(|i| at + i)
}

/// Whether each byte belongs in an identifier (a table: every COLL and TUNING line starts
/// with its function's name).
static IDENT: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).is_ascii_alphanumeric() || b == b'_' as usize;
        b += 1;
    }
    t
};

/// The value after `key ` in a space-separated message (`rank 3 nranks 8 ...`): the word after
/// the first whole-word occurrence of `key`.
pub fn field<'a>(msg: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let mut words = msg.split(|&b| b == b' ').filter(|w| !w.is_empty());
    while let Some(w) = words.next() {
        if w == key {
            return words.next();
        }
    }
    None
}

/// `field` read as an unsigned decimal (leading digits only: `0-` reads 0).
pub fn field_u32(msg: &[u8], key: &[u8]) -> Option<u32> {
    Cursor::new(field(msg, key)?).u32()
}

/// `field` read as hex.
pub fn field_hex(msg: &[u8], key: &[u8]) -> Option<u64> {
    Cursor::new(field(msg, key)?).hex()
}

/// Lossy UTF-8 of at most `max` bytes (an over-long field is cut, not kept whole).
pub fn text(s: &[u8], max: usize) -> String {
    String::from_utf8_lossy(&s[..s.len().min(max)]).into_owned()
}

#[test]
fn the_cursor_rejects_what_does_not_match_and_saturates() {
    let mut c = Cursor::new(b"12 Bytes -> Algo 1 proto 2 time 3.5e1");
    assert_eq!(c.uint(), Some(12));
    assert_eq!(c.lit(b" Bytes -> Algo "), Some(()));
    assert_eq!(c.int(), Some(1));
    assert_eq!(c.lit(b" proto "), Some(()));
    assert_eq!(c.u32(), Some(2));
    assert_eq!(c.lit(b" time "), Some(()));
    assert_eq!(c.float(), Some(35.0));
    assert!(c.is_empty());
    assert_eq!(
        Cursor::new(b"99999999999999999999999").uint(),
        Some(u64::MAX)
    );
    assert_eq!(Cursor::new(b"99999999999").u32(), None);
    // Past 19 digits the value is read again with saturation: leading zeros still fit.
    assert_eq!(Cursor::new(b"000000000000000000000012").uint(), Some(12));
    assert_eq!(Cursor::new(b"18446744073709551615").uint(), Some(u64::MAX));
    assert_eq!(Cursor::new(b"18446744073709551616").uint(), Some(u64::MAX));
    assert_eq!(
        Cursor::new(b"18446744073709551614").uint(),
        Some(u64::MAX - 1)
    );
    assert_eq!(Cursor::new(b"0xffffffffffffffffffff").hex(), Some(u64::MAX));
    assert_eq!(Cursor::new(b"0x00000000000000000000aB").hex(), Some(0xab));
    assert_eq!(Cursor::new(b"FfFfFfFfFfFfFfFf").hex(), Some(u64::MAX));
    assert_eq!(Cursor::new(b"x").uint(), None);
    assert_eq!(Cursor::new(b"").float(), None);
    assert_eq!(field_u32(b"comm 0x1 rank 3 nranks 8", b"nranks"), Some(8));
    assert_eq!(field_hex(b"busId 1b000 commId 0xab", b"commId"), Some(0xab));
    assert_eq!(field(b"rank", b"rank"), None);
    assert_eq!(Cursor::new(b"All_Reduce2: x").ident(), b"All_Reduce2");
    assert_eq!(Cursor::new(b"\xc3\xa9").ident(), b"");
}

#[test]
fn the_word_and_hex_fast_paths_agree_with_byte_at_a_time_reads() {
    // Every split point of words up to 20 bytes, with and without a space, at every offset.
    let text = b"0123456789abcdefABCDEFxyz 0x7f80cafe0001 z";
    for start in 0..text.len() {
        for end in start..=text.len() {
            let s = &text[start..end];
            assert_eq!(space_at(s), s.iter().position(|&b| b == b' '), "{s:?}");
            let digits = s.iter().take_while(|b| b.is_ascii_hexdigit()).count();
            let want = (digits > 0).then(|| {
                s[..digits].iter().fold(0u64, |v, &b| {
                    let d = u64::from((b as char).to_digit(16).unwrap_or(0));
                    v.checked_mul(16).map_or(u64::MAX, |v| v | d)
                })
            });
            if !s.starts_with(b"0x") {
                assert_eq!(Cursor::new(s).hex(), want, "{s:?}");
            }
            let dec = s.iter().take_while(|b| b.is_ascii_digit()).count();
            let want = (dec > 0).then(|| {
                s[..dec].iter().fold(0u64, |v, &b| {
                    v.saturating_mul(10).saturating_add(u64::from(b - b'0'))
                })
            });
            assert_eq!(Cursor::new(s).uint(), want, "{s:?}");
        }
    }
    assert_eq!(space_at(b"        "), Some(0));
    assert_eq!(space_at(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff "), Some(9));
}
