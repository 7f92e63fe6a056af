//! A tiny SVG writer: the handful of elements the charts need (lines, polylines, circles,
//! rectangles, text, groups), with coordinates rounded to 0.1 px, text escaped, and any
//! element with a non-finite coordinate left out, so the output is always well-formed and
//! NaN-free.

use std::fmt::Write;

/// The namespace attribute of the root element (standalone files need it; inline SVG in HTML
/// does not).
pub(crate) const NS_ATTR: &str = r#" xmlns="http://www.w3.org/2000/svg""#;

/// The font stack of every chart: the embedded font first, then fallbacks for browsers.
pub(crate) const FONT_STACK: &str =
    "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, Arial, sans-serif";

/// An SVG document being written.
pub(crate) struct Svg {
    out: String,
}

/// Stroke of a line: colour, width and optional dash pattern.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stroke<'a> {
    /// CSS colour.
    pub color: &'a str,
    /// Width in px.
    pub width: f64,
    /// `stroke-dasharray`, e.g. `8 5`.
    pub dash: Option<&'a str>,
}

impl<'a> Stroke<'a> {
    /// A solid stroke.
    pub(crate) fn solid(color: &'a str, width: f64) -> Stroke<'a> {
        Stroke {
            color,
            width,
            dash: None,
        }
    }

    /// A dashed stroke.
    pub(crate) fn dashed(color: &'a str, width: f64, dash: &'a str) -> Stroke<'a> {
        Stroke {
            color,
            width,
            dash: Some(dash),
        }
    }

    /// The stroke attributes.
    fn attrs(&self) -> String {
        let mut s = format!(
            r#" fill="none" stroke="{}" stroke-width="{}""#,
            escape(self.color),
            num(self.width)
        );
        if let Some(dash) = self.dash {
            let _ = write!(s, r#" stroke-dasharray="{}""#, escape(dash));
        }
        s
    }
}

/// Text placement and look.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TextStyle<'a> {
    /// Font size in px.
    pub size: f64,
    /// `start`, `middle` or `end`.
    pub anchor: &'a str,
    /// CSS colour.
    pub color: &'a str,
    /// Rotation in degrees about the anchor point (0 = none).
    pub rotate: f64,
}

impl<'a> TextStyle<'a> {
    /// Unrotated text.
    pub(crate) fn new(size: f64, anchor: &'a str, color: &'a str) -> TextStyle<'a> {
        TextStyle {
            size,
            anchor,
            color,
            rotate: 0.0,
        }
    }

    /// The same text turned by `degrees`.
    pub(crate) fn rotated(self, degrees: f64) -> TextStyle<'a> {
        TextStyle {
            rotate: degrees,
            ..self
        }
    }
}

/// A coordinate with one decimal, trailing `.0` dropped.
fn num(v: f64) -> String {
    let s = format!("{v:.1}");
    match s.strip_suffix(".0") {
        Some(whole) if whole != "-0" => whole.to_string(),
        Some(_) => "0".to_string(),
        None => s,
    }
}

/// Whether every value is finite.
fn finite(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}

/// Text made safe for XML content and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 forbids most control characters even when escaped.
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

impl Svg {
    /// A `width` x `height` document on a white background.
    pub(crate) fn new(width: u32, height: u32) -> Svg {
        let mut out = String::with_capacity(32 * 1024);
        let _ = write!(
            out,
            r#"<svg{NS_ATTR} width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="{}">"#,
            escape(FONT_STACK)
        );
        out.push('\n');
        let mut svg = Svg { out };
        svg.rect(
            0.0,
            0.0,
            f64::from(width),
            f64::from(height),
            "#ffffff",
            None,
        );
        svg
    }

    /// Opens a group with a class (it names what the group draws, for tests and styling).
    pub(crate) fn open_group(&mut self, class: &str) {
        let _ = writeln!(self.out, r#"<g class="{}">"#, escape(class));
    }

    /// Closes the innermost group.
    pub(crate) fn close_group(&mut self) {
        self.out.push_str("</g>\n");
    }

    /// A straight line.
    pub(crate) fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: Stroke) {
        if finite(&[x1, y1, x2, y2]) {
            let _ = writeln!(
                self.out,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}"{}/>"#,
                num(x1),
                num(y1),
                num(x2),
                num(y2),
                stroke.attrs()
            );
        }
    }

    /// A polyline through the finite points (nothing when fewer than two remain).
    pub(crate) fn polyline(&mut self, points: &[(f64, f64)], stroke: Stroke) {
        let pts: Vec<String> = points
            .iter()
            .filter(|(x, y)| finite(&[*x, *y]))
            .map(|(x, y)| format!("{},{}", num(*x), num(*y)))
            .collect();
        if pts.len() >= 2 {
            let _ = writeln!(
                self.out,
                r#"<polyline points="{}"{} stroke-linejoin="round"/>"#,
                pts.join(" "),
                stroke.attrs()
            );
        }
    }

    /// A filled circle.
    pub(crate) fn circle(&mut self, cx: f64, cy: f64, r: f64, fill: &str) {
        if finite(&[cx, cy, r]) {
            let _ = writeln!(
                self.out,
                r#"<circle cx="{}" cy="{}" r="{}" fill="{}"/>"#,
                num(cx),
                num(cy),
                num(r),
                escape(fill)
            );
        }
    }

    /// A circle outline.
    pub(crate) fn ring(&mut self, cx: f64, cy: f64, r: f64, stroke: Stroke) {
        if finite(&[cx, cy, r]) {
            let _ = writeln!(
                self.out,
                r#"<circle cx="{}" cy="{}" r="{}"{}/>"#,
                num(cx),
                num(cy),
                num(r),
                stroke.attrs()
            );
        }
    }

    /// A filled rectangle, optionally translucent; negative sizes draw nothing.
    pub(crate) fn rect(
        &mut self,
        x: f64,
        y: f64,
        w: f64,
        h: f64,
        fill: &str,
        opacity: Option<f64>,
    ) {
        if finite(&[x, y, w, h]) && w >= 0.0 && h >= 0.0 {
            let op = opacity.map_or(String::new(), |o| format!(r#" fill-opacity="{}""#, o));
            let _ = writeln!(
                self.out,
                r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{}"{op}/>"#,
                num(x),
                num(y),
                num(w),
                num(h),
                escape(fill)
            );
        }
    }

    /// A rectangle outline.
    pub(crate) fn frame(&mut self, x: f64, y: f64, w: f64, h: f64, stroke: Stroke) {
        if finite(&[x, y, w, h]) && w >= 0.0 && h >= 0.0 {
            let _ = writeln!(
                self.out,
                r#"<rect x="{}" y="{}" width="{}" height="{}"{}/>"#,
                num(x),
                num(y),
                num(w),
                num(h),
                stroke.attrs()
            );
        }
    }

    /// A line of text anchored at (x, y) (y is the baseline).
    pub(crate) fn text(&mut self, x: f64, y: f64, text: &str, style: TextStyle) {
        if !finite(&[x, y, style.size]) {
            return;
        }
        let rotate = if style.rotate != 0.0 && style.rotate.is_finite() {
            format!(
                r#" transform="rotate({} {} {})""#,
                num(style.rotate),
                num(x),
                num(y)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            self.out,
            r#"<text x="{}" y="{}" font-size="{}" text-anchor="{}" fill="{}"{rotate}>{}</text>"#,
            num(x),
            num(y),
            num(style.size),
            escape(style.anchor),
            escape(style.color),
            escape(text)
        );
    }

    /// The finished document.
    pub(crate) fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}
