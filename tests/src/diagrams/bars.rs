//! Bar timelines: one row per actor, intervals and instants on a shared axis.

use super::svg::{Anchor, BOX, Font, INK, NOTE, Svg, num, text_width};
use super::{Line, ParseError};

const SIZE: f64 = 12.0;
const PLOT: f64 = 440.0;
const ROW: f64 = 36.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Work,
    Wait,
    Window,
}

#[derive(Debug, Clone)]
enum Item {
    Bar {
        row: usize,
        from: f64,
        to: f64,
        style: Style,
        text: String,
    },
    Point {
        row: usize,
        at: f64,
        text: String,
    },
}

/// A parsed bar timeline.
#[derive(Debug, Clone)]
pub struct Bars {
    unit: String,
    max: f64,
    tick: f64,
    rows: Vec<(String, String)>,
    items: Vec<Item>,
    notes: Vec<String>,
}

impl Bars {
    pub(crate) fn parse(lines: &[Line], last: usize) -> Result<Self, ParseError> {
        let mut bars = Self {
            unit: String::new(),
            max: 0.0,
            tick: 0.0,
            rows: Vec::new(),
            items: Vec::new(),
            notes: Vec::new(),
        };
        for line in lines {
            match line.directive.as_str() {
                "axis" => {
                    line.shape("www", "axis UNIT MAX TICK")?;
                    bars.unit = line.arg(0);
                    bars.max = line.number(1)?;
                    bars.tick = line.number(2)?;
                    if bars.max <= 0.0 || bars.tick <= 0.0 || bars.max / bars.tick > 20.0 {
                        return Err(line.invalid("MAX and TICK must be positive, at most 20 ticks"));
                    }
                }
                "row" => {
                    line.shape("wt", "row ID \"label\"")?;
                    let id = line.arg(0);
                    if bars.rows.iter().any(|(row, _)| *row == id) {
                        return Err(ParseError::DuplicateId {
                            line: line.number,
                            id,
                        });
                    }
                    bars.rows.push((id, line.arg(1)));
                }
                "bar" => {
                    line.shape("wwwwt", "bar ROW FROM TO work|wait|window \"text\"")?;
                    let (from, to) = (line.number(1)?, line.number(2)?);
                    let style = match line.arg(3).as_str() {
                        "work" => Style::Work,
                        "wait" => Style::Wait,
                        "window" => Style::Window,
                        _ => return Err(line.invalid("the style is work, wait or window")),
                    };
                    bars.check_range(line, &[from, to])?;
                    if from >= to {
                        return Err(line.invalid("a bar ends after it starts"));
                    }
                    bars.items.push(Item::Bar {
                        row: bars.row(line)?,
                        from,
                        to,
                        style,
                        text: line.arg(4),
                    });
                }
                "point" => {
                    line.shape("wwt", "point ROW AT \"text\"")?;
                    let at = line.number(1)?;
                    bars.check_range(line, &[at])?;
                    bars.items.push(Item::Point {
                        row: bars.row(line)?,
                        at,
                        text: line.arg(2),
                    });
                }
                "note" => {
                    line.shape("t", "note \"text\"")?;
                    bars.notes.push(line.arg(0));
                }
                _ => return Err(line.unknown("bars")),
            }
        }
        if bars.max <= 0.0 || bars.rows.is_empty() {
            return Err(ParseError::Invalid {
                line: last,
                reason: "a bars diagram needs an `axis` line and at least one row".into(),
            });
        }
        Ok(bars)
    }

    fn check_range(&self, line: &Line, values: &[f64]) -> Result<(), ParseError> {
        if self.max <= 0.0 {
            return Err(line.invalid("`axis` must come before bars and points"));
        }
        if values.iter().any(|v| *v < 0.0 || *v > self.max) {
            return Err(line.invalid(format!("outside the axis 0..{}", num(self.max))));
        }
        Ok(())
    }

    fn row(&self, line: &Line) -> Result<usize, ParseError> {
        let id = line.arg(0);
        self.rows
            .iter()
            .position(|(row, _)| *row == id)
            .ok_or(ParseError::UnknownId {
                line: line.number,
                id,
            })
    }

    /// The window sizes as the source gives them: (row label, end of each `window` bar).
    pub fn windows(&self) -> Vec<(String, f64)> {
        self.items
            .iter()
            .filter_map(|item| match item {
                Item::Bar {
                    row,
                    to,
                    style: Style::Window,
                    ..
                } => Some((self.rows[*row].1.clone(), *to)),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn draw(&self, svg: &mut Svg) -> (f64, f64) {
        let label_w = self
            .rows
            .iter()
            .map(|(_, label)| text_width(label, 13.0))
            .fold(0.0, f64::max);
        let x0 = label_w + 24.0;
        let scale = PLOT / self.max;
        let x = |v: f64| x0 + v * scale;
        let mut right = x0 + PLOT + 20.0;
        let top = 12.0;
        let axis_y = top + self.rows.len() as f64 * ROW + 6.0;
        for (i, (_, label)) in self.rows.iter().enumerate() {
            let mid = top + i as f64 * ROW + ROW / 2.0;
            svg.text(x0 - 12.0, mid + 4.5, label, Anchor::End, Font::plain(13.0));
        }
        // Vertical guides at every tick, under the bars.
        let ticks = (self.max / self.tick).floor() as usize;
        for k in 0..=ticks {
            let v = k as f64 * self.tick;
            svg.line(x(v), top, x(v), axis_y + 5.0, "#d6d6d6", false, false);
        }
        for item in &self.items {
            match item {
                Item::Bar {
                    row,
                    from,
                    to,
                    style,
                    text,
                } => {
                    let y = top + *row as f64 * ROW + 8.0;
                    let (fill, dash) = match style {
                        Style::Work => (BOX, false),
                        Style::Wait => ("#f2f2f2", true),
                        Style::Window => (NOTE, false),
                    };
                    let (a, b) = (x(*from), x(*to));
                    svg.rect(a, y, b - a, ROW - 16.0, fill, INK, dash);
                    let need = text_width(text, SIZE) + 12.0;
                    if need <= b - a {
                        svg.text(
                            (a + b) / 2.0,
                            y + 14.5,
                            text,
                            Anchor::Middle,
                            Font::plain(SIZE),
                        );
                    } else {
                        svg.text(b + 6.0, y + 14.5, text, Anchor::Start, Font::plain(SIZE));
                        right = right.max(b + need + 6.0);
                    }
                }
                Item::Point { row, at, text } => {
                    let mid = top + *row as f64 * ROW + ROW / 2.0;
                    svg.circle(x(*at), mid, 5.0, INK);
                    svg.text(
                        x(*at) + 10.0,
                        mid + 4.5,
                        text,
                        Anchor::Start,
                        Font::plain(SIZE),
                    );
                    right = right.max(x(*at) + 10.0 + text_width(text, SIZE) + 10.0);
                }
            }
        }
        svg.line(x0, axis_y, x0 + PLOT, axis_y, INK, false, false);
        for k in 0..=ticks {
            let v = k as f64 * self.tick;
            let label = format!("{} {}", num(v), self.unit);
            svg.text(
                x(v),
                axis_y + 18.0,
                &label,
                Anchor::Middle,
                Font::plain(11.0),
            );
        }
        let mut y = axis_y + 24.0;
        for note in &self.notes {
            y += 20.0;
            let font = Font {
                italic: true,
                ..Font::plain(SIZE)
            };
            svg.text(10.0, y, note, Anchor::Start, font);
            right = right.max(text_width(note, SIZE) + 20.0);
        }
        (right, y + 12.0)
    }

    pub(crate) fn labels(&self) -> Vec<String> {
        let mut out: Vec<String> = self.rows.iter().map(|(_, l)| l.clone()).collect();
        for item in &self.items {
            match item {
                Item::Bar { text, .. } | Item::Point { text, .. } => out.push(text.clone()),
            }
        }
        out.extend(self.notes.iter().cloned());
        out
    }
}
