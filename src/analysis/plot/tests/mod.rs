//! Tests of the charts: structure of the SVG, the model and scales behind it, PNG output, and
//! robustness on degenerate or hostile curves.

use resvg::usvg::roxmltree::{Document, Node};

mod charts;
mod edge;
mod png;
mod scale;

/// Parses an SVG document (proves it is well-formed XML), or fails the test with the error.
fn parse(svg: &str) -> Document<'_> {
    match Document::parse(svg) {
        Ok(doc) => doc,
        Err(e) => panic!("malformed SVG: {e}\n{svg}"),
    }
}

/// The `<g class="...">` groups of that class.
fn groups<'a, 'i>(doc: &'a Document<'i>, class: &str) -> Vec<Node<'a, 'i>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("g") && n.attribute("class") == Some(class))
        .collect()
}

/// How many `tag` elements the groups of `class` hold.
fn count_in(doc: &Document, class: &str, tag: &str) -> usize {
    groups(doc, class)
        .iter()
        .flat_map(|g| g.descendants())
        .filter(|n| n.has_tag_name(tag))
        .count()
}

/// The content of every `<text>` in the groups of `class`, joined by `|`.
fn text_in(doc: &Document, class: &str) -> String {
    groups(doc, class)
        .iter()
        .flat_map(|g| g.descendants())
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect::<Vec<_>>()
        .join("|")
}
