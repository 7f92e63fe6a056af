//! Finding NCCL's line prefix anywhere in a physical line: `host:pid:tid [cudaDev] NCCL INFO `,
//! from 2.26 optionally after a timestamp (docs/nccl-log-formats.md lists every level's form).
//!
//! Every rank writes to the same stdout without a lock, so one physical line can hold the tail
//! of one message glued to a whole other one, and launchers put their own tags in front
//! (`[1,0]<stdout>:`, ` 0: `, `Thu Jul 18 ...<stdout>:`). Rather than strip every launcher
//! format, the search is unanchored: each ` NCCL INFO ` / ` NCCL WARN ` / ` NCCL TRACE ` /
//! ` NCCL CALL ` marker is located with one substring search and the `host:pid:tid [dev]`
//! fields are read backwards from it. A message runs to the start of the next prefix or the
//! end of the line. Nothing here allocates.

/// The level word after `NCCL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// `INFO`.
    Info,
    /// `WARN` (carries the source `file:line`).
    Warn,
    /// `TRACE` (TRACE builds only).
    Trace,
    /// `CALL`.
    Call,
}

/// One prefixed message found in a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefixed<'a> {
    /// Hostname (cut at the first `.` by NCCL).
    pub host: &'a [u8],
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// `[cudaDev]`, absent on CALL lines.
    pub dev: Option<u32>,
    /// The level.
    pub level: Level,
    /// `file.cc:123` of a WARN or TRACE line (empty otherwise).
    pub source: &'a [u8],
    /// The message after the prefix, without trailing CR.
    pub msg: &'a [u8],
}

/// The ` NCCL ` marker's searcher for [`Finder::each`] (the parser takes its markers from the
/// scan of a whole buffer instead).
#[cfg(test)]
static MARKER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b" NCCL "));

/// Finds prefixed messages (a handle on the shared searcher; copying it is free).
#[derive(Debug, Default, Clone, Copy)]
pub struct Finder;

/// A marker found: where its prefix starts, and where its message starts.
struct Hit<'a> {
    start: usize,
    msg_start: usize,
    fields: Prefixed<'a>,
}

impl Finder {
    /// Calls `f` for each prefixed message in `line`, in order. Returns whether `line`
    /// contains `NCCL` at all (cheap test for lines of other programs).
    #[cfg(test)]
    pub fn each<'a>(&self, line: &'a [u8], f: impl FnMut(Prefixed<'a>)) -> bool {
        self.each_at(line, MARKER.find_iter(line), f)
    }

    /// [`Finder::each`] with the ` NCCL ` markers of `line` already found (`markers`: their
    /// offsets, ascending), as a scan of a whole buffer finds them.
    pub fn each_at<'a>(
        &self,
        line: &'a [u8],
        markers: impl Iterator<Item = usize>,
        mut f: impl FnMut(Prefixed<'a>),
    ) -> bool {
        let mut pending: Option<Hit<'a>> = None;
        let mut any = false;
        for pos in markers {
            any = true;
            let Some(hit) = hit_at(line, pos) else {
                continue;
            };
            if let Some(mut prev) = pending.take() {
                if hit.start >= prev.msg_start {
                    prev.fields.msg = trim_cr(&line[prev.msg_start..hit.start]);
                    f(prev.fields);
                } else {
                    // A marker inside the previous prefix: keep the outer one's fields.
                    pending = Some(prev);
                    continue;
                }
            }
            pending = Some(hit);
        }
        if let Some(mut last) = pending {
            last.fields.msg = trim_cr(&line[last.msg_start..]);
            f(last.fields);
        }
        any
    }
}

/// Reads the prefix that ends at the ` NCCL ` marker at `pos`.
fn hit_at(line: &[u8], pos: usize) -> Option<Hit<'_>> {
    let after = &line[pos + 6..];
    let (level, word) = if after.starts_with(b"INFO ") {
        (Level::Info, 5)
    } else if after.starts_with(b"WARN ") {
        (Level::Warn, 5)
    } else if after.starts_with(b"TRACE ") {
        (Level::Trace, 6)
    } else if after.starts_with(b"CALL ") {
        (Level::Call, 5)
    } else {
        return None;
    };
    let msg_start = pos + 6 + word;
    let mut end = pos; // exclusive end of the token being read backwards
    let mut source: &[u8] = &[];
    if level == Level::Warn || level == Level::Trace {
        // `file.cc:123` (2.30 WARN may add ` (function)` after it; TRACE has `%f func:line`).
        let (mut s, mut e) = token_before(line, end)?;
        if line[s] == b'(' && level == Level::Warn {
            (s, e) = token_before(line, s.checked_sub(1)?)?;
        }
        source = &line[s..e];
        end = s.checked_sub(1)?;
        if level == Level::Trace {
            let (s, _) = token_before(line, end)?;
            end = s.checked_sub(1)?;
        }
    }
    let mut dev = None;
    if level != Level::Call {
        // `[cudaDev]`: the space-free token before `end`, read back byte by byte (it is three
        // or four bytes; a search for the space before it costs more than the walk).
        let close = end.checked_sub(1)?;
        if line.get(close) != Some(&b']') {
            return None;
        }
        let (n, open) = number_back(line, close)?;
        let open = open.checked_sub(1)?;
        if line[open] != b'[' || open == 0 || line[open - 1] != b' ' {
            return None;
        }
        dev = Some(n);
        end = open - 1;
    }
    if line.get(end) != Some(&b' ') && level != Level::Call {
        return None;
    }
    let (host_start, host, pid, tid) = host_pid_tid(line, end)?;
    Some(Hit {
        start: host_start,
        msg_start,
        fields: Prefixed {
            host,
            pid,
            tid,
            dev,
            level,
            source,
            msg: &[],
        },
    })
}

/// The space-free token ending just before `end` (which holds a space or is the marker).
fn token_before(line: &[u8], end: usize) -> Option<(usize, usize)> {
    let head = line.get(..end)?;
    let start = memchr::memrchr(b' ', head).map_or(0, |i| i + 1);
    (start < end).then_some((start, end))
}

/// Reads `host:pid:tid` ending just before `end`; the host is the longest run of characters
/// NCCL can print in a (cut) hostname, so launcher tags glued in front are left out.
fn host_pid_tid(line: &[u8], end: usize) -> Option<(usize, &[u8], u32, u32)> {
    let (tid, at) = number_back(line, end)?;
    let at = at.checked_sub(1).filter(|&i| line[i] == b':')?;
    let (pid, at) = number_back(line, at)?;
    let at = at.checked_sub(1).filter(|&i| line[i] == b':')?;
    let mut host_start = at;
    while host_start > 0 && HOST[usize::from(line[host_start - 1])] {
        host_start -= 1;
    }
    // A hostname does not start with '-' (a table row's `-1` glued in front does).
    while host_start < at && line[host_start] == b'-' {
        host_start += 1;
    }
    if host_start == at {
        return None;
    }
    Some((host_start, &line[host_start..at], pid, tid))
}

/// Whether NCCL can print each byte in a hostname (a table: the test runs on every byte of
/// every prefix's host).
static HOST: [bool; 256] = {
    let mut t = [true; 256];
    let not = b" \t\n\x0c\r:[].<>/\0";
    let mut i = 0;
    while i < not.len() {
        t[not[i] as usize] = false;
        i += 1;
    }
    t
};

/// The whole decimal `u32` whose digits end just before `end` (1-10 digits, no sign, no
/// overflow), and where its digits start. Read once, backwards, value and all: every prefix
/// holds three.
fn number_back(s: &[u8], end: usize) -> Option<(u32, usize)> {
    let s = s.get(..end)?;
    let (mut start, mut v, mut scale) = (end, 0u64, 1u64);
    while start > 0 {
        let d = s[start - 1].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if end - start == 10 {
            return None;
        }
        v += u64::from(d) * scale;
        scale *= 10;
        start -= 1;
    }
    if start == end {
        return None;
    }
    Some((u32::try_from(v).ok()?, start))
}

/// Drops trailing CR/LF and a launcher tag (`[1,0]<stdout>:`) glued before the next prefix.
fn trim_cr(s: &[u8]) -> &[u8] {
    let mut s = s;
    while let [rest @ .., b'\r' | b'\n'] = s {
        s = rest;
    }
    if s.ends_with(b">:") {
        if let Some(open) = memchr::memrchr(b'[', s) {
            let tag = &s[open..];
            if tag.ends_with(b"]<stdout>:") || tag.ends_with(b"]<stderr>:") {
                s = &s[..open];
            }
        }
    }
    s
}

/// (host, pid, tid, dev, level, source, message) of each prefixed message.
#[cfg(test)]
type Found = (String, u32, u32, Option<u32>, Level, String, String);

#[cfg(test)]
fn all(line: &str) -> Vec<Found> {
    let mut v = Vec::new();
    Finder.each(line.as_bytes(), |p| {
        v.push((
            String::from_utf8_lossy(p.host).into_owned(),
            p.pid,
            p.tid,
            p.dev,
            p.level,
            String::from_utf8_lossy(p.source).into_owned(),
            String::from_utf8_lossy(p.msg).into_owned(),
        ))
    });
    v
}

#[test]
fn prefixes_are_found_behind_launcher_tags_and_timestamps() {
    let got = all("[1,0]<stdout>:node-0:25:66 [0] NCCL INFO Using network IB\r");
    assert_eq!(
        got,
        vec![(
            "node-0".into(),
            25,
            66,
            Some(0),
            Level::Info,
            String::new(),
            "Using network IB".into()
        )]
    );
    let got = all("[2026-03-03 12:11:38] h:185303:186751 [1] transport/net_ib.cc:2453 NCCL WARN NET/IB : oops");
    assert_eq!(got[0].0, "h");
    assert_eq!(got[0].4, Level::Warn);
    assert_eq!(got[0].5, "transport/net_ib.cc:2453");
    assert_eq!(got[0].6, "NET/IB : oops");
    let got = all("h:1:2 [3] misc/x.cc:9 (fn) NCCL WARN w");
    assert_eq!((got[0].5.as_str(), got[0].6.as_str()), ("misc/x.cc:9", "w"));
    let got = all("h:1:2 NCCL CALL ncclCommInitRank(...)");
    assert_eq!((got[0].3, got[0].4), (None, Level::Call));
}

#[test]
fn glued_lines_split_into_their_messages() {
    // The first message was cut off by another rank's whole line (as in real logs).
    let got =
        all("a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[b:2:2 [1] NCCL INFO Connected all rings");
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].6, "Channel 00/0 : 0[0] -> 1[");
    assert_eq!(
        (got[1].0.as_str(), got[1].6.as_str()),
        ("b", "Connected all rings")
    );
    // Table cells with a prefix glued inside: the number before the host is not the host.
    let got = all("[1,0]<stdout>:a:1:1 [0] NCCL INFO m1[1,1]<stdout>:b:2:2 [0] NCCL INFO m2");
    assert_eq!((got[0].6.as_str(), got[1].6.as_str()), ("m1", "m2"));
    let got = all("    12.3  45.6 host7:9:9 [2] NCCL INFO x");
    assert_eq!(got[0].0, "host7");
}

#[test]
fn text_that_only_looks_like_a_prefix_is_ignored() {
    for line in [
        "NCCL version 2.18.3+cuda12.2",
        " NCCL INFO",
        "h:1:2 [x] NCCL INFO m",
        ":1:2 [0] NCCL INFO m",
        "h:99999999999:2 [0] NCCL INFO m",
        "[0] NCCL INFO m",
        " NCCL WARN ",
        "x NCCL TRACE y",
    ] {
        assert!(all(line).is_empty(), "{line}");
    }
}

#[test]
fn the_host_table_is_the_hostname_rule() {
    // ASCII whitespace, the prefix's and launcher tags' punctuation, and NUL end a hostname.
    for b in 0..=255u8 {
        let rule = !(b.is_ascii_whitespace()
            || matches!(b, b':' | b'[' | b']' | b'.' | b'<' | b'>' | b'/' | 0));
        assert_eq!(HOST[usize::from(b)], rule, "{b:#x}");
    }
}
