//! The HTML report: one self-contained page, charts inline, input text escaped.

use crate::analysis::report::render_html;
use crate::analysis::testdata;

#[test]
fn one_inline_svg_per_chart_and_nothing_external() {
    let a = testdata::analysis();
    let html = render_html(&a);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.ends_with("</html>\n"));
    assert_eq!(html.matches("<svg").count(), 2 * a.curves.len());
    assert_eq!(html.matches("</svg>").count(), 2 * a.curves.len());
    assert!(
        !html.contains("http"),
        "no URL of any kind, not even the SVG namespace"
    );
    for banned in ["<script", "<link", "<img", "src=", "@import", "url("] {
        assert!(!html.contains(banned), "found {banned}");
    }
    assert!(html.contains("<style>"));
}

#[test]
fn input_text_is_escaped() {
    let html = render_html(&testdata::analysis());
    assert!(html.contains("logs/&lt;script&gt;alert(1)&lt;/script&gt;.txt:12: unparsable row"));
    assert!(html.contains("missing key &lt;time&gt; &amp; &lt;size&gt;"));
    assert!(html.contains("<li>... and 2 more</li>"));
}

#[test]
fn same_numbers_as_the_text_report() {
    let html = render_html(&testdata::analysis());
    let row = "<td><a href=\"#all_reduce-float-sum-n8-out_of_place\">all_reduce</a></td>\
        <td>float</td><td>sum</td><td class=\"r\">8</td><td>out_of_place</td>\
        <td class=\"r\">10.05</td><td class=\"r\">347.60</td><td class=\"r\">350.00</td>\
        <td class=\"r\">5.72M</td><td class=\"r\">64M</td><td class=\"r\">3</td>\
        <td class=\"r\">86.9%</td>";
    assert!(html.contains(row), "{html}");
    assert!(html.contains("<section id=\"all_reduce-float-sum-n8-out_of_place\">"));
    assert!(html.contains("<td>Tree/LL -&gt; Ring/LL128</td>"));
}

#[test]
fn hostile_keys_are_escaped_in_headings_anchors_and_charts() {
    let mut a = testdata::analysis();
    a.curves[0].collective = "<img src=x onerror=alert(1)>".into();
    a.curves[0].dtype = "\"quoted\"".into();
    let html = render_html(&a);
    assert!(!html.contains("<img"));
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(!html.contains("\"quoted\""));
}
