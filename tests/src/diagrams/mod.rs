//! The book's diagrams: a small line-based source format, rendered to self-contained SVG.
//!
//! Each picture in `docs/src/diagrams/` has a source `<name>.diag` and, next to it, the
//! committed `<name>.svg` that `just diagrams` writes. A test renders every source again and
//! fails when a committed SVG differs, so a picture cannot drift from its source. The renderer
//! is plain Rust with fixed layout arithmetic: the same source gives the same bytes on every
//! machine, and no Graphviz or font is needed.
//!
//! # The format
//!
//! One directive per line: a word, then bare words (ids, numbers) and `"quoted text"` (with
//! `\"` and `\\` as escapes). Blank lines and lines starting with `#` are ignored. Every source
//! opens with three lines, then the directives of its kind:
//!
//! ```text
//! kind sequence                      # sequence | bars | tree | states | boxes
//! title "The lost reply"             # the SVG's <title>
//! desc "A client sends op-1 ..."     # the SVG's <desc>, read by screen readers
//! ```
//!
//! - `sequence` (lanes top to bottom in time): `panel "heading"` starts a new panel to the
//!   right; `lane ID "label"`; `msg FROM TO "label"`; `lost FROM TO "label"` (a message that
//!   never arrives); `act LANE "text"` (a step on one lane); `note LANE "text"` (an outcome,
//!   highlighted); `crash "point" "what it means"` (a crash point across the panel).
//! - `bars` (a timeline of intervals): `axis UNIT MAX TICK`; `row ID "label"`;
//!   `bar ROW FROM TO work|wait|window "text"`; `point ROW AT "text"`; `note "text"`.
//! - `tree` (a fan-out whose counts are computed): `root "label"`; `fan N "label"` (every node
//!   of the row above gets N children); `counts "column heading"`; `note "text"`.
//! - `states` (a state machine on one line): `state ID "label"` in order; `start ID`;
//!   `edge FROM TO "label"` (to the next state, to itself, or back to an earlier one).
//! - `boxes` (hosts and the links between them): `box ID COLUMN ROW solid|dashed "label"` (a
//!   box in a grid cell; dashed for one that only some runs have); `detail ID "text"` and
//!   `fault ID "text"` (a line inside the box, plain or red); `link FROM TO plain|faulty
//!   "label" ["below"]` (an arrow; a faulty one dashed red, with an optional red line under
//!   it); `note "text"`.

pub mod bars;
pub mod boxes;
pub mod sequence;
pub mod states;
pub mod svg;
pub mod tree;

use std::path::{Path, PathBuf};

/// Why a diagram source was refused; every case names the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A quoted string is not closed before the end of the line.
    #[error("line {line}: unterminated quoted text")]
    UnterminatedQuote {
        /// The line number, from 1.
        line: usize,
    },
    /// The first directive is not `kind ...`.
    #[error("line {line}: the first directive must be `kind sequence|bars|tree|states|boxes`")]
    MissingKind {
        /// The line number, from 1.
        line: usize,
    },
    /// `kind` names a kind this renderer does not draw.
    #[error("line {line}: unknown diagram kind `{kind}` (sequence, bars, tree, states or boxes)")]
    UnknownKind {
        /// The line number, from 1.
        line: usize,
        /// The word given.
        kind: String,
    },
    /// A directive this kind of diagram does not know.
    #[error("line {line}: unknown directive `{word}` in a {kind} diagram")]
    UnknownDirective {
        /// The line number, from 1.
        line: usize,
        /// The diagram kind.
        kind: &'static str,
        /// The directive given.
        word: String,
    },
    /// The arguments do not have the shape the directive needs.
    #[error("line {line}: expected `{usage}`")]
    Arguments {
        /// The line number, from 1.
        line: usize,
        /// How the directive is written.
        usage: &'static str,
    },
    /// A bare word where a number is needed.
    #[error("line {line}: `{text}` is not a number")]
    Number {
        /// The line number, from 1.
        line: usize,
        /// The word given.
        text: String,
    },
    /// An id used before it is declared.
    #[error("line {line}: `{id}` is not declared above")]
    UnknownId {
        /// The line number, from 1.
        line: usize,
        /// The id.
        id: String,
    },
    /// An id declared twice.
    #[error("line {line}: `{id}` is declared twice")]
    DuplicateId {
        /// The line number, from 1.
        line: usize,
        /// The id.
        id: String,
    },
    /// Well-formed, but the diagram cannot be drawn as asked.
    #[error("line {line}: {reason}")]
    Invalid {
        /// The line number, from 1.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

impl ParseError {
    /// The line the error points at.
    pub fn line(&self) -> usize {
        match self {
            Self::UnterminatedQuote { line }
            | Self::MissingKind { line }
            | Self::UnknownKind { line, .. }
            | Self::UnknownDirective { line, .. }
            | Self::Arguments { line, .. }
            | Self::Number { line, .. }
            | Self::UnknownId { line, .. }
            | Self::DuplicateId { line, .. }
            | Self::Invalid { line, .. } => *line,
        }
    }
}

/// One argument of a directive: a bare word or quoted text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Arg {
    Word(String),
    Text(String),
}

/// One directive with its line number, as the kind parsers see it.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub number: usize,
    pub directive: String,
    args: Vec<Arg>,
}

impl Line {
    /// Checks the arguments against `shape`: one `w` per bare word, one `t` per quoted text.
    pub fn shape(&self, shape: &str, usage: &'static str) -> Result<(), ParseError> {
        let fits = self.args.len() == shape.len()
            && self.args.iter().zip(shape.chars()).all(|(arg, want)| {
                matches!((arg, want), (Arg::Word(_), 'w') | (Arg::Text(_), 't'))
            });
        if fits {
            Ok(())
        } else {
            Err(ParseError::Arguments {
                line: self.number,
                usage,
            })
        }
    }

    /// Argument `i` as a string (after `shape` has checked it exists).
    pub fn arg(&self, i: usize) -> String {
        match &self.args[i] {
            Arg::Word(s) | Arg::Text(s) => s.clone(),
        }
    }

    /// Argument `i` as a finite number.
    pub fn number(&self, i: usize) -> Result<f64, ParseError> {
        let text = self.arg(i);
        match text.parse::<f64>() {
            Ok(n) if n.is_finite() => Ok(n),
            _ => Err(ParseError::Number {
                line: self.number,
                text,
            }),
        }
    }

    /// The error for a directive the kind does not know.
    pub fn unknown(&self, kind: &'static str) -> ParseError {
        ParseError::UnknownDirective {
            line: self.number,
            kind,
            word: self.directive.clone(),
        }
    }

    /// An `Invalid` error on this line.
    pub fn invalid(&self, reason: impl Into<String>) -> ParseError {
        ParseError::Invalid {
            line: self.number,
            reason: reason.into(),
        }
    }
}

/// Splits one line into words and quoted texts; `None` for a blank or comment line.
fn tokenize(number: usize, text: &str) -> Result<Option<Line>, ParseError> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Ok(None);
    }
    let mut args = Vec::new();
    let mut chars = trimmed.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' {
            chars.next();
            let mut s = String::new();
            loop {
                match chars.next() {
                    None => return Err(ParseError::UnterminatedQuote { line: number }),
                    Some('"') => break,
                    Some('\\') => match chars.next() {
                        Some(e @ ('"' | '\\')) => s.push(e),
                        _ => {
                            return Err(ParseError::Invalid {
                                line: number,
                                reason: "only \\\" and \\\\ are escapes".into(),
                            });
                        }
                    },
                    Some(other) => s.push(other),
                }
            }
            args.push(Arg::Text(s));
        } else if c == '#' {
            break;
        } else {
            let mut s = String::new();
            while let Some(&w) = chars.peek() {
                if w.is_whitespace() || w == '"' {
                    break;
                }
                s.push(w);
                chars.next();
            }
            args.push(Arg::Word(s));
        }
    }
    let directive = match args.remove(0) {
        Arg::Word(w) => w,
        Arg::Text(_) => {
            return Err(ParseError::Invalid {
                line: number,
                reason: "a line starts with a directive word, not quoted text".into(),
            });
        }
    };
    Ok(Some(Line {
        number,
        directive,
        args,
    }))
}

/// The body of a diagram, one variant per kind.
#[derive(Debug, Clone)]
pub enum Body {
    /// Lanes and messages in time order.
    Sequence(sequence::Sequence),
    /// Intervals on a time axis.
    Bars(bars::Bars),
    /// A fan-out tree.
    Tree(tree::Tree),
    /// A state machine.
    States(states::States),
    /// Boxes and the links between them.
    Boxes(boxes::Boxes),
}

/// A parsed diagram source.
#[derive(Debug, Clone)]
pub struct Diagram {
    /// The accessible title.
    pub title: String,
    /// The accessible description.
    pub desc: String,
    /// What to draw.
    pub body: Body,
}

/// Parses a diagram source.
pub fn parse(source: &str) -> Result<Diagram, ParseError> {
    let mut lines = Vec::new();
    for (i, text) in source.lines().enumerate() {
        if let Some(line) = tokenize(i + 1, text)? {
            lines.push(line);
        }
    }
    let last = source.lines().count().max(1);
    let mut iter = lines.into_iter();
    let first = iter.next().ok_or(ParseError::MissingKind { line: last })?;
    if first.directive != "kind" {
        return Err(ParseError::MissingKind { line: first.number });
    }
    first.shape("w", "kind sequence|bars|tree|states|boxes")?;
    let kind = first.arg(0);
    let (mut title, mut desc) = (None, None);
    let mut rest = Vec::new();
    for line in iter {
        match line.directive.as_str() {
            "title" => {
                line.shape("t", "title \"text\"")?;
                title = Some(line.arg(0));
            }
            "desc" => {
                line.shape("t", "desc \"text\"")?;
                desc = Some(line.arg(0));
            }
            _ => rest.push(line),
        }
    }
    let missing = |what: &str| ParseError::Invalid {
        line: last,
        reason: format!("the source has no `{what}` line"),
    };
    let title = title.ok_or_else(|| missing("title"))?;
    let desc = desc.ok_or_else(|| missing("desc"))?;
    let body = match kind.as_str() {
        "sequence" => Body::Sequence(sequence::Sequence::parse(&rest, last)?),
        "bars" => Body::Bars(bars::Bars::parse(&rest, last)?),
        "tree" => Body::Tree(tree::Tree::parse(&rest, last)?),
        "states" => Body::States(states::States::parse(&rest, last)?),
        "boxes" => Body::Boxes(boxes::Boxes::parse(&rest, last)?),
        _ => {
            return Err(ParseError::UnknownKind {
                line: first.number,
                kind,
            });
        }
    };
    Ok(Diagram { title, desc, body })
}

impl Diagram {
    /// The SVG document, byte for byte what `just diagrams` commits.
    pub fn render(&self) -> String {
        let mut svg = svg::Svg::default();
        let (width, height) = match &self.body {
            Body::Sequence(d) => d.draw(&mut svg),
            Body::Bars(d) => d.draw(&mut svg),
            Body::Tree(d) => d.draw(&mut svg),
            Body::States(d) => d.draw(&mut svg),
            Body::Boxes(d) => d.draw(&mut svg),
        };
        svg.finish(&self.title, &self.desc, width, height)
    }

    /// Every text the source asks to show, for checking that the picture carries it.
    pub fn labels(&self) -> Vec<String> {
        match &self.body {
            Body::Sequence(d) => d.labels(),
            Body::Bars(d) => d.labels(),
            Body::Tree(d) => d.labels(),
            Body::States(d) => d.labels(),
            Body::Boxes(d) => d.labels(),
        }
    }
}

/// Where the sources and the committed pictures live.
pub fn diagrams_dir() -> PathBuf {
    crate::workspace_root().join("docs/src/diagrams")
}

/// The sources in `dir`, sorted by name so every run visits them in the same order.
pub fn sources(dir: &Path) -> Result<Vec<PathBuf>, crate::Error> {
    let entries = std::fs::read_dir(dir).map_err(|source| crate::Error::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut found = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|source| crate::Error::Read {
                path: dir.to_path_buf(),
                source,
            })?
            .path();
        if path.extension().is_some_and(|e| e == "diag") {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}
