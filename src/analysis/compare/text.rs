//! The terminal and markdown reports of a comparison: the inputs and method, the banner, the
//! summary per curve, each curve's sizes, curves on one side only, and the verdict line.

use super::model::Comparison;
use super::tables;
use crate::analysis::report::markdown::{escape, push_table as push_md};
use crate::analysis::report::text::{one_line, push_table};

/// The terminal report.
pub(crate) fn render(cmp: &Comparison) -> String {
    let mut out = String::new();
    let line = |out: &mut String, s: &str| {
        out.push_str(&one_line(s));
        out.push('\n');
    };
    line(
        &mut out,
        &format!("ncclbench compare: {}", tables::method(cmp)),
    );
    line(&mut out, &format!("before: {}", tables::side(&cmp.before)));
    line(&mut out, &format!("after:  {}", tables::side(&cmp.after)));
    for b in &cmp.banner {
        line(&mut out, b);
    }
    if !cmp.curves.is_empty() {
        out.push('\n');
        push_table(&mut out, &tables::summary(cmp), "");
    }
    for c in &cmp.curves {
        out.push('\n');
        line(&mut out, &tables::label(&c.id));
        push_table(&mut out, &tables::sizes(c), "  ");
        for n in tables::curve_notes(c) {
            line(&mut out, &format!("  {n}"));
        }
    }
    let unmatched = tables::unmatched(cmp);
    if !unmatched.is_empty() {
        out.push('\n');
    }
    for u in unmatched {
        line(&mut out, &u);
    }
    out.push('\n');
    line(&mut out, &tables::result(cmp));
    out
}

/// The markdown report.
pub(crate) fn render_markdown(cmp: &Comparison) -> String {
    let mut out = String::from("# ncclbench compare\n\n");
    out.push_str(&format!("{}.\n\n", escape(&tables::method(cmp))));
    out.push_str(&format!(
        "- before: {}\n",
        escape(&tables::side(&cmp.before))
    ));
    out.push_str(&format!("- after: {}\n", escape(&tables::side(&cmp.after))));
    if !cmp.banner.is_empty() {
        out.push('\n');
        for b in &cmp.banner {
            let loud = b.starts_with("!!!");
            let text = escape(b.trim_start_matches("!!! "));
            if loud {
                out.push_str(&format!("> **WARNING** {text}\n>\n"));
            } else {
                out.push_str(&format!("> {text}\n>\n"));
            }
        }
        out.truncate(out.len() - 2);
    }
    out.push_str(&format!("\n**{}**\n", escape(&tables::result(cmp))));
    if !cmp.curves.is_empty() {
        out.push_str("\n## Summary\n\n");
        push_md(&mut out, &tables::summary(cmp));
    }
    for c in &cmp.curves {
        out.push_str(&format!("\n## {}\n\n", escape(&tables::label(&c.id))));
        push_md(&mut out, &tables::sizes(c));
        for n in tables::curve_notes(c) {
            out.push_str(&format!("\n{}\n", escape(&n)));
        }
    }
    let unmatched = tables::unmatched(cmp);
    if !unmatched.is_empty() {
        out.push_str("\n## Not compared\n\n");
    }
    for u in unmatched {
        out.push_str(&format!("- {}\n", escape(&u)));
    }
    out
}
