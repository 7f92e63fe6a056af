//! `--redact` (of `ncclbench logs` and of benchmark runs): hostnames become stable short hashes (`host-1a2b3c`, the same name always the
//! same token, so layouts stay readable), communicator ids `comm-<hash>`, PIDs and TIDs
//! ordinals (`p1`, `p2`...), pointers `<ptr>`, bus ids `<bus>`, IPv4/IPv6 addresses `<ip>`,
//! and user names in home paths `<user>`: raw logs and environment dumps carry all of these,
//! and results meant for sharing must not, while the analysis still needs their structure.
//!
//! Report renderers pass structured fields through the typed methods and every free text
//! (quoted lines, messages, values) through [`Redactor::text`], which knows the hostnames,
//! PIDs and communicator ids of the summary and recognises the rest by shape.

use std::collections::{BTreeSet, HashMap};

/// Rewrites identifying text; [`Redactor::none`] passes everything through.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    on: bool,
    hosts: Vec<String>,
    pids: HashMap<u64, usize>,
    comm_ids: BTreeSet<u64>,
}

/// Variables whose whole value is a launcher's job name, made from its host name and PID.
const LAUNCHER_IDS: [&str; 3] = ["PMIX_NAMESPACE", "PMIX_ID", "PMIX_SERVER_NSPACE"];

/// What a secret's value becomes.
pub const REDACTED: &str = "<redacted>";

/// How free text assigns a variable: `NAME=VALUE`, NCCL's `NAME set by environment to VALUE`.
const ASSIGNMENTS: [&[u8]; 3] = [b"=", b" set by environment to ", b" set to "];

/// A secret-looking variable assigned at the start of `s`: (bytes up to the end of its value,
/// the assignment with the value masked). The value runs to the next white space.
fn secret_assignment(s: &[u8]) -> Option<(usize, String)> {
    let id = s
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    let name = std::str::from_utf8(&s[..id]).ok()?;
    let sep = ASSIGNMENTS.iter().find(|a| s[id..].starts_with(a))?;
    if id == 0 || !is_secret_name(name) {
        return None;
    }
    let at = id + sep.len();
    let value = s[at..]
        .iter()
        .take_while(|c| !c.is_ascii_whitespace())
        .count();
    Some((
        at + value,
        format!("{name}{}{REDACTED}", String::from_utf8_lossy(sep)),
    ))
}

/// The words that make a variable's name look like it holds a secret: its value is never
/// shown by any output of any subcommand run with `--redact`. Open MPI's precondition
/// transports value is the job's shared key for its fabric.
pub const SECRET_WORDS: [&str; 7] = [
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "KEY",
    "CREDENTIAL",
    "PRECONDITION_TRANSPORTS",
];

/// Whether an environment variable's name looks like it holds a secret ([`SECRET_WORDS`]).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|w| upper.contains(w))
}

/// FNV-1a, 24 bits shown: stable across runs and platforms.
fn short_hash(s: &[u8]) -> String {
    let h = s.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{:06x}", (h ^ (h >> 32)) & 0xff_ffff)
}

fn is_host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

impl Redactor {
    /// No redaction.
    pub fn none() -> Self {
        Redactor::default()
    }

    /// Redaction knowing these hostnames and PIDs (a benchmark run's own); everything else is
    /// recognised by shape.
    pub fn for_names(
        hosts: impl IntoIterator<Item = String>,
        pids: impl IntoIterator<Item = u32>,
    ) -> Self {
        let mut hosts: Vec<String> = hosts
            .into_iter()
            .filter(|h| !h.is_empty())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        hosts.sort_by_key(|h| std::cmp::Reverse(h.len()));
        let pids: BTreeSet<u32> = pids.into_iter().collect();
        Redactor {
            on: true,
            hosts,
            pids: pids
                .into_iter()
                .enumerate()
                .map(|(i, p)| (u64::from(p), i + 1))
                .collect(),
            comm_ids: BTreeSet::new(),
        }
    }

    /// A `NAME=value` environment entry: the value scrubbed, or `<redacted>` whole when the
    /// name looks like a secret (TOKEN, SECRET, PASSWORD, KEY, CREDENTIAL).
    pub fn env_entry(&self, entry: &str) -> String {
        if !self.on {
            return entry.to_string();
        }
        match entry.split_once('=') {
            Some((name, value)) => format!("{name}={}", self.env_value(name, value)),
            None => self.text(entry),
        }
    }

    /// The value of the environment variable `name` (from a record, or a log's `NAME set by
    /// environment to VALUE`): `<redacted>` when the name looks like a secret, else scrubbed.
    pub fn env_value(&self, name: &str, value: &str) -> String {
        if !self.on {
            value.to_string()
        } else if is_secret_name(name) {
            REDACTED.into()
        } else if let Some((_, uri)) = value
            .split_once(';')
            .filter(|_| name.starts_with("PMIX_SERVER_URI"))
        {
            // `prterun-node7-4242@0.0;tcp4://...`, `3297247233.0;tcp4://...`: the namespace
            // names the launcher's host and PID, or a job id made from them.
            format!("<nspace>;{}", self.text(uri))
        } else if LAUNCHER_IDS.contains(&name) {
            "<nspace>".into()
        } else {
            self.text(value)
        }
    }

    /// The same redactor, also masking these NCCL communicator ids.
    pub fn with_comm_ids(mut self, ids: impl IntoIterator<Item = u64>) -> Self {
        self.comm_ids.extend(ids);
        self
    }

    /// Whether anything is rewritten.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// A hostname.
    pub fn host(&self, h: &str) -> String {
        if self.on && !h.is_empty() {
            format!("host-{}", short_hash(h.as_bytes()))
        } else {
            h.to_string()
        }
    }

    /// A PID as text (`p3`).
    pub fn pid(&self, p: u32) -> String {
        if self.on {
            format!("p{}", self.pid_ordinal(p))
        } else {
            p.to_string()
        }
    }

    /// A PID as a number: itself, or its ordinal among the summary's PIDs.
    pub fn pid_number(&self, p: u32) -> u64 {
        if self.on {
            self.pid_ordinal(p) as u64
        } else {
            u64::from(p)
        }
    }

    fn pid_ordinal(&self, p: u32) -> usize {
        self.pids.get(&u64::from(p)).copied().unwrap_or(0)
    }

    /// A pointer.
    pub fn ptr(&self, p: u64) -> String {
        if self.on {
            "<ptr>".into()
        } else {
            format!("0x{p:x}")
        }
    }

    /// A communicator id.
    pub fn comm_id(&self, id: u64) -> String {
        if self.on {
            format!("comm-{}", short_hash(&id.to_le_bytes()))
        } else {
            format!("0x{id:016x}")
        }
    }

    /// A PCI bus id as NCCL prints it (hex).
    pub fn bus(&self, b: u64) -> String {
        if self.on {
            "<bus>".into()
        } else {
            format!("{b:x}")
        }
    }

    /// Free text, scrubbed.
    pub fn text(&self, s: &str) -> String {
        if !self.on {
            return s.to_string();
        }
        let b = s.as_bytes();
        let mut out = String::with_capacity(s.len());
        let mut i = 0;
        while i < b.len() {
            let boundary = i == 0 || !is_host_byte(b[i - 1]);
            // Inside a file name (`nccl-node7-4242.log`, `out_node7.csv`) a known host name
            // or PID follows a `-` or `_`: masked there too.
            let joined = !boundary && matches!(b[i - 1], b'-' | b'_');
            let found = if boundary {
                self.token_at(b, i)
            } else if joined {
                self.known_at(b, i)
            } else {
                None
            };
            if let Some((n, rep)) = found {
                out.push_str(&rep);
                i += n;
                continue;
            }
            let ch_len = utf8_len(b[i]);
            out.push_str(s.get(i..i + ch_len).unwrap_or("\u{fffd}"));
            i += ch_len.max(1);
        }
        out
    }

    /// One of this redactor's host names or PIDs starting at `i`, ending at a word's end or a
    /// file name's extension: (bytes consumed, replacement).
    fn known_at(&self, b: &[u8], i: usize) -> Option<(usize, String)> {
        let rest = &b[i..];
        let ends = |n: usize| match rest.get(n) {
            None => true,
            Some(b'.') => rest.get(n + 1).is_some_and(u8::is_ascii_alphabetic),
            Some(&c) => !is_host_byte(c),
        };
        for h in &self.hosts {
            if rest.starts_with(h.as_bytes())
                && (ends(h.len()) || matches!(rest.get(h.len()), Some(b'-' | b'_')))
            {
                return Some((h.len(), self.host(h)));
            }
        }
        let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        if n >= 4 && ends(n) {
            let v: u64 = std::str::from_utf8(&rest[..n]).ok()?.parse().ok()?;
            if let Some(o) = self.pids.get(&v) {
                return Some((n, format!("p{o}")));
            }
        }
        None
    }

    /// A recognised token starting at `i`: (bytes consumed, replacement).
    fn token_at(&self, b: &[u8], i: usize) -> Option<(usize, String)> {
        let rest = &b[i..];
        if let Some(masked) = secret_assignment(rest) {
            return Some(masked);
        }
        for h in &self.hosts {
            if rest.starts_with(h.as_bytes())
                && !rest.get(h.len()).is_some_and(|&c| is_host_byte(c))
            {
                // `host:pid:tid` keeps its shape with both numbers hidden.
                let mut n = h.len();
                let mut rep = self.host(h);
                let ids = ids_after(&rest[n..]);
                if let Some((len, pid)) = ids {
                    rep.push_str(&format!(":{}:<tid>", self.pid(pid)));
                    n += len;
                }
                return Some((n, rep));
            }
        }
        if rest.starts_with(b"0x") {
            let n = 2 + rest[2..]
                .iter()
                .take_while(|c| c.is_ascii_hexdigit())
                .count();
            if n > 2 {
                let v =
                    u64::from_str_radix(std::str::from_utf8(&rest[2..n.min(18)]).ok()?, 16).ok();
                return Some((
                    n,
                    match v.filter(|v| self.comm_ids.contains(v)) {
                        Some(id) => self.comm_id(id),
                        None => "<ptr>".into(),
                    },
                ));
            }
        }
        for key in [&b"pid "[..], b"Pid ", b"busId "] {
            if rest.starts_with(key) {
                let m = rest[key.len()..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .count();
                if m > 0 {
                    let v = std::str::from_utf8(&rest[key.len()..key.len() + m]).ok()?;
                    let rep = if key == b"busId " {
                        "<bus>".to_string()
                    } else {
                        v.parse().map_or("p0".into(), |p| self.pid(p))
                    };
                    return Some((
                        key.len() + m,
                        format!("{}{rep}", String::from_utf8_lossy(key)),
                    ));
                }
            }
        }
        // `.../pid.19991/...`: Open MPI's and PMIx's session directories carry the launcher's
        // PID, which no summary knows.
        if let Some(after) = rest.strip_prefix(b"pid.") {
            let m = after.iter().take_while(|c| c.is_ascii_digit()).count();
            if m > 0 && !after.get(m).is_some_and(|&c| is_host_byte(c)) {
                let v = std::str::from_utf8(&after[..m]).ok()?;
                let rep = v.parse().map_or("p0".into(), |p| self.pid(p));
                return Some((4 + m, format!("pid.{rep}")));
            }
        }
        for key in [&b"GPU "[..], b"HCA "] {
            if let Some(after) = rest.strip_prefix(key) {
                let m = after.iter().take_while(|c| c.is_ascii_hexdigit()).count();
                if m >= 4 && !after.get(m).is_some_and(|&c| is_host_byte(c)) {
                    return Some((
                        key.len() + m,
                        format!("{}<bus>", String::from_utf8_lossy(key)),
                    ));
                }
            }
        }
        for home in [&b"/home/"[..], b"/Users/"] {
            if rest.starts_with(home) {
                let m = rest[home.len()..]
                    .iter()
                    .take_while(|&&c| c != b'/' && c != b' ')
                    .count();
                if m > 0 {
                    return Some((
                        home.len() + m,
                        format!("{}<user>", String::from_utf8_lossy(home)),
                    ));
                }
            }
        }
        if let Some(n) = address_len(rest) {
            return Some((n, "<ip>".into()));
        }
        if rest[0].is_ascii_digit() {
            let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            if n >= 4 && !rest.get(n).is_some_and(|&c| is_host_byte(c) || c == b'.') {
                let v: u64 = std::str::from_utf8(&rest[..n]).ok()?.parse().ok()?;
                if let Some(o) = self.pids.get(&v) {
                    return Some((n, format!("p{o}")));
                }
            }
        }
        // A host name or PID that a file name's `-`, `_` or extension joins.
        self.known_at(b, i)
    }
}

/// `:pid:tid` after a hostname: (bytes, pid).
fn ids_after(s: &[u8]) -> Option<(usize, u32)> {
    let s1 = s.strip_prefix(b":")?;
    let p = s1.iter().take_while(|c| c.is_ascii_digit()).count();
    let s2 = s1[p..].strip_prefix(b":")?;
    let t = s2.iter().take_while(|c| c.is_ascii_digit()).count();
    if p == 0 || t == 0 {
        return None;
    }
    Some((2 + p + t, std::str::from_utf8(&s1[..p]).ok()?.parse().ok()?))
}

/// Length of an IPv4 address, a bus id `0000:17:00.0`, or an IPv6 address at the start.
fn address_len(s: &[u8]) -> Option<usize> {
    let n = s
        .iter()
        .take_while(|c| c.is_ascii_hexdigit() || matches!(c, b'.' | b':'))
        .count();
    let tok = std::str::from_utf8(&s[..n])
        .ok()?
        .trim_end_matches([':', '.']);
    let dotted_quad = |t: &str| {
        let dots = t.split('.').collect::<Vec<_>>();
        dots.len() == 4
            && dots
                .iter()
                .all(|d| !d.is_empty() && d.len() <= 3 && d.bytes().all(|c| c.is_ascii_digit()))
    };
    if dotted_quad(tok) {
        return Some(tok.len());
    }
    // `10.1.2.3:5000` (an address with its port): the address goes, the port stays.
    if let Some((head, _)) = tok.split_once(':') {
        if dotted_quad(head) {
            return Some(head.len());
        }
    }
    let colons = tok.matches(':').count();
    if (colons >= 2 && tok.contains("::"))
        || colons >= 5
        || (colons == 2 && tok.contains('.') && tok.len() >= 10)
    {
        return Some(tok.len());
    }
    None
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests;
