//! SVG to PNG with resvg, using only the embedded DejaVu Sans (no system fonts or libraries),
//! so charts rasterise the same on every machine.

use crate::core::error::Error;
use resvg::tiny_skia::{Color, Pixmap, Transform};
use resvg::usvg::{self, fontdb};
use std::sync::{Arc, OnceLock};

/// DejaVu Sans (Bitstream Vera license, see `assets/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");

/// The family name of [`FONT`].
const FONT_FAMILY: &str = "DejaVu Sans";

/// Largest width or height rasterised, px (charts are 1200x700; this bounds memory for any
/// SVG handed in).
const MAX_SIDE: u32 = 8192;

/// A font database holding only the embedded font, built once.
fn fonts() -> Arc<fontdb::Database> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_source(fontdb::Source::Binary(Arc::new(FONT)));
        db.set_sans_serif_family(FONT_FAMILY);
        db.set_serif_family(FONT_FAMILY);
        db.set_monospace_family(FONT_FAMILY);
        Arc::new(db)
    })
    .clone()
}

/// A rendering failure as an output error.
fn failed(what: impl std::fmt::Display) -> Error {
    Error::Output(std::io::Error::other(format!("rendering PNG: {what}")))
}

/// Rasterises an SVG document at its own size on a white background and encodes it as PNG.
/// Text uses the embedded font whatever family the SVG names.
pub(crate) fn svg_to_png(svg: &str) -> Result<Vec<u8>, Error> {
    let options = usvg::Options {
        font_family: FONT_FAMILY.to_string(),
        fontdb: fonts(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).map_err(failed)?;
    let size = tree.size().to_int_size();
    let (width, height) = (size.width(), size.height());
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(failed(format!(
            "{width}x{height} exceeds {MAX_SIDE}x{MAX_SIDE}"
        )));
    }
    let mut pixmap = Pixmap::new(width, height).ok_or_else(|| failed("empty image"))?;
    pixmap.fill(Color::WHITE);
    resvg::render(&tree, Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(failed)
}
