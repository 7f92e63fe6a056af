//! Renderings of the production [`Report`]: terminal, markdown, JSON ([`render`]) and a
//! directory with `report.md`, `report.html` (charts inline), `production.json` and each chart
//! as SVG and PNG ([`write_dir`]). Tables are defined once (`tables`), so every format shows the same numbers.

mod chart;
mod html;
pub mod json;
mod tables;
mod text;

use crate::analysis::out_dir::OutDir;
use crate::analysis::production::baseline::Baseline;
use crate::analysis::production::model::Report;
use crate::core::error::Error;
use std::path::{Path, PathBuf};

pub use json::SCHEMA;

/// What goes to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Terminal tables.
    Text,
    /// Markdown.
    Markdown,
    /// JSON (schema [`SCHEMA`]).
    Json,
}

/// The report in `format`.
pub fn render(r: &Report, format: Format) -> String {
    match format {
        Format::Text => text::render(r, false),
        Format::Markdown => text::render(r, true),
        Format::Json => json::render(r),
    }
}

/// The self-contained HTML page (charts need the baseline's curves).
pub fn render_html(r: &Report, base: Option<&Baseline>) -> String {
    html::render(r, base)
}

/// Writes `report.md`, `report.html`, `production.json` and, per (collective, ranks) the
/// baseline has a curve for, `production-<collective>-<n>ranks.svg` and `.png` into `dir`
/// (created when missing); returns the paths written.
pub fn write_dir(r: &Report, base: Option<&Baseline>, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out = OutDir::create(dir)?;
    let charts = html::charts(r, base);
    let pngs: Vec<Vec<u8>> =
        crate::core::parallel::map(&charts, |(_, svg)| crate::analysis::plot::svg_to_png(svg))
            .into_iter()
            .collect::<Result<_, _>>()?;
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("report.md".into(), render(r, Format::Markdown).into_bytes()),
        ("report.html".into(), render_html(r, base).into_bytes()),
        (
            "production.json".into(),
            render(r, Format::Json).into_bytes(),
        ),
    ];
    for ((stem, svg), png) in charts.into_iter().zip(pngs) {
        files.push((format!("production-{stem}.svg"), svg.into_bytes()));
        files.push((format!("production-{stem}.png"), png));
    }
    for (name, body) in files {
        out.put(name, &body)?;
    }
    Ok(out.written())
}
