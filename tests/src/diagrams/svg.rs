//! A tiny SVG writer: shapes as attributes only (no CSS, no fonts, no links), numbers with at
//! most one decimal, so the output is the same on every machine.

use std::fmt::Write as _;

/// Ink for ordinary lines and text.
pub const INK: &str = "#222222";
/// Ink for losses, crashes and bad outcomes.
pub const RED: &str = "#b3261e";
/// Fill for boxes that hold a step.
pub const BOX: &str = "#eef3fb";
/// Fill for highlighted outcomes.
pub const NOTE: &str = "#fff4cc";
/// Lifelines and guides.
pub const GREY: &str = "#8a8a8a";

/// A rough width of `text` in a sans-serif font of `size` px, erring on the wide side so that
/// boxes sized by it never clip their text.
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.58
}

/// A coordinate: one decimal, no trailing `.0`.
pub fn num(x: f64) -> String {
    let rounded = (x * 10.0).round() / 10.0;
    let s = format!("{rounded:.1}");
    s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
}

/// Escapes text for element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// How a text is anchored at its x coordinate.
#[derive(Debug, Clone, Copy)]
pub enum Anchor {
    /// x is where the text starts.
    Start,
    /// x is the text's middle.
    Middle,
    /// x is where the text ends.
    End,
}

/// Text styling beyond position.
#[derive(Debug, Clone, Copy)]
pub struct Font {
    /// Size in px.
    pub size: f64,
    /// Bold.
    pub bold: bool,
    /// Italic.
    pub italic: bool,
    /// Colour.
    pub fill: &'static str,
}

impl Font {
    /// Plain ink text of `size` px.
    pub fn plain(size: f64) -> Self {
        Self {
            size,
            bold: false,
            italic: false,
            fill: INK,
        }
    }
}

/// The elements drawn so far, in painting order.
#[derive(Debug, Default)]
pub struct Svg {
    body: String,
}

impl Svg {
    /// A rectangle; `dash` draws its border dashed.
    #[allow(clippy::too_many_arguments)]
    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, stroke: &str, dash: bool) {
        let dash = if dash {
            r#" stroke-dasharray="5 3""#
        } else {
            ""
        };
        let _ = writeln!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" rx="4" fill="{fill}" stroke="{stroke}"{dash}/>"#,
            num(x),
            num(y),
            num(w),
            num(h)
        );
    }

    /// A straight line, optionally dashed and ending in an arrowhead of its colour.
    #[allow(clippy::too_many_arguments)]
    pub fn line(
        &mut self,
        x1: f64,
        y1: f64,
        x2: f64,
        y2: f64,
        stroke: &str,
        dash: bool,
        arrow: bool,
    ) {
        self.path(
            &format!("M{} {} L{} {}", num(x1), num(y1), num(x2), num(y2)),
            stroke,
            dash,
            arrow,
        );
    }

    /// A path from SVG path data (built with [`num`]), unfilled.
    pub fn path(&mut self, d: &str, stroke: &str, dash: bool, arrow: bool) {
        let dash = if dash {
            r#" stroke-dasharray="5 4""#
        } else {
            ""
        };
        let marker = match (arrow, stroke) {
            (false, _) => "",
            (true, RED) => r#" marker-end="url(#arrow-red)""#,
            (true, _) => r#" marker-end="url(#arrow)""#,
        };
        let _ = writeln!(
            self.body,
            r#"<path d="{d}" fill="none" stroke="{stroke}" stroke-width="1.5"{dash}{marker}/>"#
        );
    }

    /// A filled circle.
    pub fn circle(&mut self, x: f64, y: f64, r: f64, fill: &str) {
        let _ = writeln!(
            self.body,
            r#"<circle cx="{}" cy="{}" r="{}" fill="{fill}" stroke="{INK}"/>"#,
            num(x),
            num(y),
            num(r)
        );
    }

    /// A cross, for a message that never arrives.
    pub fn cross(&mut self, x: f64, y: f64) {
        let d = format!(
            "M{} {} L{} {} M{} {} L{} {}",
            num(x - 6.0),
            num(y - 6.0),
            num(x + 6.0),
            num(y + 6.0),
            num(x - 6.0),
            num(y + 6.0),
            num(x + 6.0),
            num(y - 6.0)
        );
        let _ = writeln!(
            self.body,
            r#"<path d="{d}" stroke="{RED}" stroke-width="3" fill="none"/>"#
        );
    }

    /// A text on a white halo, so it stays readable where it crosses a line.
    pub fn text(&mut self, x: f64, y: f64, text: &str, anchor: Anchor, font: Font) {
        let anchor = match anchor {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        };
        let weight = if font.bold {
            r#" font-weight="bold""#
        } else {
            ""
        };
        let style = if font.italic {
            r#" font-style="italic""#
        } else {
            ""
        };
        let _ = writeln!(
            self.body,
            r#"<text x="{}" y="{}" font-size="{}" text-anchor="{anchor}" fill="{}"{weight}{style} stroke="white" stroke-width="4" stroke-linejoin="round" paint-order="stroke">{}</text>"#,
            num(x),
            num(y),
            num(font.size),
            font.fill,
            escape(text)
        );
    }

    /// The whole document: header, accessible title and description, arrowheads, a white
    /// background (the book has dark themes), then the elements.
    pub fn finish(self, title: &str, desc: &str, width: f64, height: f64) -> String {
        let (w, h) = (num(width.ceil()), num(height.ceil()));
        let mut out = String::new();
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-labelledby="title desc" font-family="sans-serif">"#
        );
        let _ = writeln!(out, r#"<title id="title">{}</title>"#, escape(title));
        let _ = writeln!(out, r#"<desc id="desc">{}</desc>"#, escape(desc));
        out.push_str("<defs>\n");
        for (id, colour) in [("arrow", INK), ("arrow-red", RED)] {
            let _ = writeln!(
                out,
                r#"<marker id="{id}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="{colour}"/></marker>"#
            );
        }
        out.push_str("</defs>\n");
        let _ = writeln!(
            out,
            r#"<rect x="0" y="0" width="{w}" height="{h}" fill="white"/>"#
        );
        out.push_str(&self.body);
        out.push_str("</svg>\n");
        out
    }
}
