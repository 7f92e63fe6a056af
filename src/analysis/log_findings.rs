//! `analyze --nccl-log FILE`: the rule-based findings of NCCL debug logs (see
//! [`crate::logs::findings`]) reported after the curve reports, so a curve's symptoms (a low
//! plateau, a missing regime) sit next to what NCCL said about the transport it chose. Text
//! and markdown get a section; JSON gets a `nccl_log_findings` list (a key added within the
//! `ncclbench-analysis/1` schema).

use crate::config::ReportFormat;
use crate::logs::findings::Finding;
use std::fmt::Write;

/// `report` with the findings appended in its format.
pub fn append(report: String, findings: &[Finding], format: ReportFormat) -> String {
    match format {
        ReportFormat::Json => append_json(report, findings),
        ReportFormat::Text => report + &text(findings, false),
        ReportFormat::Markdown => report + &text(findings, true),
    }
}

fn severity(f: &Finding) -> String {
    format!("{:?}", f.severity).to_lowercase()
}

fn text(findings: &[Finding], markdown: bool) -> String {
    let mut o = String::new();
    let title = format!("NCCL log findings ({})", findings.len());
    if markdown {
        let _ = writeln!(o, "\n## {title}\n");
    } else {
        let _ = writeln!(o, "\n{title}");
    }
    if findings.is_empty() {
        let _ = writeln!(o, "{}none", if markdown { "" } else { "  " });
    }
    for f in findings {
        if markdown {
            let _ = writeln!(o, "* **[{}] {}**: {}  ", severity(f), f.rule, f.title);
            let _ = writeln!(o, "  {}", f.detail);
            for e in &f.evidence {
                let _ = writeln!(o, "  `{}:{}: {}`", e.file, e.line, e.text.replace('`', "'"));
            }
        } else {
            let _ = writeln!(o, "  [{}] {}: {}", severity(f), f.rule, f.title);
            let _ = writeln!(o, "      {}", f.detail);
            for e in &f.evidence {
                let _ = writeln!(o, "      > {}:{}: {}", e.file, e.line, e.text);
            }
        }
    }
    o
}

fn append_json(report: String, findings: &[Finding]) -> String {
    let list: Vec<serde_json::Value> = findings
        .iter()
        .map(|f| {
            serde_json::json!({
                "rule": f.rule,
                "severity": severity(f),
                "title": f.title,
                "detail": f.detail,
                "evidence": f.evidence.iter().map(|e| serde_json::json!({
                    "file": &*e.file,
                    "line": e.line,
                    "text": e.text,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let list = serde_json::to_string_pretty(&list).unwrap_or_else(|_| "[]".into());
    // Spliced in as the last key, so the report's own key order is kept.
    let body = report.trim_end();
    match body.strip_suffix('}') {
        Some(head) if head.trim_end().ends_with(|c: char| c != '{') => {
            format!(
                "{},\n  \"nccl_log_findings\": {list}\n}}\n",
                head.trim_end()
            )
        }
        _ => report,
    }
}
