//! The book's conventions, checked on the Markdown: rhythm, listing captions, width, solutions.
//!
//! Each rule reads one page and returns its violations, each naming `file:line` and the rule, so
//! that an editor can fix the page without reading this code. `tests/tests/it/book_rules.rs`
//! runs them on `docs/src`. The rules:
//!
//! 1. **Rhythm.** A chapter (`docs/src/chNN-*.md`) has `## ` headings starting with `Objectives`,
//!    `Predict`, `Run`, `Change one input`, `Breaking it on purpose`, `Exercise` (or
//!    `Exercises`) and `Summary`, whose first occurrences come in that order. Chapter 2 is
//!    exempt from `Breaking it on purpose` only.
//! 2. **Listings.** In a chapter, every fenced block that is neither a session (a `console`
//!    block, a shell block, or one that shows `$ ` lines) nor fenced `text` is a listing, and has
//!    a caption line, then one blank line, right above it:
//!    `<span class="caption">Listing N-M: what it shows (`path`)</span>`. N is the chapter's
//!    number, M counts from 1 in order of appearance. The path is required when the listing
//!    includes a file, and is then that file's path from the workspace root.
//! 3. **Width.** A line written inside a fence is at most 80 characters, except a session's
//!    output lines (those neither starting with `$ ` nor continuing a command that ends in
//!    `\`). Included source is at most 100 characters, and the book's CSS wraps `pre > code`
//!    rather than scrolling it.
//! 4. **Solutions compiled.** A Rust listing inside `<details>` is only `{{#include …}}` lines,
//!    each naming an anchor that exists in a file under `crates/`, `labs/` or `tests/` that
//!    `cargo test` compiles: under a package's `src/`, or under its `tests/`, declared as a
//!    module by the test program's `main.rs`.
//! 5. **Paths.** Every file or folder a page names, in a code span or as a link, exists
//!    (`paths.rs` says which spans count).
//! 6. **Answers after their exercise.** No listing shows a piece's blanked body before the
//!    exercise that asks for it (`answers.rs`).
//! 7. **Glossary order.** The glossary lists its terms in the order the introduction and the
//!    chapters first link them, and each is linked (`glossary.rs`).

mod answers;
mod glossary;
mod paths;

pub use answers::{Answer, answers, early_answers};
pub use glossary::glossary_order;

use std::fmt;
use std::path::{Component, Path, PathBuf};

use crate::walkthrough::parse::{
    SHELL_LANGUAGES, closes, continues, language, opening_fence, shows_prompt,
};
use crate::{Error, read};

/// Hand-written lines inside a fence.
pub const WIDTH: usize = 80;
/// Included source, as rustfmt leaves it.
pub const INCLUDED_WIDTH: usize = 100;

/// The headings of a chapter, in order; each entry lists the words that may start it.
pub const RHYTHM: [&[&str]; 7] = [
    &["Objectives"],
    &["Predict"],
    &["Run"],
    &["Change one input"],
    &["Breaking it on purpose"],
    &["Exercise", "Exercises"],
    &["Summary"],
];

/// Which convention a violation breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    /// Convention 1: the chapter's headings.
    Rhythm,
    /// Convention 2: captions and their numbers.
    Listings,
    /// Convention 3: line width.
    Width,
    /// Convention 4: solutions are compiled.
    Solutions,
    /// Convention 5: the paths a page names exist.
    Paths,
    /// Convention 6: a piece's answer comes after its exercise.
    Answers,
    /// Convention 7: the glossary is in the order a reader meets its terms.
    Glossary,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::Rhythm => "convention 1 (rhythm)",
            Rule::Listings => "convention 2 (listings)",
            Rule::Width => "convention 3 (width)",
            Rule::Solutions => "convention 4 (solutions compiled)",
            Rule::Paths => "convention 5 (paths exist)",
            Rule::Answers => "convention 6 (answers after their exercise)",
            Rule::Glossary => "convention 7 (glossary order)",
        })
    }
}

/// One broken rule, where it is broken.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    /// The page, relative to the workspace root.
    pub file: PathBuf,
    /// The line, from 1.
    pub line: usize,
    /// The convention.
    pub rule: Rule,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.rule,
            self.message
        )
    }
}

/// One fenced block at the top level of a page.
#[derive(Clone, Debug)]
struct Block {
    /// The info string.
    info: String,
    /// The line of the opening fence.
    line: usize,
    /// The lines inside, with their numbers.
    lines: Vec<(usize, String)>,
    /// Whether it stands inside a `<details>` element.
    in_details: bool,
}

impl Block {
    fn language(&self) -> String {
        language(&self.info).to_ascii_lowercase()
    }

    /// A session shows commands: a console block, a shell block, or any block with `$ ` lines.
    fn is_session(&self) -> bool {
        let language = self.language();
        language == "console"
            || SHELL_LANGUAGES.contains(&language.as_str())
            || self.lines.iter().any(|(_, line)| shows_prompt(line))
    }

    fn is_listing(&self) -> bool {
        !self.is_session() && self.language() != "text"
    }

    /// The `{{#include …}}` targets of the block, with their lines.
    fn includes(&self) -> Vec<(usize, Include)> {
        self.lines
            .iter()
            .filter_map(|(n, line)| Include::parse(line).map(|include| (*n, include)))
            .collect()
    }
}

/// The fenced blocks of a page, in order (an unclosed block runs to the end of the page).
fn blocks(text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut details = 0usize;
    let mut open = None;
    for (at, line) in text.lines().enumerate() {
        let number = at + 1;
        match &mut open {
            None => {
                if let Some(fence) = opening_fence(line) {
                    open = Some((
                        fence,
                        Block {
                            info: fence.info.to_string(),
                            line: number,
                            lines: Vec::new(),
                            in_details: details > 0,
                        },
                    ));
                    continue;
                }
                let lower = line.trim().to_ascii_lowercase();
                if lower.starts_with("<details") {
                    details += 1;
                }
                if lower.contains("</details>") {
                    details = details.saturating_sub(1);
                }
            }
            Some((fence, block)) => {
                if closes(fence, line) {
                    found.push(open.take().expect("a block is open").1);
                } else {
                    block.lines.push((number, line.to_string()));
                }
            }
        }
    }
    if let Some((_, block)) = open {
        found.push(block);
    }
    found
}

/// An `{{#include path}}` (or `{{#rustdoc_include path}}`) line: the file and what part of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Include {
    /// The path as written, relative to `docs/src`.
    pub path: String,
    /// An anchor name, a line range, or nothing for the whole file.
    pub part: Part,
}

/// Which lines of an included file are shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// The whole file.
    Whole,
    /// The lines between `ANCHOR: name` and `ANCHOR_END: name`.
    Anchor(String),
    /// Lines from the first number to the second (both from 1, inclusive; open when absent).
    Lines(Option<usize>, Option<usize>),
}

impl Include {
    /// The include on `line`, if it holds one.
    pub fn parse(line: &str) -> Option<Include> {
        let line = line.trim();
        let inner = line.strip_prefix("{{#")?.strip_suffix("}}")?;
        let target = inner
            .strip_prefix("include ")
            .or_else(|| inner.strip_prefix("rustdoc_include "))?
            .trim();
        let (path, part) = match target.split_once(':') {
            None => (target, Part::Whole),
            Some((path, part)) => {
                let number = |s: &str| s.trim().parse::<usize>().ok();
                let part = match part.split_once(':') {
                    Some((from, to)) => Part::Lines(number(from), number(to)),
                    None if part.chars().all(|c| c.is_ascii_digit()) => {
                        Part::Lines(number(part), number(part))
                    }
                    None => Part::Anchor(part.to_string()),
                };
                (path, part)
            }
        };
        Some(Include {
            path: path.to_string(),
            part,
        })
    }

    /// The included file's path from the workspace root (`..` resolved against `docs/src`).
    pub fn resolved(&self) -> PathBuf {
        let mut resolved = PathBuf::new();
        for component in Path::new("docs/src").join(&self.path).components() {
            match component {
                Component::ParentDir => {
                    resolved.pop();
                }
                Component::CurDir => {}
                other => resolved.push(other),
            }
        }
        resolved
    }

    /// The lines mdBook shows, with their numbers in the file, or why it cannot show them.
    pub fn shown(&self, root: &Path) -> Result<Vec<(usize, String)>, String> {
        let path = self.resolved();
        let text = std::fs::read_to_string(root.join(&path))
            .map_err(|_| format!("includes `{}`, which does not exist", path.display()))?;
        let numbered = text
            .lines()
            .enumerate()
            .map(|(n, l)| (n + 1, l.to_string()));
        match &self.part {
            Part::Whole => Ok(numbered.filter(|(_, l)| !is_anchor(l)).collect()),
            Part::Lines(from, to) => Ok(numbered
                .filter(|(n, _)| from.is_none_or(|f| *n >= f) && to.is_none_or(|t| *n <= t))
                .collect()),
            Part::Anchor(name) => {
                let lines: Vec<(usize, String)> = numbered.collect();
                let start = lines
                    .iter()
                    .position(|(_, l)| anchor_name(l, "ANCHOR:") == Some(name.as_str()))
                    .ok_or_else(|| {
                        format!(
                            "includes anchor `{name}`, which `{}` does not have",
                            path.display()
                        )
                    })?;
                let end = lines[start..]
                    .iter()
                    .position(|(_, l)| anchor_name(l, "ANCHOR_END:") == Some(name.as_str()))
                    .map_or(lines.len(), |at| start + at);
                Ok(lines[start + 1..end]
                    .iter()
                    .filter(|(_, l)| !is_anchor(l))
                    .cloned()
                    .collect())
            }
        }
    }
}

/// The anchor a line opens or closes (`// ANCHOR: name`, `<!-- ANCHOR: name -->`), after
/// `marker`: as mdBook reads it, the word characters and hyphens that follow.
fn anchor_name<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    let at = line.find(marker)?;
    let rest = line[at + marker.len()..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(rest.len());
    (end > 0).then_some(&rest[..end])
}

fn is_anchor(line: &str) -> bool {
    anchor_name(line, "ANCHOR:").is_some() || anchor_name(line, "ANCHOR_END:").is_some()
}

/// The chapter number of `docs/src/chNN-*.md`, or `None` for a page that is not a chapter.
pub fn chapter_number(file: &Path) -> Option<u32> {
    let name = file.file_name()?.to_str()?;
    let digits = name.strip_prefix("ch")?.split_once('-')?.0;
    (name.ends_with(".md") && digits.len() == 2)
        .then(|| digits.parse().ok())
        .flatten()
}

/// The inline code spans of one line: text between two runs of as many backticks.
pub fn code_spans(line: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        let ticks = rest[open..].len() - rest[open..].trim_start_matches('`').len();
        let inside = &rest[open + ticks..];
        let delimiter = "`".repeat(ticks);
        // The closing run is exactly as long as the opening one.
        let close = inside
            .match_indices(&delimiter)
            .map(|(at, _)| at)
            .find(|&at| !inside[at + ticks..].starts_with('`') && !inside[..at].ends_with('`'));
        match close {
            Some(close) => {
                spans.push(&inside[..close]);
                rest = &inside[close + ticks..];
            }
            None => break,
        }
    }
    spans
}

/// The pages of the book: every `.md` under `docs/src`, at any depth, relative to `root`.
pub fn pages(root: &Path) -> Result<Vec<PathBuf>, Error> {
    crate::walkthrough::documents_in(root).map(|files| {
        files
            .into_iter()
            .filter(|file| file.starts_with("docs/src"))
            .collect()
    })
}

/// Every violation of conventions 1 to 5 on the page `file` (relative to `root`).
pub fn check_page(root: &Path, file: &Path) -> Result<Vec<Violation>, Error> {
    let text = read(root.join(file))?;
    let mut found = rhythm(file, &text);
    found.extend(listings(root, file, &text));
    found.extend(width(root, file, &text));
    found.extend(solutions(root, file, &text));
    found.extend(paths::paths(root, file, &text));
    found.sort();
    Ok(found)
}

fn violation(file: &Path, line: usize, rule: Rule, message: String) -> Violation {
    Violation {
        file: file.to_path_buf(),
        line,
        rule,
        message,
    }
}

/// Convention 1: the chapter's headings come in the rhythm's order. Other pages pass.
pub fn rhythm(file: &Path, text: &str) -> Vec<Violation> {
    let Some(chapter) = chapter_number(file) else {
        return Vec::new();
    };
    let mut headings = Vec::new();
    let mut fence = None;
    for (at, line) in text.lines().enumerate() {
        match fence {
            Some(open) => {
                if closes(&open, line) {
                    fence = None;
                }
            }
            None => {
                fence = opening_fence(line);
                if let Some(heading) = line.strip_prefix("## ") {
                    headings.push((at + 1, heading.trim()));
                }
            }
        }
    }
    let starts = |heading: &str, word: &str| {
        heading.strip_prefix(word).is_some_and(|rest| {
            !rest
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '-')
        })
    };
    let mut found = Vec::new();
    // The line of the latest required heading so far, and its word.
    let mut last: Option<(usize, &str)> = None;
    for words in RHYTHM {
        if chapter == 2 && words == ["Breaking it on purpose"] {
            continue;
        }
        let first = headings
            .iter()
            .find(|(_, heading)| words.iter().any(|word| starts(heading, word)));
        let Some(&(line, _)) = first else {
            found.push(violation(
                file,
                last.map_or(1, |(line, _)| line),
                Rule::Rhythm,
                format!(
                    "no {} heading after this line",
                    words
                        .iter()
                        .map(|word| format!("`## {word}`"))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            ));
            continue;
        };
        if let Some((before, word)) = last
            && line < before
        {
            found.push(violation(
                file,
                line,
                Rule::Rhythm,
                format!(
                    "the first `## {}` comes before the first `## {word}` (line {before})",
                    words[0]
                ),
            ));
            continue;
        }
        last = Some((line, words[0]));
    }
    found
}

/// A caption line split into its parts.
#[derive(Debug, PartialEq, Eq)]
struct Caption {
    chapter: u32,
    number: u32,
    path: Option<String>,
}

/// Whether a line is meant as a caption, well formed or not.
fn looks_like_caption(line: &str) -> bool {
    let line = line.trim_start();
    line.contains("class=\"caption\"")
        || line.contains("class='caption'")
        || line.starts_with("Listing ")
        || line.contains(">Listing ")
}

/// The caption on `line`, or why it is not one; `None` when the line is no caption at all.
fn caption(line: &str) -> Option<Result<Caption, String>> {
    if !looks_like_caption(line) {
        return None;
    }
    let form = "write `<span class=\"caption\">Listing N-M: what it shows (`path`)</span>`";
    let Some(inner) = line
        .strip_prefix("<span class=\"caption\">Listing ")
        .and_then(|rest| rest.strip_suffix("</span>"))
    else {
        return Some(Err(format!("a caption not in the exact form: {form}")));
    };
    let parsed = (|| {
        let (numbers, text) = inner.split_once(": ")?;
        let (chapter, number) = numbers.split_once('-')?;
        let chapter = chapter.parse().ok()?;
        let number = number.parse().ok()?;
        let (text, path) = match text.strip_suffix("`)") {
            Some(rest) => {
                let (text, path) = rest.rsplit_once(" (`")?;
                (text, Some(path.to_string()))
            }
            None => (text, None),
        };
        (!text.trim().is_empty()
            && !text.starts_with(' ')
            && !path
                .as_ref()
                .is_some_and(|p| p.is_empty() || p.contains('`')))
        .then_some(Caption {
            chapter,
            number,
            path,
        })
    })();
    Some(parsed.ok_or_else(|| format!("a caption not in the exact form: {form}")))
}

/// Convention 2: every listing of a chapter has its numbered caption right above it.
pub fn listings(root: &Path, file: &Path, text: &str) -> Vec<Violation> {
    let Some(chapter) = chapter_number(file) else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let blocks = blocks(text);
    let inside: Vec<std::ops::RangeInclusive<usize>> = blocks
        .iter()
        .map(|b| b.line..=b.lines.last().map_or(b.line, |(n, _)| *n))
        .collect();
    let mut found = Vec::new();
    let mut used = Vec::new();
    let mut expected = 1;
    for block in blocks.iter().filter(|b| b.is_listing()) {
        let at = block.line;
        let above = (at >= 3).then(|| (lines[at - 2], lines[at - 3]));
        let Some(("", line)) = above.map(|(blank, line)| (blank.trim(), line)) else {
            found.push(violation(
                file,
                at,
                Rule::Listings,
                "a listing without its caption line, then one blank line, right above it"
                    .to_string(),
            ));
            expected += 1;
            continue;
        };
        let caption_line = at - 2;
        used.push(caption_line);
        match caption(line) {
            None => found.push(violation(
                file,
                at,
                Rule::Listings,
                "a listing without its caption line, then one blank line, right above it"
                    .to_string(),
            )),
            Some(Err(message)) => {
                found.push(violation(file, caption_line, Rule::Listings, message))
            }
            Some(Ok(caption)) => {
                if (caption.chapter, caption.number) != (chapter, expected) {
                    found.push(violation(
                        file,
                        caption_line,
                        Rule::Listings,
                        format!(
                            "Listing {}-{} is listing {expected} of chapter {chapter}: number it \
                             {chapter}-{expected}",
                            caption.chapter, caption.number
                        ),
                    ));
                }
                let included: Vec<PathBuf> =
                    block.includes().iter().map(|(_, i)| i.resolved()).collect();
                match (&caption.path, included.first()) {
                    (None, Some(path)) => found.push(violation(
                        file,
                        caption_line,
                        Rule::Listings,
                        format!(
                            "the listing includes a file: end the caption with (`{}`)",
                            path.display()
                        ),
                    )),
                    (Some(path), Some(_)) if !included.contains(&PathBuf::from(path)) => found
                        .push(violation(
                            file,
                            caption_line,
                            Rule::Listings,
                            format!(
                                "the caption names `{path}`, the listing includes `{}`",
                                included[0].display()
                            ),
                        )),
                    (Some(path), None) if !root.join(path).exists() => found.push(violation(
                        file,
                        caption_line,
                        Rule::Listings,
                        format!("the caption names `{path}`, which does not exist"),
                    )),
                    _ => {}
                }
            }
        }
        expected += 1;
    }
    // A caption that stands above no listing.
    for (at, line) in lines.iter().enumerate() {
        let number = at + 1;
        if used.contains(&number) || inside.iter().any(|range| range.contains(&number)) {
            continue;
        }
        if looks_like_caption(line) {
            found.push(violation(
                file,
                number,
                Rule::Listings,
                "a caption with no listing after it (one blank line, then a fence that is \
                 neither a session nor `text`)"
                    .to_string(),
            ));
        }
    }
    found
}

/// Convention 3: the width of the lines inside fences, and of included source.
pub fn width(root: &Path, file: &Path, text: &str) -> Vec<Violation> {
    let mut found = Vec::new();
    for block in blocks(text) {
        let session = block.is_session();
        // Whether the line before was a command that goes on at this line.
        let mut continued = false;
        for (number, line) in &block.lines {
            let chars = line.chars().count();
            let command = line.trim_start().starts_with("$ ") || continued;
            continued = command && continues(line);
            if chars > WIDTH && (command || !session) {
                found.push(violation(
                    file,
                    *number,
                    Rule::Width,
                    format!("{chars} characters inside a fence, over {WIDTH}"),
                ));
            }
        }
        for (number, include) in block.includes() {
            let Ok(shown) = include.shown(root) else {
                continue;
            };
            for (at, line) in shown {
                let chars = line.chars().count();
                if chars > INCLUDED_WIDTH {
                    found.push(violation(
                        file,
                        number,
                        Rule::Width,
                        format!(
                            "line {at} of `{}` is {chars} characters, over {INCLUDED_WIDTH}",
                            include.resolved().display()
                        ),
                    ));
                }
            }
        }
    }
    found
}

/// Convention 3's CSS half: `book.toml` registers a stylesheet whose `pre > code` wraps.
pub fn wrap_rule(root: &Path) -> Result<(), String> {
    let book = std::fs::read_to_string(root.join("docs/book.toml"))
        .map_err(|e| format!("docs/book.toml: {e}"))?;
    let book: toml::Table = toml::from_str(&book).map_err(|e| format!("docs/book.toml: {e}"))?;
    let sheets: Vec<&str> = book
        .get("output")
        .and_then(|o| o.get("html"))
        .and_then(|h| h.get("additional-css"))
        .and_then(|c| c.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    for sheet in &sheets {
        let css = std::fs::read_to_string(root.join("docs").join(sheet))
            .map_err(|e| format!("docs/book.toml lists `{sheet}`: {e}"))?;
        if wraps_code(&css) {
            return Ok(());
        }
    }
    Err(format!(
        "no stylesheet in docs/book.toml's additional-css ({}) gives `pre > code` \
         `white-space: pre-wrap` and an `overflow-wrap`",
        sheets.join(", ")
    ))
}

/// Whether a stylesheet has a `pre > code` rule that wraps long lines.
fn wraps_code(css: &str) -> bool {
    let mut bare = String::new();
    let mut rest = css;
    while let Some(start) = rest.find("/*") {
        bare.push_str(&rest[..start]);
        rest = rest[start..]
            .find("*/")
            .map_or("", |end| &rest[start + end + 2..]);
    }
    bare.push_str(rest);
    bare.split('}').any(|rule| {
        let Some((selectors, body)) = rule.split_once('{') else {
            return false;
        };
        let body: String = body.split_whitespace().collect();
        selectors.split(',').any(|s| {
            let s: String = s.split_whitespace().collect();
            s == "pre>code"
        }) && body.contains("white-space:pre-wrap")
            && body.contains("overflow-wrap:")
    })
}

/// Convention 4: a Rust listing in `<details>` only includes code that `cargo test` compiles.
pub fn solutions(root: &Path, file: &Path, text: &str) -> Vec<Violation> {
    let mut found = Vec::new();
    for block in blocks(text) {
        if !block.in_details || block.language() != "rust" {
            continue;
        }
        let includes = block.includes();
        if includes.is_empty() {
            found.push(violation(
                file,
                block.line,
                Rule::Solutions,
                "a Rust listing in <details> with no `{{#include path:anchor}}`".to_string(),
            ));
        }
        for (number, line) in &block.lines {
            if !line.trim().is_empty() && Include::parse(line).is_none() {
                found.push(violation(
                    file,
                    *number,
                    Rule::Solutions,
                    "a solution typed into the Markdown: put it in a compiled file and \
                     `{{#include path:anchor}}` it"
                        .to_string(),
                ));
            }
        }
        for (number, include) in includes {
            if let Err(message) = compiled(root, &include) {
                found.push(violation(file, number, Rule::Solutions, message));
            }
        }
    }
    found
}

/// Whether an included solution is an anchor of a file that `cargo test` compiles.
fn compiled(root: &Path, include: &Include) -> Result<(), String> {
    let path = include.resolved();
    let shown = path.display();
    if !["crates", "labs", "tests"]
        .iter()
        .any(|top| path.starts_with(top))
    {
        return Err(format!(
            "includes `{shown}`, outside crates/, labs/ and tests/"
        ));
    }
    let Part::Anchor(_) = &include.part else {
        return Err(format!(
            "includes `{shown}` without an anchor: write `{{{{#include {}:chNN_name}}}}`",
            include.path
        ));
    };
    include.shown(root)?;
    // The package the file belongs to: the nearest folder with a Cargo.toml.
    let package = path
        .ancestors()
        .skip(1)
        .find(|dir| root.join(dir).join("Cargo.toml").is_file())
        .ok_or_else(|| format!("`{shown}` belongs to no package"))?;
    let inside = path.strip_prefix(package).expect("an ancestor");
    if inside.starts_with("src") {
        return Ok(());
    }
    if !inside.starts_with("tests") {
        return Err(format!(
            "`{shown}` is neither under its package's src/ nor under its tests/: cargo test \
             does not compile it"
        ));
    }
    // A module of a test program is compiled only when that program's main.rs declares it.
    let (Some(dir), Some(module)) = (path.parent(), path.file_stem()) else {
        return Ok(());
    };
    if dir == package.join("tests") || module == "main" {
        return Ok(());
    }
    let main = dir.join("main.rs");
    let module = module.to_string_lossy();
    let declared = std::fs::read_to_string(root.join(&main)).is_ok_and(|text| {
        text.lines().any(|line| {
            let line = line.trim();
            let line = line.strip_prefix("pub ").unwrap_or(line);
            line == format!("mod {module};")
        })
    });
    if declared {
        Ok(())
    } else {
        Err(format!(
            "`{shown}` is not declared by `{}` (`mod {module};`): cargo test does not \
             compile it",
            main.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scratch;

    const CH: &str = "docs/src/ch04-http.md";

    /// The messages of `check` on `text` as chapter 4, as `line: rule: message`.
    fn said(found: Vec<Violation>) -> Vec<String> {
        found
            .iter()
            .map(|v| format!("{}: {}: {}", v.line, v.rule, v.message))
            .collect()
    }

    /// A workspace with a compiled solution, a test file its main.rs does not declare, a wide
    /// source file and a file outside any package's src/ or tests/.
    fn workspace(name: &str) -> Scratch {
        let wide = format!(
            "// ANCHOR: wide\n{}\n// ANCHOR_END: wide\n",
            "x".repeat(101)
        );
        Scratch::new(
            name,
            &[
                ("crates/a/Cargo.toml", "[package]\n"),
                (
                    "crates/a/src/lib.rs",
                    "// ANCHOR: api\npub fn f() {}\n// ANCHOR_END: api\n",
                ),
                ("crates/a/src/wide.rs", &wide),
                ("crates/a/tests/it/main.rs", "mod solutions;\n"),
                (
                    "crates/a/tests/it/solutions.rs",
                    "/// Answers ch04's exercise.\n// ANCHOR: ch04_fix\n#[test]\nfn fix() {}\n\
                     // ANCHOR_END: ch04_fix\n",
                ),
                (
                    "crates/a/tests/it/stray.rs",
                    "// ANCHOR: ch04_stray\n// ANCHOR_END: ch04_stray\n",
                ),
                (
                    "crates/a/examples/e.rs",
                    "// ANCHOR: ch04_ex\n// ANCHOR_END: ch04_ex\n",
                ),
                ("docs/notes.rs", "// ANCHOR: n\n// ANCHOR_END: n\n"),
            ],
        )
    }

    const RHYTHM_OK: &str = "# 4\n## Objectives\n## Predict\n## Run: the story\n## Aside\n\
        ## Change one input: a flag\n## Breaking it on purpose\n## Exercises\n## Summary\n";

    // The rhythm holds with headings that continue after the word and others in between.
    #[test]
    fn rhythm_accepts_the_order() {
        assert_eq!(said(rhythm(Path::new(CH), RHYTHM_OK)), Vec::<String>::new());
        let two = RHYTHM_OK.replace("## Breaking it on purpose\n", "");
        assert!(rhythm(Path::new("docs/src/ch02-breaking-it.md"), &two).is_empty());
        // Pages that are not chapters have no rhythm.
        assert!(rhythm(Path::new("docs/src/primers.md"), "## Summary\n").is_empty());
    }

    // A missing heading, one out of order, a word that only starts a longer word, and a heading
    // inside a fence each fail.
    #[test]
    fn rhythm_fails_on_missing_and_misordered_headings() {
        let missing = RHYTHM_OK.replace("## Breaking it on purpose\n", "");
        assert_eq!(
            said(rhythm(Path::new(CH), &missing)),
            ["6: convention 1 (rhythm): no `## Breaking it on purpose` heading after this line"]
        );
        let swapped = RHYTHM_OK.replace("## Predict\n## Run: the story\n", "## Run\n## Predict\n");
        assert_eq!(
            said(rhythm(Path::new(CH), &swapped)),
            [
                "3: convention 1 (rhythm): the first `## Run` comes before the first `## Predict` \
              (line 4)"
            ]
        );
        let running = RHYTHM_OK.replace("## Run: the story", "## Running it");
        assert!(said(rhythm(Path::new(CH), &running))[0].contains("no `## Run` heading"));
        let fenced = RHYTHM_OK.replace("## Summary\n", "```md\n## Summary\n```\n");
        assert!(said(rhythm(Path::new(CH), &fenced))[0].contains("no `## Summary` heading"));
    }

    const CAP: &str = "<span class=\"caption\">Listing";

    // Captions in the exact form, numbered in order, with the included file's path, pass;
    // sessions and text blocks need none.
    #[test]
    fn listings_accept_numbered_captions() {
        let scratch = workspace("listings-ok");
        let text = format!(
            "{CAP} 4-1: the api (`crates/a/src/lib.rs`)</span>\n\n```rust,ignore\n\
             {{{{#include ../../crates/a/src/lib.rs:api}}}}\n```\n\n```console\n$ ls\n```\n\n\
             ```text\nplain\n```\n\n<details>\n\n{CAP} 4-2: a sketch</span>\n\n```rust\nfn f() {{}}\n```\n\n\
             </details>\n"
        );
        assert_eq!(
            said(listings(&scratch.0, Path::new(CH), &text)),
            Vec::<String>::new()
        );
    }

    // A missing caption, a wrong number, a wrong form, a missing or wrong path, and a caption
    // with no listing each fail.
    #[test]
    fn listings_fail_on_each_caption_fault() {
        let scratch = workspace("listings-bad");
        let check = |text: &str| said(listings(&scratch.0, Path::new(CH), text));
        assert_eq!(
            check("text\n\n```rust\nfn f() {}\n```\n"),
            [
                "3: convention 2 (listings): a listing without its caption line, then one blank \
              line, right above it"
            ]
        );
        assert_eq!(
            check(&format!("{CAP} 4-2: f</span>\n\n```\nf\n```\n")),
            ["1: convention 2 (listings): Listing 4-2 is listing 1 of chapter 4: number it 4-1"]
        );
        assert!(
            check(&format!("{CAP} 3-1: f</span>\n\n```\nf\n```\n"))[0].contains("number it 4-1")
        );
        for bad in [
            "<span class=\"caption\">Listing 4-1 f</span>",
            "<span class=\"caption\">listing 4-1: f</span>",
            "<span class=\"caption\">Listing 4-1: f (crates/a/src/lib.rs)</span>.",
            "<span class='caption'>Listing 4-1: f</span>",
        ] {
            let found = check(&format!("{bad}\n\n```\nf\n```\n"));
            assert!(
                found[0].starts_with("1: convention 2 (listings): a caption not in the exact form"),
                "{bad}: {found:?}"
            );
        }
        let include = "```rust\n{{#include ../../crates/a/src/lib.rs:api}}\n```\n";
        assert_eq!(
            check(&format!("{CAP} 4-1: the api</span>\n\n{include}")),
            [
                "1: convention 2 (listings): the listing includes a file: end the caption with \
              (`crates/a/src/lib.rs`)"
            ]
        );
        assert_eq!(
            check(&format!(
                "{CAP} 4-1: the api (`crates/a/src/wide.rs`)</span>\n\n{include}"
            )),
            [
                "1: convention 2 (listings): the caption names `crates/a/src/wide.rs`, the listing \
              includes `crates/a/src/lib.rs`"
            ]
        );
        assert!(
            check(&format!(
                "{CAP} 4-1: f (`crates/nope.rs`)</span>\n\n```\nf\n```\n"
            ))[0]
                .contains("which does not exist")
        );
        assert_eq!(
            check(&format!("{CAP} 4-1: f</span>\n\ntext\n")),
            [
                "1: convention 2 (listings): a caption with no listing after it (one blank line, \
              then a fence that is neither a session nor `text`)"
            ]
        );
        // A session is no listing: a caption above it stands above nothing.
        let session = check(&format!("{CAP} 4-1: f</span>\n\n```console\n$ ls\n```\n"));
        assert!(
            session[0].contains("a caption with no listing after it"),
            "{session:?}"
        );
    }

    // Hand-written fence lines over 80 fail, a session's output lines do not, and included
    // source is held to 100 characters.
    #[test]
    fn width_holds_fences_and_included_source() {
        let scratch = workspace("width");
        let check = |text: &str| said(width(&scratch.0, Path::new(CH), text));
        let long = "y".repeat(81);
        let fine = "y".repeat(80);
        assert!(
            check(&format!(
                "```rust\n{fine}\n```\n```console\n$ echo\n{long}\n```\n"
            ))
            .is_empty()
        );
        assert_eq!(
            check(&format!("```rust\n{long}\n```\n")),
            ["2: convention 3 (width): 81 characters inside a fence, over 80"]
        );
        assert_eq!(
            check(&format!("```console\n$ echo {long}\n```\n")),
            ["2: convention 3 (width): 88 characters inside a fence, over 80"]
        );
        // A command continued after a backslash is hand-written on every line.
        assert_eq!(
            check(&format!("```console\n$ echo \\\n  {long}\n{long}\n```\n")),
            ["3: convention 3 (width): 83 characters inside a fence, over 80"]
        );
        assert_eq!(
            check(&format!("```text\n{long}\n```\n")).len(),
            1,
            "text blocks are hand-written"
        );
        assert_eq!(
            check("```rust\n{{#include ../../crates/a/src/wide.rs:wide}}\n```\n"),
            [
                "2: convention 3 (width): line 2 of `crates/a/src/wide.rs` is 101 characters, over \
              100"
            ]
        );
        assert!(check("```rust\n{{#include ../../crates/a/src/wide.rs:1}}\n```\n").is_empty());
    }

    // The wrap rule is found only in a registered stylesheet with both properties.
    #[test]
    fn the_css_must_wrap_code() {
        let book = "[output.html]\nadditional-css = [\"theme/book.css\"]\n";
        let wraps = "/* Lines wrap. */\nspan.caption { display: block; }\n/* Here: */\n\
                     pre > code {\n  white-space: pre-wrap;\n  overflow-wrap: anywhere;\n}\n";
        let ok = Scratch::new(
            "css-ok",
            &[("docs/book.toml", book), ("docs/theme/book.css", wraps)],
        );
        assert_eq!(wrap_rule(&ok.0), Ok(()));
        let scrolls = wraps.replace("pre-wrap", "pre");
        let bad = Scratch::new(
            "css-bad",
            &[("docs/book.toml", book), ("docs/theme/book.css", &scrolls)],
        );
        assert!(wrap_rule(&bad.0).unwrap_err().contains("theme/book.css"));
        let unlisted = Scratch::new(
            "css-unlisted",
            &[
                ("docs/book.toml", "[book]\n"),
                ("docs/theme/book.css", wraps),
            ],
        );
        assert!(wrap_rule(&unlisted.0).is_err());
    }

    // A solution included from a declared test module passes; typed code, a missing anchor,
    // an undeclared module, a file outside src/ and tests/, and one outside the packages fail.
    #[test]
    fn solutions_must_be_compiled_includes() {
        let scratch = workspace("solutions");
        let check = |body: &str| {
            let text = format!(
                "<details>\n<summary>Solution</summary>\n\n```rust\n{body}\n```\n\n</details>\n"
            );
            said(solutions(&scratch.0, Path::new(CH), &text))
        };
        assert!(check("{{#include ../../crates/a/tests/it/solutions.rs:ch04_fix}}").is_empty());
        assert!(check("{{#include ../../crates/a/src/lib.rs:api}}").is_empty());
        assert_eq!(
            check("fn fix() {}"),
            [
                "4: convention 4 (solutions compiled): a Rust listing in <details> with no \
                 `{{#include path:anchor}}`",
                "5: convention 4 (solutions compiled): a solution typed into the Markdown: put \
                 it in a compiled file and `{{#include path:anchor}}` it",
            ]
        );
        assert!(
            check("{{#include ../../crates/a/tests/it/solutions.rs:ch04_gone}}")[0].contains(
                "includes anchor `ch04_gone`, which `crates/a/tests/it/solutions.rs` does not have"
            )
        );
        assert!(
            check("{{#include ../../crates/a/tests/it/stray.rs:ch04_stray}}")[0]
                .contains("is not declared by `crates/a/tests/it/main.rs` (`mod stray;`)")
        );
        assert!(
            check("{{#include ../../crates/a/examples/e.rs:ch04_ex}}")[0]
                .contains("neither under its package's src/ nor under its tests/")
        );
        assert!(
            check("{{#include ../notes.rs:n}}")[0].contains("outside crates/, labs/ and tests/")
        );
        assert!(check("{{#include ../../crates/a/src/lib.rs}}")[0].contains("without an anchor"));
        // Outside <details> a typed Rust listing is fine.
        let text = "```rust\nfn f() {}\n```\n<details>\n\n```text\nplain\n```\n</details>\n";
        assert!(solutions(&scratch.0, Path::new(CH), text).is_empty());
    }
}
