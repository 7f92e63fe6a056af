//! The fast path against serde: on every documented record shape the fast path reads the
//! object itself, and on many thousands of mutated records (bytes changed, inserted and
//! deleted; values swapped for ones of other types, out of range, or written another way;
//! fields written twice) scanning with it yields exactly what scanning without it yields:
//! the same records, skipped entries with the same reasons, at the same offsets.

use super::super::fast;
use super::super::intern::Interner;
use super::super::json::{build, parse, Parsed, Raw};
use super::super::split::{scan, Found};
use super::{ALL_REDUCE, OLD_ALL_GATHER, SEND};
use std::path::PathBuf;
use std::sync::Arc;

/// What scanning `bytes` yields, with or without the fast path, and how far it consumed.
pub(super) fn outcomes(bytes: &[u8], quick: bool) -> (Vec<(usize, Parsed<'static>)>, usize) {
    outcomes_with(bytes, |b| if quick { fast::raw(b) } else { None })
}

/// What scanning `bytes` yields with `quick` as the fast path.
pub(super) fn outcomes_with<'a>(
    bytes: &'a [u8],
    quick: impl FnMut(&'a [u8]) -> Option<(usize, Raw<'a>)>,
) -> (Vec<(usize, Parsed<'static>)>, usize) {
    let file = Arc::new(PathBuf::from("f.log"));
    let mut sources = Interner::new(super::arena());
    let mut out = Vec::new();
    let consumed = scan(bytes, quick, |found| match found {
        Found::Read { at, value } => out.push((at, build(&value, &file, &mut sources))),
        Found::Object { at, text } => out.push((at, parse(text, &file, &mut sources))),
        Found::Garbage { at, reason } => out.push((at, Parsed::Skip(reason))),
    });
    (out, consumed)
}

/// Records of every shape the plugin writes, and forms users make of them.
pub(super) fn shapes() -> Vec<String> {
    let trace = r#","event_trace_sn":{"coll_start_sn":1,"kernel_events":[{"channel_id":0,"kernel_start_sn":3}]},"event_trace_ts":{"coll_start_ts":1752867229235059,"coll_stop_ts":1752867229235064,"kernel_events":[]}}}"#;
    let pretty = serde_json::to_string_pretty(
        &serde_json::from_str::<serde_json::Value>(ALL_REDUCE).unwrap(),
    )
    .unwrap();
    vec![
        ALL_REDUCE.to_string(),
        OLD_ALL_GATHER.to_string(),
        SEND.to_string(),
        ALL_REDUCE.strip_suffix("}}").unwrap().to_string() + trace,
        SEND.strip_suffix("}}").unwrap().to_string() + &trace.replace("coll_st", "p2p_st"),
        pretty,
        SEND.replace(r#""p2p_busbw_gbs":8.192000"#, r#""p2p_busbw_gbs":"nan""#),
        ALL_REDUCE.replace(r#""DP Group 0""#, "null"),
        ALL_REDUCE.replace(r#""coll_busbw_gbs":485.119099"#, r#""coll_busbw_gbs":null"#),
        r#"{"header":{"id":"0x1","n_ranks":2},"kernel_perf":{"x":[1,-2.5e3,true,false,null]}}"#
            .to_string(),
        ALL_REDUCE.replace(
            r#""coll_sn":1407,"#,
            r#""coll_sn":1407,"extra":{"a":[{}]},"#,
        ),
    ]
}

#[test]
fn the_fast_path_reads_every_documented_shape_itself_and_as_serde_does() {
    for shape in shapes() {
        let read = fast::raw(shape.as_bytes());
        assert_eq!(read.map(|r| r.0), Some(shape.len()), "{shape}");
        assert_eq!(
            outcomes(shape.as_bytes(), true),
            outcomes(shape.as_bytes(), false),
            "{shape}"
        );
    }
}

#[test]
fn values_serde_reads_differently_are_left_to_serde() {
    for (from, to) in [
        (r#""rank":2"#, r#""rank":2.0"#),
        (r#""rank":2"#, r#""rank":-2"#),
        (r#""rank":2"#, r#""rank":4294967296"#),
        (r#""rank":2"#, r#""rank":02"#),
        (r#""rank":2"#, r#""rank":"2""#),
        (r#""rank":2"#, r#""rank":2,"rank":3"#),
        (
            r#""coll":"AllReduce""#,
            r#""coll":"AllReduce","p2p":"Send""#,
        ),
        (
            r#""hostname":"example-hostname""#,
            r#""hostname":"h\u00e9""#,
        ),
        (
            r#""hostname":"example-hostname""#,
            "\"hostname\":\"h\u{e9}\"",
        ),
        (
            r#""coll_exec_time_us":61974"#,
            r#""coll_exec_time_us":6.1974e4"#,
        ),
        (r#""coll_busbw_gbs":485.119099"#, r#""coll_busbw_gbs":true"#),
        (r#""header":{"#, r#""header":["#),
    ] {
        let text = ALL_REDUCE.replacen(from, to, 1);
        assert!(fast::raw(text.as_bytes()).is_none(), "{text}");
        assert_eq!(
            outcomes(text.as_bytes(), true),
            outcomes(text.as_bytes(), false)
        );
    }
}

/// A small deterministic generator (xorshift64*).
pub(super) struct Rng(pub(super) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One to three random edits of `text`.
pub(super) fn mutate(rng: &mut Rng, text: &[u8]) -> Vec<u8> {
    const BYTES: &[u8] = b"{}[]\":,\\ \n\t019.-eEnulltrfa\x01\xc3\xa9";
    const VALUES: &[&str] = &[
        "-1",
        "1e3",
        "1.0",
        "0.5",
        "null",
        "\"nan\"",
        "18446744073709551616",
        "18446744073709551615",
        "4294967296",
        "0.12345678901234567",
        "123456789012.345678",
        "01",
        "true",
        "[]",
        "{}",
        "\"x\"",
        "\"a\\\"b\"",
        "1.",
    ];
    let mut t = text.to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(t.len() + 1);
        match rng.below(6) {
            0 if at < t.len() => {
                t.remove(at);
            }
            1 => t.insert(at, BYTES[rng.below(BYTES.len())]),
            2 if at < t.len() => t[at] = BYTES[rng.below(BYTES.len())],
            3 => {
                // A value after a colon replaced by one of another kind.
                if let Some(colon) = t[at..].iter().position(|&b| b == b':') {
                    let start = at + colon + 1;
                    let end = t[start..]
                        .iter()
                        .position(|&b| b == b',' || b == b'}')
                        .map_or(t.len(), |k| start + k);
                    let v = VALUES[rng.below(VALUES.len())].as_bytes();
                    t.splice(start..end, v.iter().copied());
                }
            }
            4 => {
                // A member written twice.
                if let Some(q) = t[at..].iter().position(|&b| b == b',') {
                    let start = at + q + 1;
                    if let Some(k) = t[start..].iter().position(|&b| b == b',') {
                        let member = t[start..=start + k].to_vec();
                        t.splice(start..start, member);
                    }
                }
            }
            _ => {
                // Two records back to back, the second cut.
                let cut = rng.below(text.len());
                t.push(b'\n');
                t.extend_from_slice(&text[..cut]);
            }
        }
    }
    t
}

#[test]
fn the_fast_path_reads_what_serde_reads_on_mutated_records() {
    let shapes = shapes();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut fast_read, mut left) = (0, 0);
    for i in 0..30_000 {
        let text = mutate(&mut rng, shapes[i % shapes.len()].as_bytes());
        let with = outcomes(&text, true);
        assert_eq!(
            with,
            outcomes(&text, false),
            "{}",
            String::from_utf8_lossy(&text)
        );
        match fast::raw(&text) {
            Some(_) => fast_read += 1,
            None => left += 1,
        }
    }
    // Both sides exercised: most edits leave a readable record, many make one serde must judge.
    assert!(fast_read > 5_000 && left > 5_000, "{fast_read} {left}");
}

#[test]
fn numbers_of_every_length_read_as_serde_reads_them() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let mut read_fast = 0;
    for n in 1..=24 {
        for _ in 0..40 {
            let digits: String = (0..n)
                .map(|k| {
                    let lo = if k == 0 && n > 1 { 1 } else { 0 };
                    char::from(b'0' + (lo + rng.below(10 - lo)) as u8)
                })
                .collect();
            let split = 1 + rng.below(n);
            let decimal = format!("{}.{}7", &digits[..split], &digits[split..]);
            let text = ALL_REDUCE
                .replacen("17179869184", &digits, 1)
                .replacen("1748030377748202", &digits, 1)
                .replacen("485.119099", &decimal, 1);
            read_fast += usize::from(fast::raw(text.as_bytes()).is_some());
            assert_eq!(
                outcomes(text.as_bytes(), true),
                outcomes(text.as_bytes(), false),
                "{text}"
            );
        }
    }
    // Up to 19 digits (and some of 20) are integers the fast path reads itself.
    assert!(read_fast >= 19 * 40, "{read_fast}");
}
