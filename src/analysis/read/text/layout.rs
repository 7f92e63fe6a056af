//! The columns of one nccl-tests table, read from its column-header line
//! (`# size count type redop root time algbw busbw #wrong time ...`), and the parsing of a data
//! row by those columns. Every 2.x layout is described by its header: the legacy ones (2.11 and
//! older) print per collective only the columns it has, with `error` instead of `#wrong`:
//! `redop` (all_reduce, reduce_scatter, and alltoall with an empty op), `root` (broadcast,
//! gather, scatter), both (reduce) or neither (all_gather, sendrecv, hypercube); the current
//! one has both for every collective. `-I` columns follow each placement, `-C` (`cputime`),
//! `-S` (`timestamp`, two tokens in the rows).

use super::super::common::{int, known_dtype, num, uint};

/// A column before the placements.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pre {
    Size,
    Count,
    Type,
    Redop,
    Root,
    Other,
}

/// A column of one placement.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Body {
    Time,
    AlgBw,
    BusBw,
    Wrong,
    Other,
}

/// What the column header of one table says.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    pre: Vec<Pre>,
    /// Out-of-place, then in-place columns.
    groups: [Vec<Body>; 2],
    /// `-S`: the rows end with a date and a time.
    timestamp: bool,
    /// `-C`: the time columns hold host launch time, not latency.
    pub cputime: bool,
    /// The error column is called `error` (2.12 and older).
    legacy: bool,
}

/// Which columns before the placements a table has, for telling collectives apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Columns {
    pub redop: bool,
    pub root: bool,
    /// The `error` column of 2.12 and older, where each collective printed its own columns.
    pub legacy: bool,
}

/// One placement of a parsed row.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Measured {
    pub time_us: f64,
    pub algbw_gbs: f64,
    pub busbw_gbs: f64,
    pub wrong: Option<f64>,
}

/// A parsed data row: its first columns and each placement (or why it is unusable).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Row {
    pub bytes: u64,
    pub count: u64,
    pub dtype: String,
    pub op: String,
    pub root: i64,
    pub placements: [Result<Measured, String>; 2],
}

impl Layout {
    /// Reads the header tokens (after the `#`), or says what is wrong with them.
    pub fn parse(tokens: &[&str]) -> Result<Layout, String> {
        let starts: Vec<usize> = (0..tokens.len())
            .filter(|&i| matches!(tokens[i], "time" | "cputime"))
            .collect();
        if starts.len() != 2 || tokens.get(..3) != Some(&["size", "count", "type"][..]) {
            return Err(format!(
                "column header not understood (expected size, count, type and two time columns): {}",
                tokens.join(" ")
            ));
        }
        let pre = tokens[..starts[0]]
            .iter()
            .map(|t| match *t {
                "size" => Pre::Size,
                "count" => Pre::Count,
                "type" => Pre::Type,
                "redop" => Pre::Redop,
                "root" => Pre::Root,
                _ => Pre::Other,
            })
            .collect();
        let mut rest = &tokens[starts[1]..];
        let timestamp = rest.last() == Some(&"timestamp");
        if timestamp {
            rest = &rest[..rest.len() - 1];
        }
        let group = |cols: &[&str]| -> Result<Vec<Body>, String> {
            let body: Vec<Body> = cols
                .iter()
                .map(|c| match *c {
                    "time" | "cputime" => Body::Time,
                    "algbw" => Body::AlgBw,
                    "busbw" => Body::BusBw,
                    "#wrong" | "error" => Body::Wrong,
                    _ => Body::Other,
                })
                .collect();
            let has = |b: Body| body.iter().filter(|&&x| x == b).count() == 1;
            if has(Body::AlgBw) && has(Body::BusBw) && has(Body::Wrong) {
                Ok(body)
            } else {
                Err(format!(
                    "column header not understood: a placement lacks algbw, busbw or #wrong in `{}`",
                    cols.join(" ")
                ))
            }
        };
        Ok(Layout {
            pre,
            groups: [group(&tokens[starts[0]..starts[1]])?, group(rest)?],
            timestamp,
            cputime: tokens[starts[0]] == "cputime",
            legacy: tokens[starts[0]..starts[1]].contains(&"error"),
        })
    }

    /// The columns before the placements.
    pub fn columns(&self) -> Columns {
        Columns {
            redop: self.pre.contains(&Pre::Redop),
            root: self.pre.contains(&Pre::Root),
            legacy: self.legacy,
        }
    }

    /// True when the row's `redop` field is empty, so the token in its place is the next
    /// column's: a number, where an op name never is. nccl-tests prints the op with `%6s`, and
    /// two tables print an empty op under a `redop` header: hypercube (root follows, 2.13+)
    /// and the legacy alltoall (times follow, 2.11 and older).
    fn blank_op(&self, tokens: &[&str]) -> bool {
        self.pre
            .iter()
            .position(|&p| p == Pre::Redop)
            .and_then(|i| tokens.get(i))
            .is_some_and(|t| num(t).is_some())
    }

    /// Tokens a complete row starting with `tokens` has (timestamps included when the header
    /// names them).
    pub fn expected_len(&self, tokens: &[&str]) -> usize {
        let body: usize = self.groups.iter().map(Vec::len).sum();
        let stamp = if self.timestamp { 2 } else { 0 };
        self.pre.len() - usize::from(self.blank_op(tokens)) + body + stamp
    }

    /// Tokens a row starting with `tokens` has up to the end of its out-of-place fields.
    pub fn first_placement_end(&self, tokens: &[&str]) -> usize {
        self.pre.len() - usize::from(self.blank_op(tokens)) + self.groups[0].len()
    }

    /// Parses a complete row (`tokens.len()` is [`Layout::expected_len`], or two more when an
    /// unannounced `-S` timestamp follows).
    pub fn parse_row(&self, tokens: &[&str]) -> Result<Row, String> {
        let blank = self.blank_op(tokens);
        let mut row = Row {
            bytes: 0,
            count: 0,
            dtype: String::new(),
            op: String::new(),
            root: -1,
            placements: [Err(String::new()), Err(String::new())],
        };
        let mut it = tokens.iter().copied();
        for &col in &self.pre {
            if col == Pre::Redop && blank {
                continue;
            }
            let t = it.next().ok_or("row ends early")?;
            match col {
                Pre::Size => {
                    row.bytes = uint(t).ok_or_else(|| format!("size `{t}` is not a byte count"))?
                }
                Pre::Count => {
                    row.count = uint(t).ok_or_else(|| format!("count `{t}` is not a number"))?
                }
                Pre::Type if known_dtype(t) => row.dtype = t.to_string(),
                Pre::Type => return Err(format!("unknown dtype `{t}`")),
                Pre::Redop => row.op = t.to_string(),
                Pre::Root => {
                    row.root = int(t).ok_or_else(|| format!("root `{t}` is not a number"))?
                }
                Pre::Other => {}
            }
        }
        for (slot, cols) in row.placements.iter_mut().zip(&self.groups) {
            let fields: Vec<&str> = it.by_ref().take(cols.len()).collect();
            *slot = measured(cols, &fields);
        }
        Ok(row)
    }
}

/// One placement's values.
fn measured(cols: &[Body], fields: &[&str]) -> Result<Measured, String> {
    if fields.len() != cols.len() {
        return Err("row ends early".into());
    }
    let mut m = Measured {
        time_us: f64::NAN,
        algbw_gbs: f64::NAN,
        busbw_gbs: f64::NAN,
        wrong: None,
    };
    let number =
        |what: &str, t: &str| num(t).ok_or_else(|| format!("{what} `{t}` is not a number"));
    for (col, t) in cols.iter().zip(fields) {
        match col {
            Body::Time => m.time_us = number("time", t)?,
            Body::AlgBw => m.algbw_gbs = number("algbw", t)?,
            Body::BusBw => m.busbw_gbs = number("busbw", t)?,
            Body::Wrong if *t == "N/A" => m.wrong = None,
            Body::Wrong => m.wrong = Some(number("#wrong", t)?),
            Body::Other => {}
        }
    }
    if !(m.time_us.is_finite() && m.time_us > 0.0) {
        return Err(format!("time {} is not a positive latency", m.time_us));
    }
    Ok(m)
}

/// True for a `YYYY-MM-DD HH:MM:SS` pair (an `-S` timestamp).
pub(super) fn is_timestamp(date: &str, time: &str) -> bool {
    let shape = |s: &str, sep: u8| {
        s.len() >= 5 && s.bytes().all(|b| b.is_ascii_digit() || b == sep) && s.contains(sep as char)
    };
    shape(date, b'-') && shape(time, b':')
}
