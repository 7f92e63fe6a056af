//! The markdown report: tables, escaping, and chart links when written to a directory.

use crate::analysis::report::{markdown, render, Format};
use crate::analysis::testdata;
use crate::analysis::units;

#[test]
fn stdout_markdown_has_tables_and_no_links() {
    let md = render(&testdata::analysis(), Format::Markdown);
    assert!(md.starts_with("# ncclbench analysis\n\n| collective | dtype |"));
    assert!(md.contains("| all_reduce | float | sum | 8 | out_of_place | 10.05 | 347.60 | 350.00 | 5.72M | 64M | 3 | 86.9% |\n"));
    assert!(md.contains("| 3 | 8M..1G | 30.00 | 200.00 | 350.00 | 0.6% | 8 | Ring/Simple |\n"));
    assert!(md.contains("| 128K | +13.6% | Tree/LL -> Ring/LL128 |\n"));
    assert!(!md.contains("]("), "no links without a directory:\n{md}");
    // The 2-point curve has nothing to detail, so no section.
    assert!(!md.contains("## broadcast"));
}

#[test]
fn directory_markdown_links_every_chart_of_every_curve() {
    let a = testdata::analysis();
    let slugs: Vec<String> = a.curves.iter().map(units::slug).collect();
    let md = markdown::render(&a, Some(&slugs));
    for slug in &slugs {
        for kind in ["busbw", "time"] {
            assert!(
                md.contains(&format!("]({slug}.{kind}.png)")),
                "{slug} {kind} png"
            );
            assert!(
                md.contains(&format!("]({slug}.{kind}.svg)")),
                "{slug} {kind} svg"
            );
        }
    }
    assert!(md.contains("## broadcast int8 none, 2 ranks, out_of_place\n"));
    assert!(md.contains("![busbw versus size](all_reduce-float-sum-n8-out_of_place.busbw.png)"));
}

#[test]
fn input_text_is_escaped() {
    let md = render(&testdata::analysis(), Format::Markdown);
    assert!(md.contains("- logs/\\<script>alert(1)\\</script>.txt:12: unparsable row"));
    let bare_tag = md.match_indices('<').any(|(i, _)| !md[..i].ends_with('\\'));
    assert!(!bare_tag, "every < is escaped:\n{md}");
    let mut a = testdata::analysis();
    a.curves[1].anomalies.push(crate::analysis::curve::Anomaly {
        kind: "outlier".into(),
        bytes: 8,
        detail: "a | b\n[x](y)".into(),
    });
    let md = render(&a, Format::Markdown);
    assert!(
        md.contains("| outlier | 8B | a \\| b \\[x\\](y) |\n"),
        "{md}"
    );
}
