//! State machines on one line: states left to right, forward edges between neighbours, loops
//! above a state, and edges back to an earlier state as arcs underneath (wider arcs deeper, so
//! they never cross).

use super::svg::{Anchor, BOX, Font, INK, RED, Svg, num, text_width};
use super::{Line, ParseError};

const SIZE: f64 = 12.0;
const BOX_H: f64 = 36.0;

/// A parsed state machine.
#[derive(Debug, Clone)]
pub struct States {
    states: Vec<(String, String)>,
    start: usize,
    edges: Vec<(usize, usize, String)>,
}

impl States {
    pub(crate) fn parse(lines: &[Line], last: usize) -> Result<Self, ParseError> {
        let mut states: Vec<(String, String)> = Vec::new();
        let mut start = None;
        let mut edges = Vec::new();
        let find = |states: &[(String, String)], line: &Line, i: usize| {
            let id = line.arg(i);
            states
                .iter()
                .position(|(s, _)| *s == id)
                .ok_or(ParseError::UnknownId {
                    line: line.number,
                    id,
                })
        };
        for line in lines {
            match line.directive.as_str() {
                "state" => {
                    line.shape("wt", "state ID \"label\"")?;
                    let id = line.arg(0);
                    if states.iter().any(|(s, _)| *s == id) {
                        return Err(ParseError::DuplicateId {
                            line: line.number,
                            id,
                        });
                    }
                    states.push((id, line.arg(1)));
                }
                "start" => {
                    line.shape("w", "start ID")?;
                    if find(&states, line, 0)? != 0 {
                        return Err(line.invalid("the start state is the first one declared"));
                    }
                    start = Some(0);
                }
                "edge" => {
                    line.shape("wwt", "edge FROM TO \"label\"")?;
                    let (from, to) = (find(&states, line, 0)?, find(&states, line, 1)?);
                    if to > from + 1 {
                        return Err(line.invalid(
                            "a forward edge goes to the next state; declare the states in order",
                        ));
                    }
                    edges.push((from, to, line.arg(2)));
                }
                _ => return Err(line.unknown("states")),
            }
        }
        let start = start.ok_or(ParseError::Invalid {
            line: last,
            reason: "a state machine needs a `start` line".into(),
        })?;
        Ok(Self {
            states,
            start,
            edges,
        })
    }

    fn box_width(&self, i: usize) -> f64 {
        text_width(&self.states[i].1, 13.0) + 28.0
    }

    pub(crate) fn draw(&self, svg: &mut Svg) -> (f64, f64) {
        let n = self.states.len();
        // Room each state needs above it for its loop label.
        let mut loop_half = vec![0.0_f64; n];
        for (from, to, label) in &self.edges {
            if from == to {
                loop_half[*from] = loop_half[*from].max(text_width(label, SIZE) / 2.0);
            }
        }
        let mut gaps: Vec<f64> = (1..n)
            .map(|k| {
                let side = |i: usize| (loop_half[i] - self.box_width(i) / 2.0).max(0.0);
                (side(k - 1) + side(k) + 24.0).max(70.0)
            })
            .collect();
        for (from, to, label) in &self.edges {
            if *to == from + 1 {
                gaps[*from] = gaps[*from].max(text_width(label, SIZE) + 24.0);
            }
        }
        let mut left = 56.0 + (loop_half[0] - self.box_width(0) / 2.0).max(0.0);
        let mut centres = Vec::new();
        for i in 0..n {
            let w = self.box_width(i);
            centres.push(left + w / 2.0);
            left += w + gaps.get(i).copied().unwrap_or(0.0);
        }
        let has_loop = loop_half.iter().any(|h| *h > 0.0);
        let top = if has_loop { 70.0 } else { 20.0 };
        let mid = top + BOX_H / 2.0;
        let mut right = left;
        // Back edges: wider spans first get the deepest arcs.
        let mut back: Vec<&(usize, usize, String)> =
            self.edges.iter().filter(|(f, t, _)| t < f).collect();
        back.sort_by_key(|(f, t, _)| f - t);
        let mut bottom = top + BOX_H;
        for (k, (from, to, label)) in back.iter().enumerate() {
            let depth = 34.0 + 44.0 * k as f64;
            // Deeper arcs land further left, so each one encloses the shallower ones.
            let land = centres[*to] + 8.0 - 18.0 * k as f64;
            let (x1, x2, yb) = (centres[*from] - 10.0, land, top + BOX_H);
            let c = yb + depth / 0.75;
            let d = format!(
                "M{} {} C{} {} {} {} {} {}",
                num(x1),
                num(yb),
                num(x1),
                num(c),
                num(x2),
                num(c),
                num(x2),
                num(yb)
            );
            svg.path(&d, RED, false, true);
            let font = Font {
                fill: RED,
                ..Font::plain(SIZE)
            };
            let lx = (x1 + x2) / 2.0;
            svg.text(lx, yb + depth + 16.0, label, Anchor::Middle, font);
            right = right.max(lx + text_width(label, SIZE) / 2.0);
            bottom = bottom.max(yb + depth + 24.0);
        }
        for (from, to, label) in &self.edges {
            let (cx, w) = (centres[*from], self.box_width(*from));
            if to == from {
                let (x1, x2) = (cx - w / 4.0, cx + w / 4.0);
                let d = format!(
                    "M{} {} C{} {} {} {} {} {}",
                    num(x1),
                    num(top),
                    num(x1 - 10.0),
                    num(top - 44.0),
                    num(x2 + 10.0),
                    num(top - 44.0),
                    num(x2),
                    num(top)
                );
                svg.path(&d, INK, false, true);
                svg.text(cx, top - 40.0, label, Anchor::Middle, Font::plain(SIZE));
            } else if *to == from + 1 {
                let (x1, x2) = (cx + w / 2.0, centres[*to] - self.box_width(*to) / 2.0);
                svg.line(x1, mid, x2, mid, INK, false, true);
                svg.text(
                    (x1 + x2) / 2.0,
                    mid - 7.0,
                    label,
                    Anchor::Middle,
                    Font::plain(SIZE),
                );
            }
        }
        let first = centres[self.start] - self.box_width(self.start) / 2.0;
        svg.circle(first - 36.0, mid, 6.0, INK);
        svg.line(first - 30.0, mid, first, mid, INK, false, true);
        for (i, (_, label)) in self.states.iter().enumerate() {
            let w = self.box_width(i);
            svg.rect(centres[i] - w / 2.0, top, w, BOX_H, BOX, INK, false);
            let font = Font {
                bold: true,
                ..Font::plain(13.0)
            };
            svg.text(centres[i], mid + 4.5, label, Anchor::Middle, font);
        }
        (right + 20.0, bottom + 8.0)
    }

    pub(crate) fn labels(&self) -> Vec<String> {
        let mut out: Vec<String> = self.states.iter().map(|(_, l)| l.clone()).collect();
        out.extend(self.edges.iter().map(|(_, _, l)| l.clone()));
        out
    }
}
