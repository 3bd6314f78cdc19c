//! Fan-out trees: each row multiplies the one above. The counts are computed, never written in
//! the source, so the picture cannot state a product that its rows do not make.

use super::svg::{Anchor, BOX, Font, GREY, INK, RED, Svg, text_width};
use super::{Line, ParseError};

const PLOT: f64 = 500.0;
const ROW: f64 = 64.0;
const MAX_LEAVES: u64 = 100;

/// A parsed fan-out tree.
#[derive(Debug, Clone)]
pub struct Tree {
    root: String,
    fans: Vec<(u64, String)>,
    heading: String,
    notes: Vec<String>,
}

impl Tree {
    pub(crate) fn parse(lines: &[Line], last: usize) -> Result<Self, ParseError> {
        let mut tree = Self {
            root: String::new(),
            fans: Vec::new(),
            heading: String::new(),
            notes: Vec::new(),
        };
        let mut leaves = 1_u64;
        for line in lines {
            match line.directive.as_str() {
                "root" => {
                    line.shape("t", "root \"label\"")?;
                    tree.root = line.arg(0);
                }
                "fan" => {
                    line.shape("wt", "fan N \"label\"")?;
                    let n = line.arg(0).parse::<u64>().ok().filter(|n| *n >= 1).ok_or(
                        ParseError::Number {
                            line: line.number,
                            text: line.arg(0),
                        },
                    )?;
                    leaves = leaves.saturating_mul(n);
                    if leaves > MAX_LEAVES {
                        return Err(line.invalid(format!(
                            "{leaves} nodes in the bottom row; at most {MAX_LEAVES} fit"
                        )));
                    }
                    tree.fans.push((n, line.arg(1)));
                }
                "counts" => {
                    line.shape("t", "counts \"column heading\"")?;
                    tree.heading = line.arg(0);
                }
                "note" => {
                    line.shape("t", "note \"text\"")?;
                    tree.notes.push(line.arg(0));
                }
                _ => return Err(line.unknown("tree")),
            }
        }
        if tree.root.is_empty() || tree.fans.is_empty() || tree.heading.is_empty() {
            return Err(ParseError::Invalid {
                line: last,
                reason: "a tree needs `root`, `counts` and at least one `fan`".into(),
            });
        }
        Ok(tree)
    }

    /// How many nodes each row holds, top to bottom.
    pub fn counts(&self) -> Vec<u64> {
        let mut counts = vec![1];
        for (n, _) in &self.fans {
            counts.push(counts[counts.len() - 1] * n);
        }
        counts
    }

    /// The right-hand column: `1`, `3`, `3 × 3 = 9`, ...
    fn count_text(&self, row: usize) -> String {
        let counts = self.counts();
        if row <= 1 {
            return counts[row].to_string();
        }
        let factors: Vec<String> = self.fans[..row]
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        format!("{} = {}", factors.join(" × "), counts[row])
    }

    pub(crate) fn draw(&self, svg: &mut Svg) -> (f64, f64) {
        let labels: Vec<&String> = std::iter::once(&self.root)
            .chain(self.fans.iter().map(|(_, l)| l))
            .collect();
        let label_w = labels
            .iter()
            .map(|l| text_width(l, 13.0))
            .fold(0.0, f64::max);
        let x0 = label_w + 30.0;
        let counts = self.counts();
        let leaves = counts[counts.len() - 1];
        let slot = PLOT / leaves as f64;
        let r = (slot / 2.0 - 2.0).clamp(3.0, 9.0);
        let top = 44.0;
        // Node x positions, bottom row first: leaves evenly spaced, parents over their children.
        let mut rows: Vec<Vec<f64>> =
            vec![(0..leaves).map(|i| x0 + (i as f64 + 0.5) * slot).collect()];
        for (n, _) in self.fans.iter().rev() {
            let below = &rows[rows.len() - 1];
            let above = below
                .chunks(*n as usize)
                .map(|c| c.iter().sum::<f64>() / c.len() as f64)
                .collect();
            rows.push(above);
        }
        rows.reverse();
        let y = |row: usize| top + row as f64 * ROW;
        for (row, (n, _)) in self.fans.iter().enumerate() {
            for (i, child) in rows[row + 1].iter().enumerate() {
                let parent = rows[row][i / *n as usize];
                svg.line(
                    parent,
                    y(row) + r,
                    *child,
                    y(row + 1) - r,
                    GREY,
                    false,
                    false,
                );
            }
        }
        let count_x = x0 + PLOT + 30.0;
        let heading = Font {
            bold: true,
            ..Font::plain(13.0)
        };
        svg.text(count_x, 20.0, &self.heading, Anchor::Start, heading);
        let mut right = count_x + text_width(&self.heading, 13.0);
        let last = rows.len() - 1;
        for (row, xs) in rows.iter().enumerate() {
            let fill = if row == last { RED } else { BOX };
            for x in xs {
                svg.circle(*x, y(row), r, fill);
            }
            svg.text(
                x0 - 16.0,
                y(row) + 4.5,
                labels[row],
                Anchor::End,
                Font::plain(13.0),
            );
            let text = self.count_text(row);
            let font = Font {
                bold: row == last,
                fill: if row == last { RED } else { INK },
                ..Font::plain(13.0)
            };
            svg.text(count_x, y(row) + 4.5, &text, Anchor::Start, font);
            right = right.max(count_x + text_width(&text, 13.0));
        }
        let mut bottom = y(last) + 14.0;
        for note in &self.notes {
            bottom += 22.0;
            let font = Font {
                italic: true,
                ..Font::plain(12.0)
            };
            svg.text(10.0, bottom, note, Anchor::Start, font);
            right = right.max(text_width(note, 12.0) + 10.0);
        }
        (right + 16.0, bottom + 12.0)
    }

    pub(crate) fn labels(&self) -> Vec<String> {
        let mut out = vec![self.root.clone(), self.heading.clone()];
        out.extend(self.fans.iter().map(|(_, l)| l.clone()));
        out.extend(self.notes.iter().cloned());
        let last = self.fans.len();
        out.push(self.count_text(last));
        out
    }
}
