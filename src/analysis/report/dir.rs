//! `--out DIR`: every report file and chart of an analysis written into one directory, plus an
//! `index.md` that links each curve to its files.

use crate::analysis::curve::Analysis;
use crate::analysis::out_dir::OutDir;
use crate::analysis::plot;
use crate::analysis::report::{charts, html, json, markdown, Charts};
use crate::analysis::units;
use crate::core::error::Error;
use std::path::{Path, PathBuf};

/// Writes everything (see [`crate::analysis::report::write_dir`]) and returns the paths.
pub(crate) fn write(analysis: &Analysis, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out = OutDir::create(dir)?;
    let charts = charts(analysis);
    for (ch, [busbw_png, time_png]) in charts.iter().zip(pngs(&charts)?) {
        out.put(format!("{}.busbw.svg", ch.slug), ch.busbw_svg.as_bytes())?;
        out.put(format!("{}.busbw.png", ch.slug), &busbw_png)?;
        out.put(format!("{}.time.svg", ch.slug), ch.time_svg.as_bytes())?;
        out.put(format!("{}.time.png", ch.slug), &time_png)?;
    }
    let slugs: Vec<String> = charts.iter().map(|c| c.slug.clone()).collect();
    out.put(
        "report.md",
        markdown::render(analysis, Some(&slugs)).as_bytes(),
    )?;
    out.put("report.html", html::render(analysis, &charts).as_bytes())?;
    out.put("analysis.json", json::render(analysis).as_bytes())?;
    out.put("index.md", index(analysis, &charts).as_bytes())?;
    Ok(out.written())
}

/// Both PNGs of every curve, rasterised on all cores (about 0.1 s per chart on one core, so
/// hundreds of curves would otherwise take minutes).
fn pngs(charts: &[Charts]) -> Result<Vec<[Vec<u8>; 2]>, Error> {
    crate::core::parallel::map(charts, |ch| {
        Ok([
            plot::svg_to_png(&ch.busbw_svg)?,
            plot::svg_to_png(&ch.time_svg)?,
        ])
    })
    .into_iter()
    .collect()
}

/// `index.md`: the reports, then one table row per curve with links to its four chart files.
fn index(analysis: &Analysis, charts: &[Charts]) -> String {
    let mut out = String::from(
        "# ncclbench analysis: files\n\n\
         Reports: [report.md](report.md), [report.html](report.html), \
         [analysis.json](analysis.json)\n\n\
         | curve | busbw versus size | time versus size |\n|---|---|---|\n",
    );
    for (c, ch) in analysis.curves.iter().zip(charts) {
        let links =
            |kind: &str| format!("[SVG]({s}.{kind}.svg), [PNG]({s}.{kind}.png)", s = ch.slug);
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            markdown::escape(&units::key_label(c)),
            links("busbw"),
            links("time")
        ));
    }
    out
}
