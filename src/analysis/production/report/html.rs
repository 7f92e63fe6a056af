//! The production report as one self-contained HTML page: the headline, a chart per
//! (collective, ranks) the benchmark has (inline SVG), and the same tables as the terminal.
//! No scripts or external assets; every piece of input text is escaped.

use crate::analysis::plot;
use crate::analysis::plot::svg::escape;
use crate::analysis::production::baseline::Baseline;
use crate::analysis::production::model::{Group, Report};
use crate::analysis::production::report::{chart, tables};
use crate::analysis::report::table::{Align, Table};

const STYLE: &str = "\
body{font-family:'DejaVu Sans',Verdana,Arial,sans-serif;color:#222;max-width:1240px;\
margin:1.5em auto;padding:0 1em;line-height:1.4}h1{font-size:1.6em}\
h2{font-size:1.25em;border-top:2px solid #dde3ea;padding-top:.8em}\
table{border-collapse:collapse;margin:.8em 0;font-size:14px}\
th,td{border:1px solid #cfd6de;padding:.25em .6em;text-align:left}\
th{background:#eef2f6}td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}\
svg{max-width:100%;height:auto;border:1px solid #e3e7ec}.muted{color:#666}";

/// The whole page.
pub(crate) fn render(r: &Report, base: Option<&Baseline>) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>ncclbench production report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>ncclbench production report</h1>\n<p class=\"muted\">{}</p>\n",
        escape(&tables::headline(r))
    );
    for (_, svg) in charts(r, base) {
        out.push_str("<figure>");
        out.push_str(&svg.replacen(plot::SVG_NS_ATTR, "", 1));
        out.push_str("</figure>\n");
    }
    out.push_str("<h2>Where the job spends and loses communication time</h2>\n");
    push_table(&mut out, &tables::losses(r));
    if r.total_lost_us.is_some() {
        out.push_str(&format!(
            "<p class=\"muted\">{}</p>\n",
            escape(tables::LOSSES_LEGEND)
        ));
        let unmatched = tables::unmatched(r);
        if !unmatched.is_empty() {
            out.push_str("<p>No benchmark number:</p>\n<ul>\n");
            for line in unmatched {
                out.push_str(&format!("<li>{}</li>\n", escape(&line)));
            }
            out.push_str("</ul>\n");
        }
    }
    out.push_str("<h2>Causes</h2>\n");
    if r.causes.is_empty() {
        out.push_str("<p>None found.</p>\n");
    }
    out.push_str("<ol>\n");
    for c in &r.causes {
        out.push_str(&format!(
            "<li><b>{}</b> on {}: {}<br>evidence: {}<br><span class=\"muted\">rule: {}</span>{}</li>\n",
            escape(&c.kind),
            escape(&tables::comm(&c.comm_name, &c.comm_id)),
            escape(&tables::subject(c)),
            escape(&c.evidence),
            escape(&c.rule),
            c.advice
                .as_ref()
                .map(|a| format!("<br>advice: {}", escape(a)))
                .unwrap_or_default()
        ));
    }
    out.push_str("</ol>\n");
    for (title, t) in [
        (
            "Ranks (busbw relative to the same calls' median)",
            tables::ranks(r),
        ),
        ("Hosts", tables::hosts(r)),
    ] {
        if !t.rows.is_empty() {
            out.push_str(&format!("<h2>{}</h2>\n", escape(title)));
            push_table(&mut out, &t);
        }
    }
    for n in &r.notes {
        out.push_str(&format!("<p>note: {}</p>\n", escape(n)));
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// One chart per (collective, ranks) of the job that the baseline has a curve for, with its
/// file stem (`all_reduce-8ranks`).
pub(crate) fn charts(r: &Report, base: Option<&Baseline>) -> Vec<(String, String)> {
    let Some(base) = base else {
        return Vec::new();
    };
    let mut keys: Vec<(&str, u32)> = r
        .groups
        .iter()
        .map(|g| (g.collective.as_str(), g.nranks))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .filter_map(|(c, n)| {
            let curve = base.curve_for(c, n).ok()?;
            let groups: Vec<&Group> = r
                .groups
                .iter()
                .filter(|g| g.collective == c && g.nranks == n)
                .collect();
            Some((format!("{c}-{n}ranks"), chart::chart(curve, &groups)))
        })
        .collect()
}

fn push_table(out: &mut String, t: &Table) {
    let class = |a: Option<&Align>| match a {
        Some(Align::Right) => " class=\"r\"",
        _ => "",
    };
    out.push_str("<table>\n<tr>");
    for (i, h) in t.headers.iter().enumerate() {
        out.push_str(&format!("<th{}>{}</th>", class(t.align.get(i)), escape(h)));
    }
    out.push_str("</tr>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            out.push_str(&format!(
                "<td{}>{}</td>",
                class(t.align.get(i)),
                escape(cell)
            ));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}
