//! `--out DIR`: the report in every format (`compare.txt`, `compare.md`, `compare.json`) and
//! one chart per collective (`<collective>.busbw.svg` and `.png`), written into one directory.

use super::model::{Comparison, CurveComparison};
use super::{chart, json, text};
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
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    let mut put = |name: String, bytes: &[u8]| -> Result<(), Error> {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        written.push(path);
        Ok(())
    };
    put("compare.txt".into(), text::render(cmp).as_bytes())?;
    put("compare.md".into(), text::render_markdown(cmp).as_bytes())?;
    put("compare.json".into(), json::render(cmp).as_bytes())?;
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
        put(format!("{stem}.busbw.svg"), svg.as_bytes())?;
        put(format!("{stem}.busbw.png"), &plot::svg_to_png(&svg)?)?;
    }
    Ok(written)
}
