//! Boxes and links: hosts on a grid of columns and rows, arrows between them. A link marked
//! `faulty` is drawn dashed in red, for a path that the picture's world may lose or delay.

use super::svg::{Anchor, BOX, Font, GREY, INK, RED, Svg, text_width};
use super::{Line, ParseError};

const TITLE: f64 = 13.0;
const SMALL: f64 = 11.0;
const LINE_H: f64 = 15.0;
const PAD: f64 = 12.0;
const ROW_GAP: f64 = 22.0;
const MARGIN: f64 = 20.0;
/// Columns and rows a picture may use; a wider grid does not fit the book's page.
const MAX_COLUMNS: usize = 4;
const MAX_ROWS: usize = 6;

/// One box: where it sits, its heading, and its lines (`true` for a line drawn in red).
#[derive(Debug, Clone)]
struct Node {
    id: String,
    column: usize,
    row: usize,
    dashed: bool,
    label: String,
    lines: Vec<(String, bool)>,
}

/// One arrow between two boxes, with a label above it and, for a faulty link, one below.
#[derive(Debug, Clone)]
struct Link {
    from: usize,
    to: usize,
    faulty: bool,
    label: String,
    below: String,
}

/// A parsed picture of boxes and links.
#[derive(Debug, Clone)]
pub struct Boxes {
    nodes: Vec<Node>,
    links: Vec<Link>,
    notes: Vec<String>,
}

impl Boxes {
    pub(crate) fn parse(lines: &[Line], last: usize) -> Result<Self, ParseError> {
        let mut boxes = Self {
            nodes: Vec::new(),
            links: Vec::new(),
            notes: Vec::new(),
        };
        for line in lines {
            match line.directive.as_str() {
                "box" => boxes.node(line)?,
                "detail" | "fault" => {
                    line.shape("wt", "detail|fault ID \"text\"")?;
                    let at = boxes.find(line, 0)?;
                    let red = line.directive == "fault";
                    boxes.nodes[at].lines.push((line.arg(1), red));
                }
                "link" => boxes.link(line)?,
                "note" => {
                    line.shape("t", "note \"text\"")?;
                    boxes.notes.push(line.arg(0));
                }
                _ => return Err(line.unknown("boxes")),
            }
        }
        if boxes.nodes.is_empty() {
            return Err(ParseError::Invalid {
                line: last,
                reason: "a picture of boxes needs a `box` line".into(),
            });
        }
        Ok(boxes)
    }

    /// `box ID COLUMN ROW solid|dashed "label"`.
    fn node(&mut self, line: &Line) -> Result<(), ParseError> {
        const USAGE: &str = "box ID COLUMN ROW solid|dashed \"label\"";
        line.shape("wwwwt", USAGE)?;
        let id = line.arg(0);
        if self.nodes.iter().any(|n| n.id == id) {
            return Err(ParseError::DuplicateId {
                line: line.number,
                id,
            });
        }
        let (column, row) = (cell(line, 1, MAX_COLUMNS)?, cell(line, 2, MAX_ROWS)?);
        if self
            .nodes
            .iter()
            .any(|n| n.column == column && n.row == row)
        {
            return Err(line.invalid(format!("column {column}, row {row} already has a box")));
        }
        let dashed = match line.arg(3).as_str() {
            "solid" => false,
            "dashed" => true,
            _ => return Err(line.invalid(format!("expected `{USAGE}`"))),
        };
        self.nodes.push(Node {
            id,
            column,
            row,
            dashed,
            label: line.arg(4),
            lines: Vec::new(),
        });
        Ok(())
    }

    /// `link FROM TO plain|faulty "label" ["below"]`.
    fn link(&mut self, line: &Line) -> Result<(), ParseError> {
        const USAGE: &str = "link FROM TO plain|faulty \"label\" [\"below\"]";
        line.shape("wwwt", USAGE)
            .or_else(|_| line.shape("wwwtt", USAGE))?;
        let (from, to) = (self.find(line, 0)?, self.find(line, 1)?);
        if from == to {
            return Err(line.invalid("a link joins two different boxes"));
        }
        let faulty = match line.arg(2).as_str() {
            "plain" => false,
            "faulty" => true,
            _ => return Err(line.invalid(format!("expected `{USAGE}`"))),
        };
        let below = if line.args.len() == 5 {
            line.arg(4)
        } else {
            String::new()
        };
        self.links.push(Link {
            from,
            to,
            faulty,
            label: line.arg(3),
            below,
        });
        Ok(())
    }

    fn find(&self, line: &Line, i: usize) -> Result<usize, ParseError> {
        let id = line.arg(i);
        self.nodes
            .iter()
            .position(|n| n.id == id)
            .ok_or(ParseError::UnknownId {
                line: line.number,
                id,
            })
    }

    fn node_width(node: &Node) -> f64 {
        node.lines
            .iter()
            .map(|(text, _)| text_width(text, SMALL))
            .fold(text_width(&node.label, TITLE), f64::max)
            + 2.0 * PAD
    }

    fn node_height(node: &Node) -> f64 {
        LINE_H * (1 + node.lines.len()) as f64 + PAD
    }

    /// The left edge and width of each column, and the picture's right edge.
    fn columns(&self) -> (Vec<(f64, f64)>, f64) {
        let count = self.nodes.iter().map(|n| n.column).max().unwrap_or(0) + 1;
        let mut widths = vec![0.0_f64; count];
        for node in &self.nodes {
            widths[node.column] = widths[node.column].max(Self::node_width(node));
        }
        // The gap after column c fits the widest label of a link across it.
        let mut gaps = vec![70.0_f64; count];
        for link in &self.links {
            let (a, b) = (self.nodes[link.from].column, self.nodes[link.to].column);
            if a.abs_diff(b) == 1 {
                let need = text_width(&link.label, SMALL).max(text_width(&link.below, SMALL));
                gaps[a.min(b)] = gaps[a.min(b)].max(need + 30.0);
            }
        }
        let mut left = MARGIN;
        let mut out = Vec::new();
        for c in 0..count {
            out.push((left, widths[c]));
            left += widths[c] + gaps[c];
        }
        (out, left - gaps[count - 1] + MARGIN)
    }

    /// The top edge and height of each row.
    fn rows(&self) -> Vec<(f64, f64)> {
        let count = self.nodes.iter().map(|n| n.row).max().unwrap_or(0) + 1;
        let mut heights = vec![0.0_f64; count];
        for node in &self.nodes {
            heights[node.row] = heights[node.row].max(Self::node_height(node));
        }
        let mut top = MARGIN;
        heights
            .into_iter()
            .map(|h| {
                let row = (top, h);
                top += h + ROW_GAP;
                row
            })
            .collect()
    }

    pub(crate) fn draw(&self, svg: &mut Svg) -> (f64, f64) {
        let (columns, right) = self.columns();
        let rows = self.rows();
        // Each box's rectangle, centred in its cell.
        let rects: Vec<(f64, f64, f64, f64)> = self
            .nodes
            .iter()
            .map(|n| {
                let ((left, cw), (top, rh)) = (columns[n.column], rows[n.row]);
                let (w, h) = (Self::node_width(n), Self::node_height(n));
                (left + (cw - w) / 2.0, top + (rh - h) / 2.0, w, h)
            })
            .collect();
        for link in &self.links {
            draw_link(svg, link, rects[link.from], rects[link.to]);
        }
        for (node, &(x, y, w, h)) in self.nodes.iter().zip(&rects) {
            let stroke = if node.dashed { GREY } else { INK };
            svg.rect(x, y, w, h, BOX, stroke, node.dashed);
            let bold = Font {
                bold: true,
                ..Font::plain(TITLE)
            };
            svg.text(
                x + w / 2.0,
                y + PAD + 6.0,
                &node.label,
                Anchor::Middle,
                bold,
            );
            for (k, (text, red)) in node.lines.iter().enumerate() {
                let font = Font {
                    fill: if *red { RED } else { INK },
                    ..Font::plain(SMALL)
                };
                let at = y + PAD + 6.0 + LINE_H * (k + 1) as f64;
                svg.text(x + w / 2.0, at, text, Anchor::Middle, font);
            }
        }
        let (top, height) = rows.last().copied().unwrap_or((MARGIN, 0.0));
        let mut bottom = top + height + 8.0;
        let mut wide = right;
        for note in &self.notes {
            bottom += LINE_H + 2.0;
            let font = Font {
                italic: true,
                ..Font::plain(12.0)
            };
            svg.text(MARGIN, bottom, note, Anchor::Start, font);
            wide = wide.max(MARGIN * 2.0 + text_width(note, 12.0));
        }
        (wide, bottom + 12.0)
    }

    pub(crate) fn labels(&self) -> Vec<String> {
        let mut out = Vec::new();
        for node in &self.nodes {
            out.push(node.label.clone());
            out.extend(node.lines.iter().map(|(text, _)| text.clone()));
        }
        for link in &self.links {
            out.extend([link.label.clone(), link.below.clone()]);
        }
        out.extend(self.notes.iter().cloned());
        out.retain(|text| !text.is_empty());
        out
    }
}

/// Argument `i` as a grid position below `limit`.
fn cell(line: &Line, i: usize, limit: usize) -> Result<usize, ParseError> {
    let text = line.arg(i);
    text.parse::<usize>()
        .ok()
        .filter(|n| *n < limit)
        .ok_or(ParseError::Number {
            line: line.number,
            text,
        })
}

/// An arrow from the side of one rectangle that faces the other, with its labels.
fn draw_link(svg: &mut Svg, link: &Link, from: (f64, f64, f64, f64), to: (f64, f64, f64, f64)) {
    let centre = |(x, y, w, h): (f64, f64, f64, f64)| (x + w / 2.0, y + h / 2.0);
    let ((fx, fy), (tx, ty)) = (centre(from), centre(to));
    let (x1, y1, x2, y2) = if (fx - tx).abs() < 1.0 {
        // Same column: from the bottom of the upper box to the top of the lower one.
        let (down, up) = (fy < ty, from.3 / 2.0);
        let sign = if down { 1.0 } else { -1.0 };
        (fx, fy + sign * up, tx, ty - sign * to.3 / 2.0)
    } else {
        // Arrows that converge on one side land apart: each ends towards the box it comes from.
        let sign = if fx < tx { 1.0 } else { -1.0 };
        let lean = |dy: f64, h: f64| dy.clamp(-(h / 2.0 - 10.0), h / 2.0 - 10.0) / 2.0;
        (
            fx + sign * from.2 / 2.0,
            fy + lean(ty - fy, from.3),
            tx - sign * to.2 / 2.0,
            ty + lean(fy - ty, to.3),
        )
    };
    let colour = if link.faulty { RED } else { INK };
    svg.line(x1, y1, x2, y2, colour, link.faulty, true);
    let (mx, my) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
    if !link.label.is_empty() {
        svg.text(
            mx,
            my - 6.0,
            &link.label,
            Anchor::Middle,
            Font::plain(SMALL),
        );
    }
    if !link.below.is_empty() {
        let font = Font {
            fill: RED,
            ..Font::plain(SMALL)
        };
        svg.text(mx, my + 15.0, &link.below, Anchor::Middle, font);
    }
}
