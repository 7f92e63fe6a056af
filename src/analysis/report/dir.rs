//! `--out DIR`: every report file and chart of an analysis written into one directory, plus an
//! `index.md` that links each curve to its files.

use crate::analysis::curve::Analysis;
use crate::analysis::plot;
use crate::analysis::report::{charts, html, json, markdown, Charts};
use crate::analysis::units;
use crate::core::error::Error;
use std::path::{Path, PathBuf};

/// Writes everything (see [`crate::analysis::report::write_dir`]) and returns the paths.
pub(crate) fn write(analysis: &Analysis, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let charts = charts(analysis);
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
    for (ch, [busbw_png, time_png]) in charts.iter().zip(pngs(&charts)?) {
        put(format!("{}.busbw.svg", ch.slug), ch.busbw_svg.as_bytes())?;
        put(format!("{}.busbw.png", ch.slug), &busbw_png)?;
        put(format!("{}.time.svg", ch.slug), ch.time_svg.as_bytes())?;
        put(format!("{}.time.png", ch.slug), &time_png)?;
    }
    let slugs: Vec<String> = charts.iter().map(|c| c.slug.clone()).collect();
    put(
        "report.md".into(),
        markdown::render(analysis, Some(&slugs)).as_bytes(),
    )?;
    put(
        "report.html".into(),
        html::render(analysis, &charts).as_bytes(),
    )?;
    put("analysis.json".into(), json::render(analysis).as_bytes())?;
    put("index.md".into(), index(analysis, &charts).as_bytes())?;
    Ok(written)
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
