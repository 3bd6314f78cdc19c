//! Sequence diagrams: lanes side by side, time running down, one row per event.
//!
//! Several panels can stand side by side (a broken run beside the correct one). Lane gaps grow
//! with the longest label they must hold, so no label overlaps its neighbour.

use super::svg::{Anchor, BOX, Font, GREY, INK, NOTE, RED, Svg, text_width};
use super::{Line, ParseError};

const LABEL: f64 = 12.0;
const HEADER: f64 = 13.0;
const MIN_GAP: f64 = 100.0;
const PANEL_GAP: f64 = 24.0;

#[derive(Debug, Clone)]
enum Row {
    Msg {
        from: usize,
        to: usize,
        label: String,
        lost: bool,
    },
    Act {
        lane: usize,
        text: String,
        note: bool,
    },
    Crash {
        point: String,
        text: String,
    },
}

#[derive(Debug, Clone, Default)]
struct Panel {
    heading: Option<String>,
    lanes: Vec<(String, String)>,
    rows: Vec<Row>,
}

/// A parsed sequence diagram.
#[derive(Debug, Clone)]
pub struct Sequence {
    panels: Vec<Panel>,
}

impl Panel {
    fn lane(&self, line: &Line, i: usize) -> Result<usize, ParseError> {
        let id = line.arg(i);
        self.lanes
            .iter()
            .position(|(lane, _)| *lane == id)
            .ok_or(ParseError::UnknownId {
                line: line.number,
                id,
            })
    }

    /// Half the room each lane needs around its centre (its header or its widest box).
    fn halves(&self) -> Vec<f64> {
        let mut halves: Vec<f64> = self
            .lanes
            .iter()
            .map(|(_, label)| (text_width(label, HEADER) + 20.0) / 2.0)
            .collect();
        for row in &self.rows {
            if let Row::Act { lane, text, .. } = row {
                halves[*lane] = halves[*lane].max((text_width(text, LABEL) + 16.0) / 2.0);
            }
        }
        halves
    }

    /// Lane centres relative to the panel's left edge, and the panel's width.
    fn layout(&self) -> (Vec<f64>, f64) {
        let halves = self.halves();
        let n = self.lanes.len();
        let mut gaps: Vec<f64> = (1..n)
            .map(|k| (halves[k - 1] + halves[k] + 12.0).max(MIN_GAP))
            .collect();
        for row in &self.rows {
            if let Row::Msg {
                from, to, label, ..
            } = row
            {
                let (a, b) = ((*from).min(*to), (*from).max(*to));
                // A label may reach a little past its arrow (the lifelines stay readable under
                // its halo), so the gap is sized a tenth tighter than a box would be.
                let each = (text_width(label, LABEL) * 0.9 + 12.0) / (b - a) as f64;
                for gap in &mut gaps[a..b] {
                    *gap = gap.max(each);
                }
            }
        }
        let mut xs = vec![halves[0] + 10.0];
        for gap in &gaps {
            xs.push(xs[xs.len() - 1] + gap);
        }
        let mut width = xs[n - 1] + halves[n - 1] + 10.0;
        let column = self.crash_column();
        for row in &self.rows {
            if let Row::Crash { text, .. } = row {
                width = width.max(column + text_width(text, LABEL) + 20.0);
            }
        }
        if let Some(heading) = &self.heading {
            width = width.max(text_width(heading, HEADER) + 20.0);
        }
        // Centre the lanes when a crash line or the heading made the panel wider.
        let shift = (width - (xs[n - 1] + halves[n - 1] + 10.0)) / 2.0;
        (xs.iter().map(|x| x + shift).collect(), width)
    }

    /// Where the crash texts start, after the widest crash point name, so they line up.
    fn crash_column(&self) -> f64 {
        let widest = self
            .rows
            .iter()
            .filter_map(|row| match row {
                Row::Crash { point, .. } => Some(text_width(&format!("✕ {point}"), LABEL)),
                _ => None,
            })
            .fold(0.0, f64::max);
        widest + 20.0
    }

    /// Draws the panel with its left edge at `left`; returns its width and height.
    fn draw(&self, svg: &mut Svg, left: f64) -> (f64, f64) {
        let (xs, width) = self.layout();
        let xs: Vec<f64> = xs.iter().map(|x| x + left).collect();
        let mut y = 10.0;
        if let Some(heading) = &self.heading {
            let font = Font {
                bold: true,
                ..Font::plain(HEADER)
            };
            svg.text(left + width / 2.0, y + 14.0, heading, Anchor::Middle, font);
            y += 28.0;
        }
        let header_top = y;
        let bottom = header_top + 28.0 + 16.0 + self.rows.iter().map(height).sum::<f64>() + 8.0;
        for x in &xs {
            svg.line(*x, header_top + 28.0, *x, bottom, GREY, true, false);
        }
        for ((_, label), x) in self.lanes.iter().zip(&xs) {
            let w = text_width(label, HEADER) + 20.0;
            svg.rect(x - w / 2.0, header_top, w, 28.0, BOX, INK, false);
            let font = Font {
                bold: true,
                ..Font::plain(HEADER)
            };
            svg.text(*x, header_top + 19.0, label, Anchor::Middle, font);
        }
        y = header_top + 28.0 + 16.0;
        for row in &self.rows {
            draw_row(svg, row, &xs, (left, width, self.crash_column()), y);
            y += height(row);
        }
        (width, bottom + 10.0)
    }
}

fn height(row: &Row) -> f64 {
    match row {
        Row::Msg { .. } => 34.0,
        Row::Act { .. } => 34.0,
        Row::Crash { .. } => 30.0,
    }
}

/// Draws one row at `y`; `span` is the panel's left edge, width and crash text column.
fn draw_row(svg: &mut Svg, row: &Row, xs: &[f64], span: (f64, f64, f64), y: f64) {
    let (left, width, column) = span;
    match row {
        Row::Msg {
            from,
            to,
            label,
            lost,
        } => {
            let (x1, x2, line_y) = (xs[*from], xs[*to], y + 24.0);
            let colour = if *lost { RED } else { INK };
            let end = if *lost { x1 + (x2 - x1) * 0.6 } else { x2 };
            svg.line(x1, line_y, end, line_y, colour, false, !*lost);
            if *lost {
                svg.cross(end, line_y);
            }
            let font = Font {
                fill: colour,
                ..Font::plain(LABEL)
            };
            svg.text((x1 + x2) / 2.0, line_y - 6.0, label, Anchor::Middle, font);
        }
        Row::Act { lane, text, note } => {
            let w = text_width(text, LABEL) + 16.0;
            let fill = if *note { NOTE } else { "#ffffff" };
            svg.rect(xs[*lane] - w / 2.0, y + 5.0, w, 24.0, fill, INK, false);
            let font = Font {
                bold: *note,
                ..Font::plain(LABEL)
            };
            svg.text(xs[*lane], y + 21.5, text, Anchor::Middle, font);
        }
        Row::Crash { point, text } => {
            let line_y = y + 22.0;
            svg.line(
                left + 6.0,
                line_y,
                left + width - 6.0,
                line_y,
                RED,
                true,
                false,
            );
            let name = format!("✕ {point}");
            let font = Font {
                bold: true,
                fill: RED,
                ..Font::plain(LABEL)
            };
            svg.text(left + 12.0, line_y - 5.0, &name, Anchor::Start, font);
            let x = left + column;
            let font = Font {
                fill: RED,
                ..Font::plain(LABEL)
            };
            svg.text(x, line_y - 5.0, text, Anchor::Start, font);
        }
    }
}

impl Sequence {
    pub(crate) fn parse(lines: &[Line], last: usize) -> Result<Self, ParseError> {
        let mut panels = vec![Panel::default()];
        for line in lines {
            let panel = panels.last_mut().expect("there is always a panel");
            match line.directive.as_str() {
                "panel" => {
                    line.shape("t", "panel \"heading\"")?;
                    let fresh = Panel {
                        heading: Some(line.arg(0)),
                        ..Panel::default()
                    };
                    if panel.lanes.is_empty() && panel.heading.is_none() {
                        *panel = fresh;
                    } else {
                        panels.push(fresh);
                    }
                }
                "lane" => {
                    line.shape("wt", "lane ID \"label\"")?;
                    let id = line.arg(0);
                    if panel.lanes.iter().any(|(lane, _)| *lane == id) {
                        return Err(ParseError::DuplicateId {
                            line: line.number,
                            id,
                        });
                    }
                    panel.lanes.push((id, line.arg(1)));
                }
                "msg" | "lost" => {
                    line.shape("wwt", "msg|lost FROM TO \"label\"")?;
                    let (from, to) = (panel.lane(line, 0)?, panel.lane(line, 1)?);
                    if from == to {
                        return Err(line.invalid("a message joins two different lanes"));
                    }
                    panel.rows.push(Row::Msg {
                        from,
                        to,
                        label: line.arg(2),
                        lost: line.directive == "lost",
                    });
                }
                "act" | "note" => {
                    line.shape("wt", "act|note LANE \"text\"")?;
                    panel.rows.push(Row::Act {
                        lane: panel.lane(line, 0)?,
                        text: line.arg(1),
                        note: line.directive == "note",
                    });
                }
                "crash" => {
                    line.shape("tt", "crash \"point\" \"what it means\"")?;
                    panel.rows.push(Row::Crash {
                        point: line.arg(0),
                        text: line.arg(1),
                    });
                }
                _ => return Err(line.unknown("sequence")),
            }
        }
        if panels
            .iter()
            .any(|p| p.lanes.is_empty() || p.rows.is_empty())
        {
            return Err(ParseError::Invalid {
                line: last,
                reason: "every panel needs at least one lane and one row".into(),
            });
        }
        Ok(Self { panels })
    }

    pub(crate) fn draw(&self, svg: &mut Svg) -> (f64, f64) {
        let (mut left, mut height) = (0.0_f64, 0.0_f64);
        for (i, panel) in self.panels.iter().enumerate() {
            if i > 0 {
                left += PANEL_GAP;
            }
            let (w, h) = panel.draw(svg, left);
            left += w;
            height = height.max(h);
        }
        let mut edge = 0.0;
        for panel in &self.panels[..self.panels.len() - 1] {
            edge += panel.layout().1 + PANEL_GAP / 2.0;
            svg.line(edge, 8.0, edge, height - 8.0, GREY, false, false);
            edge += PANEL_GAP / 2.0;
        }
        (left, height)
    }

    pub(crate) fn labels(&self) -> Vec<String> {
        let mut out = Vec::new();
        for panel in &self.panels {
            out.extend(panel.heading.clone());
            out.extend(panel.lanes.iter().map(|(_, label)| label.clone()));
            for row in &panel.rows {
                match row {
                    Row::Msg { label, .. } => out.push(label.clone()),
                    Row::Act { text, .. } => out.push(text.clone()),
                    Row::Crash { point, text } => {
                        out.push(point.clone());
                        out.push(text.clone());
                    }
                }
            }
        }
        out
    }
}
