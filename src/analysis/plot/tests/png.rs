//! PNG output: valid files at 1200x700, text drawn with the embedded font, errors not panics.

use crate::analysis::plot::{busbw_svg, svg_to_png, time_svg};
use crate::analysis::testdata;
use resvg::tiny_skia::Pixmap;

/// Width and height from the IHDR chunk, after checking the PNG signature.
fn ihdr_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&png[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

#[test]
fn charts_rasterise_to_1200x700_pngs_that_decode() {
    let c = testdata::all_reduce();
    for svg in [busbw_svg(&c), time_svg(&c)] {
        let png = svg_to_png(&svg).expect("rendered");
        assert_eq!(ihdr_size(&png), (1200, 700));
        let pixmap = Pixmap::decode_png(&png).expect("decodes");
        assert_eq!((pixmap.width(), pixmap.height()), (1200, 700));
        let dark = pixmap
            .pixels()
            .iter()
            .filter(|p| p.red() < 100 && p.green() < 100 && p.blue() < 100)
            .count();
        assert!(dark > 2000, "text and lines drawn ({dark} dark pixels)");
    }
}

/// Text alone, in a family no system has, still renders: the embedded font is the fallback
/// for every family, and nothing depends on system fonts.
#[test]
fn text_renders_with_the_embedded_font_only() {
    let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40">
<text x="4" y="30" font-size="24" font-family="NoSuchFont">busbw 8K</text></svg>"#;
    let png = svg_to_png(svg).expect("rendered");
    let pixmap = Pixmap::decode_png(&png).expect("decodes");
    let inked = pixmap.pixels().iter().filter(|p| p.red() < 128).count();
    assert!(inked > 100, "glyphs drawn ({inked} pixels)");
    let blank = svg.replace("busbw 8K", "");
    let pixmap = Pixmap::decode_png(&svg_to_png(&blank).expect("rendered")).expect("decodes");
    assert!(
        pixmap.pixels().iter().all(|p| p.red() == 255),
        "white without text"
    );
}

#[test]
fn bad_svg_is_an_error_not_a_panic() {
    for svg in [
        "",
        "not xml",
        "<svg",
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0"/>"#,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"/>"#,
    ] {
        let err = svg_to_png(svg).expect_err(svg);
        assert!(err.to_string().contains("rendering PNG"), "{err}");
    }
}
