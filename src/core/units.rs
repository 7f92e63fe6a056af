//! Number parsing for command-line values: byte sizes (`-b -e -i`, nccl-tests' `parsesize`)
//! and integers (every other numeric flag, C's `strtol(s, NULL, 0)`); and byte counts written
//! back as text, one function per output format, so no layer keeps its own copy:
//! * [`size_arg`] `8G`, `1536`: the form [`parse_size`] reads (profiles written by
//!   `make-profile`);
//! * [`compact_bytes`] `1.5K`, `64K`: analysis reports and plots, as nccl-tests users read sizes;
//! * [`iec_bytes`] `1.50 GiB`, `8 B`: messages;
//! * [`iec_bytes_whole`] `8 GiB`, `1.50 KiB`: acceptance check names, whole when exact;
//! * [`decimal_bytes`] `1.23 GB`, `384 MB`: the NCCL backend's memory line, as nccl-tests.
//!
//! Both accept what nccl-tests accepts, and reject what nccl-tests silently misreads:
//! * sizes: a decimal number (fraction and exponent allowed: `0.5M`, `1e3`) or a `0x` hex
//!   integer, optional whitespace, then at most one unit letter `K`/`k`, `M`/`m`, `G`/`g`
//!   (1024-based). After the unit only `B`/`b`/`iB`/`ib` may follow (`1GB`, `4KiB`); nccl-tests
//!   ignores anything there, we reject other trailing text. The byte count is truncated to an
//!   integer (`1.5K` = 1536, `0.3` = 0). Negative, NaN, infinite or over-`u64` values are errors.
//! * integers: decimal, `0x` hex, and leading-`0` octal as in C (`010` = 8). nccl-tests reads
//!   non-numbers as 0 and ignores trailing junk; both are errors here.

/// Parses a byte size as described in the module doc.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let s = text.trim();
    if s.starts_with('-') {
        return Err(format!("size '{text}' is negative"));
    }
    let unsigned = s.strip_prefix('+').unwrap_or(s);
    let (number, rest) = split_number(unsigned);
    if number.is_empty() {
        return Err(format!(
            "'{text}' is not a size (expected e.g. 8, 1K, 0.5M, 1GB)"
        ));
    }
    let rest = rest.trim_start();
    let mut chars = rest.chars();
    let unit: u64 = match chars.next() {
        None => 1,
        Some('K' | 'k') => 1 << 10,
        Some('M' | 'm') => 1 << 20,
        Some('G' | 'g') => 1 << 30,
        Some(c) => {
            return Err(format!(
                "unknown suffix '{c}' in size '{text}' (use K, M or G, 1024-based)"
            ))
        }
    };
    if !matches!(chars.as_str(), "" | "B" | "b" | "iB" | "ib") {
        return Err(format!(
            "unexpected '{}' after the unit in size '{text}'",
            chars.as_str()
        ));
    }
    let too_big = || format!("size '{text}' is too large");
    if let Some(hex) = number.strip_prefix("0x").or(number.strip_prefix("0X")) {
        let value = u64::from_str_radix(hex, 16).map_err(|_| too_big())?;
        return value.checked_mul(unit).ok_or_else(too_big);
    }
    if number.bytes().all(|b| b.is_ascii_digit()) {
        // Exact integer arithmetic: f64 would round counts above 2^53.
        let value: u64 = number.parse().map_err(|_| too_big())?;
        return value.checked_mul(unit).ok_or_else(too_big);
    }
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a size"))?;
    let bytes = value * unit as f64;
    // 2^64 is exactly representable; anything at or above it does not fit.
    if !bytes.is_finite() || bytes >= 18_446_744_073_709_551_616.0 {
        return Err(too_big());
    }
    Ok(bytes.trunc() as u64)
}

/// Splits the longest leading number (`0x` hex digits, or digits with optional fraction and
/// exponent, as `strtod` reads them) from the rest.
fn split_number(s: &str) -> (&str, &str) {
    let b = s.as_bytes();
    let digits_from = |mut i: usize, hex: bool| {
        while i < b.len() && (b[i].is_ascii_digit() || hex && b[i].is_ascii_hexdigit()) {
            i += 1;
        }
        i
    };
    if (s.starts_with("0x") || s.starts_with("0X")) && b.len() > 2 && b[2].is_ascii_hexdigit() {
        return s.split_at(digits_from(2, true));
    }
    let int_end = digits_from(0, false);
    let mut end = int_end;
    if end < b.len() && b[end] == b'.' {
        let frac_end = digits_from(end + 1, false);
        if int_end > 0 || frac_end > end + 1 {
            end = frac_end;
        }
    }
    if end == 0 {
        return ("", s);
    }
    if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let mut i = end + 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_end = digits_from(i, false);
        if exp_end > i {
            end = exp_end;
        }
    }
    s.split_at(end)
}

/// Parses an integer the way C's `strtol(s, NULL, 0)` reads it (decimal, `0x` hex, leading-`0`
/// octal, optional sign, surrounding whitespace), but rejects empty input, trailing text and
/// values outside `i64`.
pub fn parse_int(text: &str) -> Result<i64, String> {
    let s = text.trim();
    let (negative, unsigned) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) =
        if let Some(hex) = unsigned.strip_prefix("0x").or(unsigned.strip_prefix("0X")) {
            (16, hex)
        } else if unsigned.len() > 1 && unsigned.starts_with('0') {
            (8, &unsigned[1..])
        } else {
            (10, unsigned)
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        let hint = if radix == 8 && digits.chars().all(|c| c.is_ascii_digit()) {
            " (a leading 0 means octal, as in C)"
        } else {
            ""
        };
        return Err(format!("'{text}' is not an integer{hint}"));
    }
    let magnitude = u64::from_str_radix(digits, radix)
        .ok()
        .filter(|&m| m <= i64::MAX as u64 + u64::from(negative));
    match magnitude {
        Some(m) if negative => Ok((m as i64).wrapping_neg()),
        Some(m) => Ok(m as i64),
        None => Err(format!("integer '{text}' is out of range")),
    }
}

/// `bytes` as [`parse_size`] reads it back: the largest of `G`, `M`, `K` it is a whole
/// multiple of (`8G`, `3M`), else plain digits (`1536`, `0`).
pub fn size_arg(bytes: u64) -> String {
    for (shift, unit) in [(30, 'G'), (20, 'M'), (10, 'K')] {
        if bytes > 0 && bytes % (1 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// 1024-based suffixes of [`compact_bytes`] (`8B`, `64K`, `1M`, `1G`).
const COMPACT_UNITS: [&str; 7] = ["B", "K", "M", "G", "T", "P", "E"];

/// A size with a 1024-based one-letter suffix and no space: exact multiples print whole
/// (`64K`, `1G`), others with three significant digits (`1.5K`, `17.7M`, `177K`).
pub fn compact_bytes(bytes: u64) -> String {
    // A u64 converts to a finite, non-negative f64, so this is never the default.
    compact_bytes_f(bytes as f64).unwrap_or_default()
}

/// [`compact_bytes`] for a fractional byte count; `None` when not finite or negative.
pub fn compact_bytes_f(bytes: f64) -> Option<String> {
    if !bytes.is_finite() || bytes < 0.0 {
        return None;
    }
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < COMPACT_UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    Some(format!("{}{}", three_digits(value), COMPACT_UNITS[unit]))
}

/// `value` (0 <= value < 1024) whole when it is an integer, else with three significant
/// digits and no trailing zeros.
fn three_digits(value: f64) -> String {
    if value.fract() == 0.0 {
        return format!("{value:.0}");
    }
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{value:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// IEC units of [`iec_bytes`] and [`iec_bytes_whole`].
const IEC_UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];

/// A size in IEC units with two decimals (`1.50 GiB`), plain bytes below 1 KiB (`8 B`).
pub fn iec_bytes(b: u64) -> String {
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < IEC_UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.2} {}", IEC_UNITS[u])
    }
}

/// A size in the largest IEC unit it is a whole multiple of (`8 B`, `1 MiB`, `8 GiB`, `1024 TiB`),
/// when that leaves under 1024 of it or reaches TiB; else [`iec_bytes`] (`1.50 KiB`).
pub fn iec_bytes_whole(b: u64) -> String {
    let (mut v, mut u) = (b, 0);
    while v >= 1024 && v % 1024 == 0 && u + 1 < IEC_UNITS.len() {
        v /= 1024;
        u += 1;
    }
    if v < 1024 || u + 1 == IEC_UNITS.len() {
        format!("{v} {}", IEC_UNITS[u])
    } else {
        iec_bytes(b)
    }
}

/// Bytes in decimal (SI) units as nccl-tests prints memory (`384 MB`, `1.23 GB`, `0 B`).
pub fn decimal_bytes(b: u64) -> String {
    let v = b as f64;
    if v >= 1e9 {
        format!("{:.2} GB", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.0} MB", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.0} KB", v / 1e3)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_parsesize_table() {
        let table: &[(&str, u64)] = &[
            ("8", 8),
            ("1K", 1024),
            ("1k", 1024),
            ("0.5M", 512 * 1024),
            ("1GB", 1 << 30),
            ("1gb", 1 << 30),
            ("128MB", 128 << 20),
            ("4KiB", 4096),
            ("1e3", 1000),
            ("1.5K", 1536),
            ("32M", 32 << 20),
            ("0.3", 0),
            ("2 M", 2 << 20),
            (" 16 ", 16),
            ("+8", 8),
            (".5K", 512),
            ("1.", 1),
            ("2e1k", 20 * 1024),
            ("0x10", 16),
            ("0x10K", 16 * 1024),
            ("16G", 16 << 30),
            ("18446744073709551615", u64::MAX),
        ];
        for &(text, want) in table {
            assert_eq!(parse_size(text), Ok(want), "parse_size({text:?})");
        }
    }

    #[test]
    fn sizes_reject_what_nccl_tests_would_misread() {
        for text in [
            "",
            "  ",
            "-1",
            "-0.5K",
            "nan",
            "inf",
            "K",
            "1T",
            "1X",
            "1Kx",
            "1KBB",
            "1MiBs",
            "8B",
            "1e",
            "0x",
            "abc",
            "18446744073709551616",
            "17179869184G",
            "1e30",
            "1.5.5",
        ] {
            let err = parse_size(text).expect_err(text);
            assert!(err.contains(text.trim()) || text.trim().is_empty(), "{err}");
            assert!(!err.contains('\n'));
        }
    }

    #[test]
    fn exponent_without_digits_is_not_part_of_the_number() {
        // strtod reads "1e" as 1 followed by "e": "e" is then an unknown unit.
        assert!(parse_size("1e").unwrap_err().contains("unknown suffix 'e'"));
        assert_eq!(split_number("1e+5x"), ("1e+5", "x"));
        assert_eq!(split_number("3.25MB"), ("3.25", "MB"));
    }

    #[test]
    fn integers_read_like_strtol_base_zero() {
        let table: &[(&str, i64)] = &[
            ("0", 0),
            ("20", 20),
            ("010", 8),
            ("0x10", 16),
            ("0X1f", 31),
            ("-1", -1),
            ("+7", 7),
            (" 3 ", 3),
            ("-0x10", -16),
            ("9223372036854775807", i64::MAX),
            ("-9223372036854775808", i64::MIN),
        ];
        for &(text, want) in table {
            assert_eq!(parse_int(text), Ok(want), "parse_int({text:?})");
        }
    }

    #[test]
    fn integers_reject_junk_that_strtol_would_accept() {
        for text in [
            "",
            "abc",
            "1.5",
            "12abc",
            "08",
            "0x",
            "-",
            "1e3",
            "9223372036854775808",
            "- 1",
        ] {
            let err = parse_int(text).expect_err(text);
            assert!(err.contains(text), "{err}");
        }
        assert!(parse_int("09").unwrap_err().contains("octal"));
    }

    /// The five formats side by side: the same counts print differently on purpose, each as
    /// its readers expect, and these pin every one byte for byte.
    #[test]
    fn each_format_prints_as_its_readers_expect() {
        // (bytes, size_arg, compact, iec, iec_whole, decimal)
        let table: &[(u64, &str, &str, &str, &str, &str)] = &[
            (0, "0", "0B", "0 B", "0 B", "0 B"),
            (8, "8", "8B", "8 B", "8 B", "8 B"),
            (1000, "1000", "1000B", "1000 B", "1000 B", "1 KB"),
            (1024, "1K", "1K", "1.00 KiB", "1 KiB", "1 KB"),
            (1536, "1536", "1.5K", "1.50 KiB", "1.50 KiB", "2 KB"),
            (181_248, "177K", "177K", "177.00 KiB", "177 KiB", "181 KB"),
            (3 << 20, "3M", "3M", "3.00 MiB", "3 MiB", "3 MB"),
            (
                18_560_000,
                "18125K",
                "17.7M",
                "17.70 MiB",
                "17.70 MiB",
                "19 MB",
            ),
            (1 << 30, "1G", "1G", "1.00 GiB", "1 GiB", "1.07 GB"),
            (8 << 30, "8G", "8G", "8.00 GiB", "8 GiB", "8.59 GB"),
            (1 << 40, "1024G", "1T", "1.00 TiB", "1 TiB", "1099.51 GB"),
            (
                1 << 50,
                "1048576G",
                "1P",
                "1024.00 TiB",
                "1024 TiB",
                "1125899.91 GB",
            ),
            (
                u64::MAX,
                "18446744073709551615",
                "16E",
                "16777216.00 TiB",
                "16777216.00 TiB",
                "18446744073.71 GB",
            ),
        ];
        for &(b, arg, compact, iec, whole, decimal) in table {
            assert_eq!(size_arg(b), arg, "size_arg({b})");
            assert_eq!(compact_bytes(b), compact, "compact_bytes({b})");
            assert_eq!(iec_bytes(b), iec, "iec_bytes({b})");
            assert_eq!(iec_bytes_whole(b), whole, "iec_bytes_whole({b})");
            assert_eq!(decimal_bytes(b), decimal, "decimal_bytes({b})");
        }
    }

    #[test]
    fn size_arg_reads_back_as_the_same_count() {
        for b in [0, 1, 1023, 1024, 1536, 3 << 20, 8 << 30, 1 << 40] {
            assert_eq!(parse_size(&size_arg(b)), Ok(b), "{b}");
        }
    }

    #[test]
    fn compact_fractional_sizes_are_undefined_when_not_finite() {
        assert_eq!(compact_bytes_f(1536.0).as_deref(), Some("1.5K"));
        assert_eq!(compact_bytes_f(0.5).as_deref(), Some("0.5B"));
        assert_eq!(compact_bytes_f(f64::NAN), None);
        assert_eq!(compact_bytes_f(f64::INFINITY), None);
        assert_eq!(compact_bytes_f(-1.0), None);
    }
}
