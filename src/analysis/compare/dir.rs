//! `--out DIR`: the report in every format (`compare.txt`, `compare.md`, `compare.json`) and
//! one chart per collective (`<collective>.busbw.svg` and `.png`), written into one directory.

use super::model::{Comparison, CurveComparison};
use super::{chart, json, text};
use crate::analysis::out_dir::OutDir;
use crate::analysis::plot;
use crate::core::error::Error;
use std::path::{Path, PathBuf};

/// A filesystem-safe stem: characters outside `[A-Za-z0-9_+]` become `_`, at most 40 kept,
/// `-N` appended on collisions (collective names come from input files).
fn slug(name: &str, seen: &mut Vec<String>) -> String {
    let base: String = name
        .chars()
        .take(40)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '+' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = if base.is_empty() {
        "curve".into()
    } else {
        base
    };
    let mut s = base.clone();
    let mut n = 1;
    while seen.contains(&s) {
        n += 1;
        s = format!("{base}-{n}");
    }
    seen.push(s.clone());
    s
}

/// Writes the reports and charts; returns the paths written.
pub(crate) fn write(cmp: &Comparison, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out = OutDir::create(dir)?;
    out.put("compare.txt", text::render(cmp).as_bytes())?;
    out.put("compare.md", text::render_markdown(cmp).as_bytes())?;
    out.put("compare.json", json::render(cmp).as_bytes())?;
    let mut collectives: Vec<&str> = cmp
        .curves
        .iter()
        .map(|c| c.id.collective.as_str())
        .collect();
    collectives.dedup();
    let mut seen = Vec::new();
    for name in collectives {
        let curves: Vec<&CurveComparison> = cmp
            .curves
            .iter()
            .filter(|c| c.id.collective == name)
            .collect();
        let svg = chart::busbw_svg(name, &curves);
        let stem = slug(name, &mut seen);
        out.put(format!("{stem}.busbw.svg"), svg.as_bytes())?;
        out.put(format!("{stem}.busbw.png"), &plot::svg_to_png(&svg)?)?;
    }
    Ok(out.written())
}
