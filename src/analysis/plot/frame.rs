//! What both charts share: the 1200x700 layout, title, grid with tick labels, axis titles,
//! vertical markers with rotated labels, and the legend column on the right.

use crate::analysis::plot::scale::{Axis, Ticks};
use crate::analysis::plot::svg::{Stroke, Svg, TextStyle};

/// Chart width in px.
pub(crate) const WIDTH: u32 = 1200;
/// Chart height in px.
pub(crate) const HEIGHT: u32 = 700;
/// Plot area, px.
pub(crate) const LEFT: f64 = 100.0;
/// Plot area right edge.
pub(crate) const RIGHT: f64 = 915.0;
/// Plot area top edge.
pub(crate) const TOP: f64 = 92.0;
/// Plot area bottom edge.
pub(crate) const BOTTOM: f64 = 600.0;
/// Left edge of the legend column.
const LEGEND_X: f64 = 940.0;
/// Text colour.
pub(crate) const INK: &str = "#222222";
/// Secondary text colour.
pub(crate) const MUTED: &str = "#555555";
/// Longest title kept whole (input keys can be anything).
const TITLE_CHARS: usize = 90;

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mark {
    /// A dot (measured points).
    Dot(&'static str),
    /// A line sample.
    Line(Stroke<'static>),
    /// A filled square (bands).
    Swatch(&'static str),
    /// A circle outline (anomalies).
    Ring(Stroke<'static>),
}

/// One legend entry: its mark and one or two lines of text.
#[derive(Debug, Clone)]
pub(crate) struct LegendItem {
    /// The mark.
    pub mark: Mark,
    /// Text lines (the first beside the mark).
    pub lines: Vec<String>,
}

/// A chart being drawn: the document and its two axes.
pub(crate) struct Chart {
    /// The document.
    pub svg: Svg,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
}

/// `s` cut to `max` characters with an ellipsis.
pub(crate) fn clip_text(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut cut: String = s.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

impl Chart {
    /// A blank chart with its title and subtitle.
    pub(crate) fn new(title: &str, subtitle: &str, x: Axis, y: Axis) -> Chart {
        let mut svg = Svg::new(WIDTH, HEIGHT);
        svg.open_group("title");
        svg.text(
            LEFT,
            34.0,
            &clip_text(title, TITLE_CHARS),
            TextStyle::new(22.0, "start", INK),
        );
        svg.text(
            LEFT,
            58.0,
            &clip_text(subtitle, TITLE_CHARS + 20),
            TextStyle::new(15.0, "start", MUTED),
        );
        svg.close_group();
        Chart { svg, x, y }
    }

    /// Grid lines and tick labels of both axes, the plot frame, and the axis titles.
    pub(crate) fn axes(&mut self, xt: &Ticks, yt: &Ticks, x_title: &str, y_title: &str) {
        let minor = Stroke::solid("#eeeeee", 1.0);
        let major = Stroke::solid("#d4d4d4", 1.0);
        let label = TextStyle::new(14.0, "middle", INK);
        self.svg.open_group("grid");
        for t in &xt.minor {
            let x = self.x.px_t(*t);
            self.svg.line(x, TOP, x, BOTTOM, minor);
        }
        for t in &yt.minor {
            let y = self.y.px_t(*t);
            self.svg.line(LEFT, y, RIGHT, y, minor);
        }
        for (t, text) in &xt.major {
            let x = self.x.px_t(*t);
            self.svg.line(x, TOP, x, BOTTOM + 5.0, major);
            self.svg.text(x, BOTTOM + 22.0, text, label);
        }
        for (t, text) in &yt.major {
            let y = self.y.px_t(*t);
            self.svg.line(LEFT - 5.0, y, RIGHT, y, major);
            self.svg
                .text(LEFT - 9.0, y + 5.0, text, TextStyle::new(14.0, "end", INK));
        }
        self.svg.close_group();
        self.svg.frame(
            LEFT,
            TOP,
            RIGHT - LEFT,
            BOTTOM - TOP,
            Stroke::solid("#888888", 1.0),
        );
        let title = TextStyle::new(16.0, "middle", INK);
        self.svg
            .text((LEFT + RIGHT) / 2.0, BOTTOM + 52.0, x_title, title);
        let mid = (TOP + BOTTOM) / 2.0;
        self.svg.text(28.0, mid, y_title, title.rotated(-90.0));
    }

    /// A vertical marker at `bytes` with a rotated label, written near the top of the plot
    /// area or, with `label_low`, near the bottom. Nothing when `bytes` is off the axis.
    pub(crate) fn vmarker(&mut self, bytes: f64, stroke: Stroke, label: &str, label_low: bool) {
        if !self.x.contains(bytes) {
            return;
        }
        let Some(x) = self.x.px(bytes) else {
            return;
        };
        self.svg.line(x, TOP, x, BOTTOM, stroke);
        let style = TextStyle::new(14.0, if label_low { "start" } else { "end" }, stroke.color);
        let y = if label_low { BOTTOM - 8.0 } else { TOP + 8.0 };
        self.svg.text(x - 5.0, y, label, style.rotated(-90.0));
    }

    /// The legend column: each entry's mark and text, top to bottom, as many as fit.
    pub(crate) fn legend(&mut self, items: &[LegendItem]) {
        self.svg.open_group("legend");
        let mut y = TOP + 8.0;
        let text = TextStyle::new(14.0, "start", INK);
        for item in items {
            let needed = 20.0 * item.lines.len() as f64 + 8.0;
            if y + needed > f64::from(HEIGHT) - 10.0 {
                break;
            }
            match item.mark {
                Mark::Dot(color) => self.svg.circle(LEGEND_X + 12.0, y - 5.0, 5.0, color),
                Mark::Line(stroke) => {
                    self.svg
                        .line(LEGEND_X, y - 5.0, LEGEND_X + 24.0, y - 5.0, stroke)
                }
                Mark::Ring(stroke) => self.svg.ring(LEGEND_X + 12.0, y - 5.0, 7.0, stroke),
                Mark::Swatch(color) => {
                    self.svg
                        .rect(LEGEND_X + 2.0, y - 14.0, 20.0, 16.0, color, None)
                }
            }
            for (i, line) in item.lines.iter().enumerate() {
                let style = if i == 0 {
                    text
                } else {
                    TextStyle::new(14.0, "start", MUTED)
                };
                self.svg
                    .text(LEGEND_X + 32.0, y, &clip_text(line, 26), style);
                y += 20.0;
            }
            y += 8.0;
        }
        self.svg.close_group();
    }

    /// The finished SVG.
    pub(crate) fn finish(self) -> String {
        self.svg.finish()
    }
}
