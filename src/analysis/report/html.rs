//! The single-file HTML report: inline CSS, every chart inline as `<svg>`, internal anchors
//! only, no scripts and no external assets, so it reads the same offline and in any browser.
//! Every piece of input text (keys, tuning, anomaly details, file names, skipped reasons) is
//! escaped.

use crate::analysis::curve::Analysis;
use crate::analysis::plot;
use crate::analysis::report::table::{self, Align, Table};
use crate::analysis::report::Charts;
use crate::analysis::units;

/// The page style: readable tables, charts scaled to the window.
const STYLE: &str = "\
body{font-family:'DejaVu Sans',Verdana,Arial,sans-serif;color:#222;max-width:1240px;\
margin:1.5em auto;padding:0 1em;line-height:1.4}\
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:0}\
section{border-top:2px solid #dde3ea;margin-top:2em;padding-top:1em}\
table{border-collapse:collapse;margin:.8em 0;font-size:14px}\
th,td{border:1px solid #cfd6de;padding:.25em .6em;text-align:left}\
th{background:#eef2f6}td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}\
tr:nth-child(even) td{background:#f8f9fb}\
figure{margin:1em 0}svg{max-width:100%;height:auto;border:1px solid #e3e7ec}\
.muted{color:#666}";

/// The whole page; `charts[i]` belongs to `analysis.curves[i]` (missing entries draw none).
pub(crate) fn render(analysis: &Analysis, charts: &[Charts]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>ncclbench analysis</title>\n",
    );
    out.push_str(&format!("<style>{STYLE}</style>\n</head>\n<body>\n"));
    out.push_str("<h1>ncclbench analysis</h1>\n");
    out.push_str(&format!(
        "<p class=\"muted\">{}</p>\n",
        escape(&counts(analysis))
    ));
    if analysis.curves.is_empty() {
        out.push_str("<p>No curves.</p>\n");
    } else {
        let anchors: Vec<&str> = charts.iter().map(|c| c.slug.as_str()).collect();
        push_table(&mut out, &table::summary(analysis), &anchors);
    }
    for (i, c) in analysis.curves.iter().enumerate() {
        let chart = charts.get(i);
        let id = chart.map(|ch| format!(" id=\"{}\"", escape(&ch.slug)));
        out.push_str(&format!(
            "<section{}>\n<h2>{}</h2>\n",
            id.unwrap_or_default(),
            escape(&units::key_label(c))
        ));
        if let Some(ch) = chart {
            for svg in [&ch.busbw_svg, &ch.time_svg] {
                out.push_str("<figure>");
                out.push_str(&svg.replacen(plot::SVG_NS_ATTR, "", 1));
                out.push_str("</figure>\n");
            }
        }
        for t in [
            table::regimes(c),
            table::switch_points(c),
            table::anomalies(c),
        ] {
            if !t.rows.is_empty() {
                push_table(&mut out, &t, &[]);
            }
        }
        for note in table::notes(c) {
            out.push_str(&format!("<p>note: {}</p>\n", escape(&note)));
        }
        out.push_str("</section>\n");
    }
    for note in &analysis.notes {
        out.push_str(&format!("<p>note: {}</p>\n", escape(note)));
    }
    push_skipped(&mut out, analysis);
    out.push_str("</body>\n</html>\n");
    out
}

/// The count line, with the peak when given.
fn counts(analysis: &Analysis) -> String {
    match analysis.peak_gbs {
        Some(peak) => format!(
            "{}, peak {} GB/s",
            table::counts(analysis),
            units::gbs(peak)
        ),
        None => table::counts(analysis),
    }
}

/// The skipped-rows section (only when something was skipped).
fn push_skipped(out: &mut String, analysis: &Analysis) {
    let (shown, more) = table::skipped(analysis);
    if shown.is_empty() && more == 0 {
        return;
    }
    out.push_str("<section>\n<h2>Skipped rows</h2>\n<ul>\n");
    for line in shown {
        out.push_str(&format!("<li>{}</li>\n", escape(&line)));
    }
    if more > 0 {
        out.push_str(&format!("<li>... and {more} more</li>\n"));
    }
    out.push_str("</ul>\n</section>\n");
}

/// Text made safe for HTML element content and quoted attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Appends `t` as an HTML table; when `anchors[i]` exists, row i's first cell links to the
/// section `#anchors[i]`.
fn push_table(out: &mut String, t: &Table, anchors: &[&str]) {
    let class = |a: Option<&Align>| match a {
        Some(Align::Right) => " class=\"r\"",
        _ => "",
    };
    out.push_str("<table>\n<tr>");
    for (i, h) in t.headers.iter().enumerate() {
        out.push_str(&format!("<th{}>{}</th>", class(t.align.get(i)), escape(h)));
    }
    out.push_str("</tr>\n");
    for (r, row) in t.rows.iter().enumerate() {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let text = match anchors.get(r) {
                Some(a) if i == 0 => format!("<a href=\"#{}\">{}</a>", escape(a), escape(cell)),
                _ => escape(cell),
            };
            out.push_str(&format!("<td{}>{}</td>", class(t.align.get(i)), text));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}
