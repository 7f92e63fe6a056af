//! Reports of an [`Analysis`]: the terminal table, markdown, a self-contained HTML page and
//! JSON ([`render`]), and a directory with all of them plus every chart as SVG and PNG
//! ([`write_dir`]).
//!
//! Every number goes through one formatting function (`units`) and every table is defined once
//! (`table`), so all formats show the same numbers. The JSON schema is documented in [`json`].

use crate::analysis::curve::Analysis;
use crate::analysis::plot;
use crate::analysis::units;
use crate::core::error::Error;
use std::path::{Path, PathBuf};
use std::str::FromStr;

mod dir;
mod html;
pub mod json;
pub(crate) mod markdown;
pub(crate) mod table;
pub(crate) mod text;

#[cfg(test)]
mod tests;

pub use json::{Document, SCHEMA};

/// What `ncclbench analyze` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The terminal table.
    Text,
    /// Markdown tables.
    Markdown,
    /// JSON (schema [`SCHEMA`]).
    Json,
}

impl FromStr for Format {
    type Err = Error;

    /// `text`, `markdown` (or `md`), `json`.
    fn from_str(s: &str) -> Result<Format, Error> {
        match s {
            "text" => Ok(Format::Text),
            "markdown" | "md" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            other => Err(Error::usage(format!(
                "unknown report format '{other}' (expected text, markdown or json)"
            ))),
        }
    }
}

/// The report in `format`, as `analyze` prints it to stdout (markdown without chart links).
pub fn render(analysis: &Analysis, format: Format) -> String {
    match format {
        Format::Text => text::render(analysis),
        Format::Markdown => markdown::render(analysis, None),
        Format::Json => json::render(analysis),
    }
}

/// The self-contained HTML report (charts inline), as `write_dir` writes it to `report.html`.
pub fn render_html(analysis: &Analysis) -> String {
    html::render(analysis, &charts(analysis))
}

/// Writes the whole report into `dir` (created when missing): per curve
/// `<slug>.busbw.svg`, `<slug>.busbw.png`, `<slug>.time.svg`, `<slug>.time.png`, then
/// `report.md` (charts linked), `report.html` (charts inline), `analysis.json` and `index.md`
/// (every curve with links to its files). Returns the paths written, in that order.
pub fn write_dir(analysis: &Analysis, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    dir::write(analysis, dir)
}

/// The directory a report's `written` files went to: `asked`, or the numbered directory
/// beside it that was used because `asked` already held something.
pub fn written_dir(written: &[PathBuf], asked: &Path) -> PathBuf {
    written
        .first()
        .and_then(|p| p.parent())
        .map_or_else(|| asked.to_path_buf(), Path::to_path_buf)
}

/// One curve's charts and the file stem they are written under.
#[derive(Debug, Clone)]
pub(crate) struct Charts {
    /// Unique, filesystem-safe file stem.
    pub slug: String,
    /// busbw-versus-size SVG.
    pub busbw_svg: String,
    /// time-versus-size SVG.
    pub time_svg: String,
}

/// Charts for every curve, with slugs made unique (`-2`, `-3`, ... on collisions).
pub(crate) fn charts(analysis: &Analysis) -> Vec<Charts> {
    let mut seen: Vec<String> = Vec::new();
    analysis
        .curves
        .iter()
        .map(|c| {
            let base = units::slug(c);
            let mut slug = base.clone();
            let mut n = 1;
            while seen.contains(&slug) {
                n += 1;
                slug = format!("{base}-{n}");
            }
            seen.push(slug.clone());
            Charts {
                slug,
                busbw_svg: plot::busbw_svg(c),
                time_svg: plot::time_svg(c),
            }
        })
        .collect()
}
