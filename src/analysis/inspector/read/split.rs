//! Where one record ends: the plugin writes each record as one JSON object followed by a
//! newline, with no separator between objects and no enclosing array, and users pretty-print
//! or concatenate such files; a crash leaves the last object cut. So objects are found by their
//! braces (outside strings; escapes inside strings honoured), whatever whitespace lies between
//! them, and an object that has not ended when the bytes end is reported as such (the caller
//! carries it into the next block, or, at the end of the file, counts its bytes as dropped).
//!
//! Bytes that do not start an object are garbage up to the next line that starts with `{`.
//! An object that does not parse, one still open after [`MAX_RECORD`] bytes (a stray quote
//! would otherwise swallow every record after it), and one still open where the file ends
//! with another record after its start (what a process that crashed mid-record and was
//! restarted leaves when it appends to the same file) are skipped up to the next record start
//! (a `{` whose first key is `header`, `coll_perf` or `p2p_perf`) inside them, so one broken
//! record costs only itself. A verbose record with 64 channels is about 15 KB.

use memchr::{memchr, memchr2, memchr3, memmem};

/// The longest record taken.
pub(super) const MAX_RECORD: usize = 1 << 20;

/// What [`scan`] found, offsets relative to the scanned bytes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Found<T> {
    /// One whole object, as the caller's parser read it.
    Object { at: usize, value: T },
    /// Bytes that are no record, with the reason.
    Garbage { at: usize, reason: String },
}

/// How an object starting at a `{` ends.
enum End {
    /// One past its closing brace.
    At(usize),
    /// Not within the bytes given.
    Open,
    /// Not within [`MAX_RECORD`] bytes.
    Overlong,
}

/// Finds the end of the object that starts at `bytes[0] == b'{'`.
fn object_end(bytes: &[u8]) -> End {
    let window = &bytes[..bytes.len().min(MAX_RECORD)];
    let (mut i, mut depth) = (0usize, 0u32);
    while i < window.len() {
        let Some(j) = memchr3(b'"', b'{', b'}', &window[i..]) else {
            break;
        };
        i += j;
        match window[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return End::At(i + 1);
                }
            }
            _ => {
                // A string: skip to its closing quote, stepping over escapes.
                i += 1;
                loop {
                    let Some(k) = memchr2(b'"', b'\\', &window[i..]) else {
                        i = window.len();
                        break;
                    };
                    i += k;
                    if window[i] == b'\\' {
                        i += 2;
                        if i >= window.len() {
                            break;
                        }
                    } else {
                        break;
                    }
                }
            }
        }
        i += 1;
    }
    if window.len() == MAX_RECORD {
        End::Overlong
    } else {
        End::Open
    }
}

/// Where scanning resumes after garbage at `from`: the next line starting with `{`.
fn resync(bytes: &[u8], from: usize) -> usize {
    memmem::find(&bytes[from..], b"\n{").map_or(bytes.len(), |k| from + k + 1)
}

/// Where the first record start after `bytes[0]` lies: a `{` followed (after whitespace) by
/// the key `header`, `coll_perf` or `p2p_perf` and its colon.
fn next_record(bytes: &[u8]) -> Option<usize> {
    let mut i = 1;
    while let Some(k) = memchr(b'{', bytes.get(i..)?) {
        i += k + 1;
        let rest = bytes[i..].trim_ascii_start();
        let key = [&b"\"header\""[..], b"\"coll_perf\"", b"\"p2p_perf\""]
            .into_iter()
            .find_map(|key| rest.strip_prefix(key));
        if key.is_some_and(|after| after.trim_ascii_start().starts_with(b":")) {
            return Some(i - 1);
        }
    }
    None
}

/// The first bytes of `bytes` as one line of text, for a reason.
fn quote(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(24)];
    let text = String::from_utf8_lossy(head).escape_debug().to_string();
    if bytes.len() > head.len() {
        format!("{text}...")
    } else {
        text
    }
}

/// Scans `bytes` from a point between records, calling `f` for each object (as `parse` read
/// it, given the text from `{` to `}`; its error is a skipped entry's reason) and each run of
/// garbage in order. `at_end`: nothing follows `bytes` (an object still open at their end is
/// then broken, not cut by a block's end). Returns how far the bytes were consumed: their
/// length, or the start of an object still open at their end.
pub(super) fn scan<'a, T>(
    bytes: &'a [u8],
    at_end: bool,
    mut parse: impl FnMut(&'a [u8]) -> Result<T, String>,
    mut f: impl FnMut(Found<T>),
) -> usize {
    let mut i = 0;
    loop {
        while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        if i == bytes.len() {
            return i;
        }
        if bytes[i] != b'{' {
            // Quoted only up to where the garbage ends: what lies beyond (the next record, or
            // nothing at a piece's end) would make the reason depend on where pieces are cut.
            let end = resync(bytes, i);
            f(Found::Garbage {
                at: i,
                reason: format!("not a JSON object: `{}`", quote(&bytes[i..end])),
            });
            i = end;
            continue;
        }
        let rest = &bytes[i..];
        i += match object_end(rest) {
            End::At(len) => match parse(&rest[..len]) {
                Ok(value) => {
                    f(Found::Object { at: i, value });
                    len
                }
                Err(reason) => broken(&rest[..len], reason, i, &mut parse, &mut f),
            },
            End::Open if !at_end => return i,
            End::Open => match next_record(rest) {
                Some(_) => broken(rest, "a record cut short".into(), i, &mut parse, &mut f),
                // The file's last record, cut: the caller counts its bytes.
                None => return i,
            },
            End::Overlong => {
                f(Found::Garbage {
                    at: i,
                    reason: format!("an object still open after {MAX_RECORD} bytes"),
                });
                next_record(rest).unwrap_or_else(|| resync(rest, 1))
            }
        };
    }
}

/// Reports the object `text` that did not parse (`reason`, unless cut) and returns how many of
/// its bytes to skip: up to the next record start inside it, where the reason is what `parse`
/// says of the bytes before it; else all of them.
fn broken<'a, T>(
    text: &'a [u8],
    reason: String,
    at: usize,
    parse: &mut impl FnMut(&'a [u8]) -> Result<T, String>,
    f: &mut impl FnMut(Found<T>),
) -> usize {
    let (len, reason) = match next_record(text) {
        Some(k) => (k, parse(&text[..k]).err().unwrap_or(reason)),
        None => (text.len(), reason),
    };
    f(Found::Garbage { at, reason });
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What scanning `bytes` finds, each object as its text (an object that holds `bad` or
    /// does not end with `}` does not parse), and how far it consumed.
    fn scanned(bytes: &[u8], at_end: bool, bad: &str) -> (Vec<(usize, String)>, usize) {
        let mut out = Vec::new();
        let consumed = scan(
            bytes,
            at_end,
            |text| {
                let text = String::from_utf8_lossy(text).to_string();
                match text.contains(bad) || !text.ends_with('}') {
                    true => Err(format!("bad: {text}")),
                    false => Ok(text),
                }
            },
            |f| match f {
                Found::Object { at, value } => out.push((at, value)),
                Found::Garbage { at, reason } => out.push((at, format!("garbage: {reason}"))),
            },
        );
        (out, consumed)
    }

    fn found(bytes: &[u8]) -> (Vec<(usize, String)>, usize) {
        scanned(bytes, false, "\0never")
    }

    #[test]
    fn a_broken_record_costs_only_itself() {
        let one = r#"{"header":{"n":1}}"#;
        let cut_short = r#"{"header":{"n":"#;
        // Cut mid-record, the next record appended on the same line or on the next.
        for sep in ["", "\n"] {
            let text = format!("{one}\n{cut_short}{sep}{one}\n{one}\n");
            let second = one.len() + 1;
            let third = second + cut_short.len() + sep.len();
            let (objs, consumed) = scanned(text.as_bytes(), false, "\0never");
            // Open where the bytes end: left for the next block.
            assert_eq!((objs, consumed), (vec![(0, one.to_string())], second));
            let (objs, consumed) = scanned(text.as_bytes(), true, "\0never");
            assert_eq!(
                objs,
                [
                    (0, one.to_string()),
                    (second, format!("garbage: bad: {}", &text[second..third])),
                    (third, one.to_string()),
                    (third + one.len() + 1, one.to_string()),
                ],
                "{sep:?}"
            );
            assert_eq!(consumed, text.len());
        }
        // An object whose braces close but which does not parse, a record start inside it.
        let text = format!("{{\"header\":x{one}}}\n{one}");
        let (objs, consumed) = scanned(text.as_bytes(), false, ":x");
        assert_eq!(
            objs,
            [
                (0, "garbage: bad: {\"header\":x".to_string()),
                (11, one.to_string()),
                (
                    11 + one.len(),
                    "garbage: not a JSON object: `}\\n`".to_string()
                ),
                (13 + one.len(), one.to_string()),
            ]
        );
        assert_eq!(consumed, text.len());
        // A file's last record, cut, with no record after it: left for the caller to count.
        let text = format!("{one}\n{cut_short}");
        let (objs, consumed) = scanned(text.as_bytes(), true, "\0never");
        assert_eq!((objs.len(), consumed), (1, one.len() + 1));
    }

    #[test]
    fn objects_are_split_by_their_braces_whatever_lies_between() {
        let text = br#"{"a":"}{\"x"}{"b":{"c":[1,{}]}}
  {"d":"\\"}  "#;
        let (objs, consumed) = found(text);
        assert_eq!(
            objs,
            [
                (0, r#"{"a":"}{\"x"}"#.to_string()),
                (13, r#"{"b":{"c":[1,{}]}}"#.to_string()),
                (34, r#"{"d":"\\"}"#.to_string()),
            ]
        );
        assert_eq!(consumed, text.len());
    }

    #[test]
    fn an_open_object_stops_the_scan_at_its_start() {
        for cut in [r#"{"a":1} {"b"#, r#"{"a":1} {"b":"x\"#, r#"{"a":1} {"#] {
            let (objs, consumed) = found(cut.as_bytes());
            assert_eq!(objs, [(0, r#"{"a":1}"#.to_string())], "{cut}");
            assert_eq!(consumed, 8, "{cut}");
        }
    }

    #[test]
    fn garbage_runs_to_the_next_line_that_starts_an_object() {
        let text = b"xyz {\"no\":1}\n{\"a\":1}\n\0\0";
        let (objs, consumed) = found(text);
        assert_eq!(
            objs,
            [
                (
                    0,
                    r#"garbage: not a JSON object: `xyz {\"no\":1}\n`"#.to_string()
                ),
                (13, r#"{"a":1}"#.to_string()),
                (21, "garbage: not a JSON object: `\\0\\0`".to_string()),
            ]
        );
        assert_eq!(consumed, text.len());
    }

    #[test]
    fn an_overlong_object_is_garbage_and_the_scan_goes_on() {
        let mut text = b"{\"a\":\"".to_vec();
        text.resize(MAX_RECORD + 10, b'x');
        text.extend_from_slice(b"\n{\"b\":2}");
        let (objs, consumed) = found(&text);
        assert_eq!(
            objs,
            [
                (
                    0,
                    format!("garbage: an object still open after {MAX_RECORD} bytes")
                ),
                (MAX_RECORD + 11, r#"{"b":2}"#.to_string()),
            ]
        );
        assert_eq!(consumed, text.len());
    }
}
