//! The terminal and markdown renderings of the production report: the headline, where the
//! job loses time, the causes with their rules and advice, ranks, hosts, notes.

use crate::analysis::production::model::Report;
use crate::analysis::production::report::tables;
use crate::analysis::report::{markdown, table::Table, text};

/// The terminal report (`markdown`: the same as markdown).
pub(crate) fn render(r: &Report, markdown: bool) -> String {
    let mut out = String::new();
    let heading = |out: &mut String, title: &str| {
        if markdown {
            out.push_str(&format!("\n## {title}\n\n"));
        } else {
            out.push_str(&format!("\n{title}\n"));
        }
    };
    let put = |out: &mut String, t: &Table| {
        if markdown {
            markdown::push_table(out, t);
        } else {
            text::push_table(out, t, "  ");
        }
    };
    if markdown {
        out.push_str("# ncclbench production report\n\n");
    }
    out.push_str(&tables::headline(r));
    out.push('\n');
    heading(
        &mut out,
        "Where the job spends and loses communication time",
    );
    put(&mut out, &tables::losses(r));
    if r.total_lost_us.is_some() {
        let lead = if markdown { "\n" } else { "  " };
        out.push_str(&format!("{lead}{}\n", tables::LOSSES_LEGEND));
        let bullet = if markdown { "* " } else { "  - " };
        let unmatched = tables::unmatched(r);
        if !unmatched.is_empty() {
            out.push_str(if markdown {
                "\nNo benchmark number:\n\n"
            } else {
                "  no benchmark number:\n"
            });
        }
        for line in unmatched {
            let line = if markdown {
                markdown::escape(&line)
            } else {
                text::one_line(&line)
            };
            out.push_str(&format!("{bullet}{line}\n"));
        }
    }
    if r.groups.len() > tables::TOP_GROUPS {
        out.push_str(&format!(
            "  ... and {} more group(s) (all in the JSON)\n",
            r.groups.len() - tables::TOP_GROUPS
        ));
    }
    heading(&mut out, "Causes");
    if r.causes.is_empty() {
        out.push_str("  none found\n");
    }
    for (i, c) in r.causes.iter().enumerate() {
        let line = format!(
            "{}. {} on {}: {}",
            i + 1,
            c.kind,
            tables::comm(&c.comm_name, &c.comm_id),
            tables::subject(c)
        );
        let lost = c
            .lost_us
            .map(|l| format!(" (lost {} ms)", tables::ms(l)))
            .unwrap_or_default();
        let fmt = |s: &str| {
            if markdown {
                markdown::escape(s)
            } else {
                text::one_line(s)
            }
        };
        let pad = if markdown { "   - " } else { "     " };
        let lead = if markdown { "" } else { "  " };
        out.push_str(&format!("{lead}{}{lost}\n", fmt(&line)));
        out.push_str(&format!("{pad}evidence: {}\n", fmt(&c.evidence)));
        out.push_str(&format!("{pad}rule: {}\n", fmt(&c.rule)));
        if let Some(a) = &c.advice {
            out.push_str(&format!("{pad}advice: {}\n", fmt(a)));
        }
    }
    if !r.ranks.is_empty() {
        heading(&mut out, "Ranks (busbw relative to the same calls' median)");
        put(&mut out, &tables::ranks(r));
    }
    if !r.hosts.is_empty() {
        heading(&mut out, "Hosts");
        put(&mut out, &tables::hosts(r));
    }
    if !r.notes.is_empty() || !r.inputs.skipped.is_empty() {
        out.push('\n');
    }
    for n in &r.notes {
        out.push_str(&format!("note: {}\n", text::one_line(n)));
    }
    for s in r.inputs.skipped.iter().take(10) {
        out.push_str(&format!("skipped: {}\n", text::one_line(s)));
    }
    if r.inputs.skipped.len() > 10 {
        out.push_str(&format!(
            "skipped: ... and {} more\n",
            r.inputs.skipped.len() - 10
        ));
    }
    out
}
