//! The markdown report: the summary as a table, a section per curve (its regimes, switch
//! points and anomalies as tables, and its charts linked when the report is written next to
//! them), and the row counts with the first skipped reasons.

use crate::analysis::curve::Analysis;
use crate::analysis::report::table::{self, Align, Table};
use crate::analysis::units;

/// The markdown report. With `slugs` (one file stem per curve, as `write_dir` names the chart
/// files) every curve gets a section with its charts linked by relative path; without, only
/// curves with details get one and there are no links.
pub(crate) fn render(analysis: &Analysis, slugs: Option<&[String]>) -> String {
    let mut out = String::from("# ncclbench analysis\n\n");
    if analysis.curves.is_empty() {
        out.push_str("No curves.\n");
    } else {
        push_table(&mut out, &table::summary(analysis));
    }
    for (i, c) in analysis.curves.iter().enumerate() {
        let slug = slugs.and_then(|s| s.get(i));
        if slug.is_none() && !table::has_details(c) {
            continue;
        }
        out.push_str(&format!("\n## {}\n", escape(&units::key_label(c))));
        if let Some(slug) = slug {
            out.push_str(&chart_links(slug));
        }
        for t in [
            table::regimes(c),
            table::switch_points(c),
            table::anomalies(c),
        ] {
            if !t.rows.is_empty() {
                out.push('\n');
                push_table(&mut out, &t);
            }
        }
        let notes = table::notes(c);
        if !notes.is_empty() {
            out.push('\n');
        }
        for note in notes {
            out.push_str(&format!("- note: {}\n", escape(&note)));
        }
    }
    if !analysis.notes.is_empty() {
        out.push_str("\n## Notes\n\n");
    }
    for note in &analysis.notes {
        out.push_str(&format!("- {}\n", escape(note)));
    }
    out.push_str(&format!("\n## Input\n\n{}", table::counts(analysis)));
    if let Some(peak) = analysis.peak_gbs {
        out.push_str(&format!(", peak {} GB/s", units::gbs(peak)));
    }
    out.push_str(".\n");
    let (shown, more) = table::skipped(analysis);
    if !shown.is_empty() {
        out.push('\n');
    }
    for line in shown {
        out.push_str(&format!("- {}\n", escape(&line)));
    }
    if more > 0 {
        out.push_str(&format!("- ... and {more} more\n"));
    }
    out
}

/// The two charts of a curve as images (PNG, shown everywhere) plus links to the SVGs.
fn chart_links(slug: &str) -> String {
    format!(
        "\n![busbw versus size]({slug}.busbw.png)\n\n![time versus size]({slug}.time.png)\n\n\
         SVG: [busbw]({slug}.busbw.svg), [time]({slug}.time.svg)\n"
    )
}

/// Input text made inert in markdown: characters that open inline markup (HTML tags, code,
/// emphasis, links) or end a table cell are backslash-escaped, line breaks become spaces.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\\' | '|' | '<' | '*' | '`' | '[' | ']' => {
                out.push('\\');
                out.push(ch);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Appends `t` as a pipe table, number columns right-aligned.
pub(crate) fn push_table(out: &mut String, t: &Table) {
    let row = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    out.push_str(&row(t.headers.iter().map(|h| escape(h)).collect()));
    let rule = t
        .align
        .iter()
        .map(|a| match a {
            Align::Left => "---".to_string(),
            Align::Right => "---:".to_string(),
        })
        .collect();
    out.push_str(&row(rule));
    for cells in &t.rows {
        out.push_str(&row(cells.iter().map(|c| escape(c)).collect()));
    }
}
