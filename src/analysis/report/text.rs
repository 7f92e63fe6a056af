//! The terminal report: the summary table (one line per curve), then for each curve with
//! something to say its regimes, switch points and anomalies, then the row counts and the
//! first skipped reasons. Columns are padded to their widest cell.

use crate::analysis::curve::Analysis;
use crate::analysis::report::table::{self, Align, Table};
use crate::analysis::units;

/// The whole terminal report.
pub(crate) fn render(analysis: &Analysis) -> String {
    let mut out = String::new();
    if analysis.curves.is_empty() {
        out.push_str("no curves\n");
    } else {
        push_table(&mut out, &table::summary(analysis), "");
    }
    for c in analysis.curves.iter().filter(|c| table::has_details(c)) {
        out.push('\n');
        out.push_str(&units::key_label(c));
        out.push('\n');
        for t in [
            table::regimes(c),
            table::switch_points(c),
            table::anomalies(c),
        ] {
            if !t.rows.is_empty() {
                push_table(&mut out, &t, "  ");
            }
        }
        for note in table::notes(c) {
            out.push_str(&format!("  note: {}\n", one_line(&note)));
        }
    }
    if !analysis.notes.is_empty() {
        out.push('\n');
    }
    for note in &analysis.notes {
        out.push_str(&format!("note: {}\n", one_line(note)));
    }
    out.push('\n');
    out.push_str(&table::counts(analysis));
    if let Some(peak) = analysis.peak_gbs {
        out.push_str(&format!(", peak {} GB/s", units::gbs(peak)));
    }
    out.push('\n');
    let (shown, more) = table::skipped(analysis);
    for line in shown {
        out.push_str("  ");
        out.push_str(&one_line(&line));
        out.push('\n');
    }
    if more > 0 {
        out.push_str(&format!("  ... and {more} more\n"));
    }
    out
}

/// Input text on one terminal line: control characters (newlines, escapes) become spaces, so
/// a hostile file cannot move the cursor or forge table lines.
pub(crate) fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Appends `t` with every column padded to its widest cell, two spaces apart, no trailing
/// blanks, each line starting with `indent`.
pub(crate) fn push_table(out: &mut String, t: &Table, indent: &str) {
    let cells: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|row| row.iter().map(|c| one_line(c)).collect())
        .collect();
    let mut widths: Vec<usize> = t.headers.iter().map(|h| h.chars().count()).collect();
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let headers: Vec<String> = t.headers.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&headers).chain(&cells) {
        let mut line = indent.to_string();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let width = widths.get(i).copied().unwrap_or(0);
            let pad = " ".repeat(width.saturating_sub(cell.chars().count()));
            match t.align.get(i) {
                Some(Align::Right) => {
                    line.push_str(&pad);
                    line.push_str(cell);
                }
                _ => {
                    line.push_str(cell);
                    line.push_str(&pad);
                }
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}
