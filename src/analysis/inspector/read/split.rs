//! Where one record ends: the plugin writes each record as one JSON object followed by a
//! newline, with no separator between objects and no enclosing array, and users pretty-print
//! or concatenate such files; a crash leaves the last object cut. So objects are found by their
//! braces (outside strings; escapes inside strings honoured), whatever whitespace lies between
//! them, and an object that has not ended when the bytes end is reported as such (the caller
//! carries it into the next block, or, at the end of the file, counts its bytes as dropped).
//!
//! Bytes that do not start an object are garbage up to the next line that starts with `{`,
//! as is an object still open after [`MAX_RECORD`] bytes (a stray quote would otherwise
//! swallow every record after it). A verbose record with 64 channels is about 15 KB.

use memchr::{memchr2, memchr3, memmem};

/// The longest record taken.
pub(super) const MAX_RECORD: usize = 1 << 20;

/// What [`scan`] found, offsets relative to the scanned bytes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Found<'a, T> {
    /// One whole object already read by the quick reader.
    Read { at: usize, value: T },
    /// One whole object (from `{` to `}`) left to the caller.
    Object { at: usize, text: &'a [u8] },
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

/// Scans `bytes` from a point between records, calling `f` for each object and each run of
/// garbage in order. Each object is first offered to `quick`, given the bytes from its `{` on
/// (at most [`MAX_RECORD`]), which returns the object's length and what it read of it, or
/// `None` to have the object found by its braces and passed on as text. Returns how far the
/// bytes were consumed: their length, or the start of an object still open at their end.
pub(super) fn scan<'a, T>(
    bytes: &'a [u8],
    mut quick: impl FnMut(&'a [u8]) -> Option<(usize, T)>,
    mut f: impl FnMut(Found<'a, T>),
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
        if let Some((len, value)) = quick(&bytes[i..bytes.len().min(i + MAX_RECORD)]) {
            f(Found::Read { at: i, value });
            i += len;
            continue;
        }
        match object_end(&bytes[i..]) {
            End::At(len) => {
                f(Found::Object {
                    at: i,
                    text: &bytes[i..i + len],
                });
                i += len;
            }
            End::Open => return i,
            End::Overlong => {
                f(Found::Garbage {
                    at: i,
                    reason: format!("an object still open after {MAX_RECORD} bytes"),
                });
                i = resync(bytes, i + 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(bytes: &[u8]) -> (Vec<(usize, String)>, usize) {
        let mut out = Vec::new();
        let consumed = scan(
            bytes,
            |_| None::<(usize, ())>,
            |f| match f {
                Found::Object { at, text } => out.push((at, String::from_utf8_lossy(text).into())),
                Found::Garbage { at, reason } => out.push((at, format!("garbage: {reason}"))),
                Found::Read { .. } => unreachable!(),
            },
        );
        (out, consumed)
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
