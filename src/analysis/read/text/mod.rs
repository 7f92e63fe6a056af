//! nccl-tests text output, any 2.x version, as captured in real logs.
//!
//! Runs start at `# nThread` (concatenated runs count up in [`InputRow::run`]); the collective
//! comes from `# Collective test starting:` (absent before 2.16.7: inferred from the table where
//! its evidence singles one out, [`infer`], else `None`); the rank count is
//! the number of distinct ranks in the `# Using devices` block. Each column header, and each
//! `Collective test starting`, begins a new table whose columns are read from the header
//! ([`layout`]). Data rows may arrive in fragments separated by NCCL messages or MPI tags
//! ([`clean`]); fragments are put back together by column count, and a row that cannot be
//! completed, or whose fields do not parse, is skipped with its line and reason. `-N` cycles are
//! numbered afterwards from the sizes ([`assign_cycles`]).
//!
//! The file is read line by line as it streams in; memory holds the rows kept, never the file.
//! A line longer than [`MAX_LINE`] cannot be table data and is passed over unread.

mod clean;
mod infer;
mod inline;
mod layout;

use super::common::{assign_cycles, collective_name, fail, num, uint};
use super::source::next_line;
use crate::analysis::input::{InputRow, ReadSet, Skipped, SourceRef};
use crate::core::error::Error;
use crate::result::Placement;
use infer::TableInfo;
use layout::{is_timestamp, Layout};
use std::collections::BTreeSet;
use std::io::BufRead;

/// The table the following rows belong to.
struct Table {
    layout: Layout,
    /// Sequence number, for cycle numbering.
    id: usize,
    collective: Option<String>,
    nranks: Option<usize>,
}

/// A row whose fragments are still being collected.
struct Pending {
    tokens: Vec<String>,
    line: usize,
    /// NCCL decision lines printed while the row was open ([`inline`]).
    found: inline::RowDecisions,
}

/// Line-by-line state of one file.
struct Parser<'a> {
    name: &'a str,
    set: ReadSet,
    /// Table id of each row in `set.rows`.
    groups: Vec<usize>,
    hosts: Vec<String>,
    ranks: BTreeSet<i64>,
    collective: Option<String>,
    /// The collective line came after the last `# nThread` (it precedes its run's header).
    collective_fresh: bool,
    run: u32,
    started: bool,
    tables: usize,
    table: Option<Table>,
    pending: Option<Pending>,
    /// What the collective of tables without a collective line is inferred from.
    unnamed: infer::Unnamed,
    /// NCCL lines inside the output, for the rows' decisions.
    inline: inline::Inline,
}

/// The longest line looked at; a table row is under 300 bytes even with every optional column.
pub(super) const MAX_LINE: usize = 1 << 20;

/// Reads nccl-tests text output from a stream.
pub(super) fn read(
    name: &str,
    mut input: impl BufRead,
    mark: &crate::core::bounded::Mark,
) -> Result<ReadSet, Error> {
    let mut p = Parser {
        name,
        set: ReadSet::default(),
        groups: Vec::new(),
        hosts: Vec::new(),
        ranks: BTreeSet::new(),
        collective: None,
        collective_fresh: false,
        run: 0,
        started: false,
        tables: 0,
        table: None,
        pending: None,
        unnamed: infer::Unnamed::default(),
        inline: inline::Inline::default(),
    };
    let mut buf = Vec::new();
    let mut no = 0;
    while let Some(cut) = next_line(&mut input, &mut buf, MAX_LINE)
        .map_err(|e| Error::usage(format!("{name}: cannot read: {e}")))?
    {
        no += 1;
        if !cut {
            let before = p.set.rows.len() + p.set.skipped.len();
            p.line(no, &String::from_utf8_lossy(&buf))?;
            if p.set.rows.len() + p.set.skipped.len() != before {
                mark.record();
            }
        }
    }
    p.flush();
    let unnamed = std::mem::take(&mut p.unnamed);
    unnamed.apply(name, &mut p.set, &p.groups);
    assign_cycles(&mut p.set.rows, &p.groups);
    Ok(p.set)
}

/// True when a fragment starts a data row: an integer size and count, then a type name.
fn is_row_start(tokens: &[&str]) -> bool {
    tokens.len() >= 3
        && uint(tokens[0]).is_some()
        && uint(tokens[1]).is_some()
        && num(tokens[2]).is_none()
}

/// True when a fragment can be the rest of a row: a number, `N/A` or an `-S` date.
fn continues_row(first: &str) -> bool {
    num(first).is_some()
        || first == "N/A"
        || (first.len() == 10 && first.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
}

impl Parser<'_> {
    fn line(&mut self, no: usize, raw: &str) -> Result<(), Error> {
        self.unnamed.scan(no, raw);
        let text = clean::clean(raw, &self.hosts);
        let t = text.trim();
        if let Some(comment) = t.strip_prefix('#') {
            self.flush();
            self.comment(no, comment.trim())?;
        } else if !t.is_empty() {
            self.data(no, t);
        }
        self.decisions(raw);
        Ok(())
    }

    /// Gives the open row the NCCL decisions `raw` holds: to the placement whose fields have
    /// not been printed yet.
    fn decisions(&mut self, raw: &str) {
        let Parser {
            inline,
            table,
            pending,
            ..
        } = self;
        let open = table.as_ref().zip(pending.as_mut()).and_then(|(t, p)| {
            let all: Vec<&str> = p.tokens.iter().map(String::as_str).collect();
            let bytes = uint(all.first()?)?;
            let placement = usize::from(all.len() >= t.layout.first_placement_end(&all));
            let row = inline::OpenRow {
                collective: t.collective.as_deref(),
                nranks: t.nranks,
                bytes,
            };
            Some(((row, placement), &mut p.found))
        });
        match open {
            Some((row, found)) => inline.line(raw, Some(row), Some(found)),
            None => inline.line(raw, None, None),
        }
    }

    fn comment(&mut self, no: usize, c: &str) -> Result<(), Error> {
        let tokens: Vec<&str> = c.split_whitespace().collect();
        if let Some(program) = c.strip_prefix("Collective test starting:") {
            self.collective = collective_name(program);
            self.collective_fresh = true;
            self.table = None;
        } else if tokens.first() == Some(&"nThread") {
            if self.started {
                self.run = self.run.saturating_add(1);
            }
            self.started = true;
            if !self.collective_fresh {
                self.collective = None;
            }
            self.collective_fresh = false;
            self.ranks.clear();
            self.table = None;
        } else if c.starts_with("Using devices") {
            self.ranks.clear();
        } else if let ["Rank", rank, rest @ ..] = tokens.as_slice() {
            if let Ok(r) = rank.parse::<i64>() {
                self.ranks.insert(r);
            }
            let host = rest.iter().skip_while(|t| **t != "on").nth(1);
            if let Some(h) = host.filter(|h| !self.hosts.iter().any(|k| k == *h)) {
                self.hosts.push(h.to_string());
            }
        } else if tokens.len() >= 2 && tokens[..2] == ["size", "count"] {
            let layout = Layout::parse(&tokens).map_err(|e| fail(self.name, no, e))?;
            self.started = true;
            self.tables += 1;
            self.unnamed.headers.push(no);
            if self.collective.is_none() {
                self.unnamed.tables.push(TableInfo {
                    id: self.tables,
                    line: no,
                    columns: layout.columns(),
                    nranks: (!self.ranks.is_empty()).then_some(self.ranks.len()),
                });
            }
            self.table = Some(Table {
                layout,
                id: self.tables,
                collective: self.collective.clone(),
                nranks: (!self.ranks.is_empty()).then_some(self.ranks.len()),
            });
        }
        Ok(())
    }

    fn data(&mut self, no: usize, t: &str) {
        if self.table.is_none() {
            return; // text outside a table is not data
        }
        let tokens: Vec<&str> = t.split_whitespace().collect();
        if is_row_start(&tokens) {
            self.flush();
            self.pending = Some(Pending {
                tokens: Vec::new(),
                line: no,
                found: inline::RowDecisions::default(),
            });
        } else if !tokens.first().is_some_and(|t| continues_row(t)) {
            return; // a message, not table data
        } else if self.pending.is_none() {
            return self.skip(no, "row fragment without its size, count and type columns");
        }
        let (Some(p), Some(table)) = (self.pending.as_mut(), self.table.as_ref()) else {
            return;
        };
        p.tokens.extend(tokens.iter().map(|s| s.to_string()));
        let all: Vec<&str> = p.tokens.iter().map(String::as_str).collect();
        let (n, expected) = (all.len(), table.layout.expected_len(&all));
        let stamped = n == expected + 2 && is_timestamp(all[expected], all[expected + 1]);
        if n < expected {
            return;
        }
        let Some(p) = self.pending.take() else { return };
        if n == expected || stamped {
            self.emit(p.line, &p.tokens, &p.found);
        } else {
            self.skip(
                p.line,
                &format!("{n} fields, the column header has {expected}"),
            );
        }
    }

    /// Turns a complete row into its two [`InputRow`]s.
    fn emit(&mut self, line: usize, tokens: &[String], found: &inline::RowDecisions) {
        let Some(table) = &self.table else { return };
        let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
        let parsed = if table.layout.cputime {
            Err("cputime table (-C): its time column is host launch time, not latency".into())
        } else {
            table.layout.parse_row(&tokens)
        };
        let (id, collective, nranks) = (table.id, table.collective.clone(), table.nranks);
        let row = match parsed {
            Ok(row) => row,
            Err(why) => return self.skip(line, &why),
        };
        for (i, (placement, m)) in Placement::BOTH.into_iter().zip(row.placements).enumerate() {
            match m {
                Ok(m) => {
                    self.set.rows.push(InputRow {
                        source: self.source(line),
                        collective: collective.clone(),
                        dtype: row.dtype.clone(),
                        op: row.op.clone(),
                        root: row.root,
                        nranks,
                        placement,
                        cycle: 0,
                        run: self.run,
                        bytes: row.bytes,
                        count: row.count,
                        time_us: m.time_us,
                        algbw_gbs: m.algbw_gbs,
                        busbw_gbs: m.busbw_gbs,
                        wrong: m.wrong,
                        tuning: found.tuning(i),
                    });
                    self.groups.push(id);
                }
                Err(why) => self.skip(line, &format!("{}: {why}", placement.name())),
            }
        }
    }

    /// Gives up on a row still waiting for fragments.
    fn flush(&mut self) {
        if let Some(p) = self.pending.take() {
            let n = p.tokens.len();
            self.skip(
                p.line,
                &format!("incomplete row ({n} fields): output cut off or interleaved"),
            );
        }
    }

    fn source(&self, line: usize) -> SourceRef {
        SourceRef {
            file: self.name.to_string(),
            line,
        }
    }

    fn skip(&mut self, line: usize, reason: &str) {
        let source = self.source(line);
        self.set.skipped.push(Skipped {
            source,
            reason: reason.to_string(),
        });
    }
}
