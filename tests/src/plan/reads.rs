//! What a student reads before writing a piece or fixing a variant, counted in lines of code and
//! words of prose.
//!
//! A piece's `reads` name items of the workspace's code, `path/file.rs#Item` or
//! `path/file.rs#Type::member`, and sections of a page, `docs/src/page.md#Heading`. An item is
//! read as a user reads an API: its doc comment and its signature (a type or a trait whole,
//! since its fields and methods are what it says), not a function's body. A variant is read by
//! the functions that hold its bug, bodies included: finding the bug means reading them.

use std::ops::Range;
use std::path::Path;

use crate::exercise::blank::{mask, matching_brace};

use super::{PlanError, measure};

/// One thing read, and its size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Read {
    /// What is read, as declared: `file#Item`, a section, or a brief.
    pub what: String,
    /// Lines of code (doc comments included) read closely.
    pub code_lines: usize,
    /// Words of prose.
    pub words: usize,
}

/// Sizes one declared read of the workspace at `root`.
pub fn read(root: &Path, declared: &str) -> Result<Read, PlanError> {
    let refuse = |reason: String| PlanError::Reads {
        read: declared.to_string(),
        reason,
    };
    let (file, anchor) = declared
        .split_once('#')
        .ok_or_else(|| refuse("needs `file#Item` or `page.md#Heading`".into()))?;
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).map_err(|error| refuse(error.to_string()))?;
    let mut read = Read {
        what: declared.to_string(),
        ..Read::default()
    };
    if file.ends_with(".md") {
        let section = section(&text, anchor).ok_or_else(|| refuse("no such heading".into()))?;
        let content = measure(root, &path, section)?;
        read.words = content.words;
        read.code_lines = content.listing_lines;
    } else {
        let lines = item_lines(&text, anchor).ok_or_else(|| refuse("no such item".into()))?;
        read.code_lines = shown_lines(&text, lines);
    }
    Ok(read)
}

/// The text of the section under the heading `heading`, up to the next heading of its level or
/// a higher one.
fn section<'a>(text: &'a str, heading: &str) -> Option<&'a str> {
    let level = |line: &str| {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        (hashes > 0 && line[hashes..].starts_with(' ')).then_some(hashes)
    };
    let mut offset = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        if let Some(depth) = level(line) {
            match start {
                Some((_, open)) if depth <= open => return Some(&text[start?.0..offset]),
                None if line[depth..].trim() == heading => start = Some((offset, depth)),
                _ => {}
            }
        }
        offset += line.len();
    }
    start.map(|(from, _)| &text[from..])
}

/// The non-blank lines of `range` (line numbers, from 0) of `text`.
fn shown_lines(text: &str, range: Range<usize>) -> usize {
    (text.lines().skip(range.start))
        .take(range.len())
        .filter(|line| !line.trim().is_empty())
        .count()
}

/// The lines of the item `name` (`Item` or `Type::member`) of a Rust source: its doc comment and
/// attributes, then a function's signature, or a type's or a trait's whole definition.
pub fn item_lines(source: &str, name: &str) -> Option<Range<usize>> {
    let code = mask(source);
    let lines: Vec<&str> = code.lines().collect();
    let at = match name.split_once("::") {
        Some((owner, member)) => (0..lines.len())
            .filter_map(|at| owner_block(&code, &lines, at, owner))
            .find_map(|mut block| block.find(|&at| declares(lines[at], "fn", member)))?,
        None => (0..lines.len()).find(|&at| {
            ["struct", "enum", "trait", "fn", "const", "type", "static"]
                .iter()
                .any(|keyword| declares(lines[at], keyword, name))
        })?,
    };
    let end = item_end(&code, &lines, at)?;
    Some(docs_start(source, at)..end + 1)
}

/// The lines of the `impl` or `trait` block that `line` opens for `owner`, if it does.
fn owner_block(code: &str, lines: &[&str], line: usize, owner: &str) -> Option<Range<usize>> {
    let text = lines[line].trim_start();
    let opens = text.starts_with("impl") || declares(text, "trait", owner);
    let names = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word == owner);
    if !opens || !names {
        return None;
    }
    let end = item_end(code, lines, line)?;
    Some(line..end + 1)
}

/// Whether `line` declares `keyword name` (after any visibility and qualifiers).
fn declares(line: &str, keyword: &str, name: &str) -> bool {
    let mut words = line
        .trim_start()
        .split(|c: char| c.is_whitespace() || c == '(' || c == '<' || c == ':' || c == '{')
        .filter(|word| !word.is_empty())
        .skip_while(|word| {
            word.starts_with("pub") || ["async", "unsafe", "const", "crate)"].contains(word)
        });
    // `const NAME` is skipped above as a qualifier: look for it directly.
    if keyword == "const" {
        let text = line.trim_start();
        let text = text.strip_prefix("pub ").unwrap_or(text);
        let text = text.strip_prefix("pub(crate) ").unwrap_or(text);
        return text
            .strip_prefix("const ")
            .is_some_and(|rest| rest.starts_with(name) && rest[name.len()..].starts_with(':'));
    }
    words.next() == Some(keyword) && words.next() == Some(name)
}

/// The last line of the item that starts at line `at`: the line of a function's opening brace
/// (its signature), the closing brace of a type, a trait or an impl, or the line ending in `;`.
fn item_end(code: &str, lines: &[&str], at: usize) -> Option<usize> {
    let start: usize = lines[..at].iter().map(|line| line.len() + 1).sum();
    let is_fn = lines[at].contains("fn ");
    let mut depth = 0i32;
    for (offset, byte) in code.as_bytes()[start..].iter().enumerate() {
        match byte {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b';' if depth == 0 => return Some(line_of(code, start + offset)),
            b'{' if depth == 0 => {
                if is_fn {
                    return Some(line_of(code, start + offset));
                }
                let close = matching_brace(code, start + offset)?;
                return Some(line_of(code, close));
            }
            _ => {}
        }
    }
    None
}

fn line_of(code: &str, offset: usize) -> usize {
    code[..offset].matches('\n').count()
}

/// The first line of the doc comment and attributes right above line `at`.
fn docs_start(source: &str, at: usize) -> usize {
    let lines: Vec<&str> = source.lines().collect();
    let mut start = at;
    while start > 0 {
        let above = lines[start - 1].trim_start();
        if above.starts_with("///") || above.starts_with("#[") {
            start -= 1;
        } else {
            break;
        }
    }
    start
}

/// The whole function that holds the lines `block` of a Rust source (doc comment, signature and
/// body), or else the first one after it (a block among a function's doc comments belongs to
/// it), as a line range: what a student reads to find a bug there.
pub fn enclosing_function(source: &str, block: Range<usize>) -> Option<Range<usize>> {
    let code = mask(source);
    let lines: Vec<&str> = code.lines().collect();
    let functions: Vec<(usize, usize)> = (0..lines.len())
        .filter(|&at| {
            let mut words = lines[at].split_whitespace().skip_while(|word| {
                word.starts_with("pub") || ["async", "unsafe", "const"].contains(word)
            });
            words.next() == Some("fn")
        })
        .filter_map(|at| {
            let start: usize = lines[..at].iter().map(|l| l.len() + 1).sum();
            let open = start + code[start..].find('{')?;
            Some((at, line_of(&code, matching_brace(&code, open)?)))
        })
        .collect();
    let holding =
        (functions.iter().rev()).find(|(at, end)| *at <= block.start && block.end <= *end);
    let (at, end) = holding.or_else(|| functions.iter().find(|(at, _)| *at >= block.end))?;
    Some(docs_start(source, *at)..end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "\
/// A thing.
#[derive(Debug)]
pub struct Thing {
    /// Its count.
    count: u32,
}

impl Thing {
    /// Makes one.
    pub fn new(
        count: u32,
    ) -> Self {
        Thing { count }
    }

    /// Its count.
    pub fn count(&self) -> u32 {
        // A comment with a { brace.
        self.count
    }
}

/// The limit.
pub const LIMIT: u32 = 3;

fn helper() -> u32 {
    let x = 1;
    x + 1
}
";

    #[test]
    fn an_item_is_its_docs_and_signature_and_a_type_is_whole() {
        assert_eq!(item_lines(SOURCE, "Thing"), Some(0..6));
        assert_eq!(item_lines(SOURCE, "Thing::new"), Some(8..12));
        assert_eq!(item_lines(SOURCE, "Thing::count"), Some(15..17));
        assert_eq!(item_lines(SOURCE, "LIMIT"), Some(22..24));
        assert_eq!(item_lines(SOURCE, "Thing::missing"), None);
        assert_eq!(item_lines(SOURCE, "Other"), None);
        assert_eq!(shown_lines(SOURCE, 0..6), 6);
    }

    #[test]
    fn a_bug_is_read_with_its_whole_function() {
        assert_eq!(enclosing_function(SOURCE, 26..27), Some(25..29));
        assert_eq!(enclosing_function(SOURCE, 18..19), Some(15..20));
        // Among the doc comments: the function they document.
        assert_eq!(enclosing_function(SOURCE, 15..16), Some(15..20));
    }

    #[test]
    fn a_section_runs_to_the_next_heading_of_its_level() {
        let page = "# Page\n\n## One\n\nWords here.\n\n### Inner\n\nMore.\n\n## Two\n\nOther.\n";
        assert_eq!(
            section(page, "One"),
            Some("## One\n\nWords here.\n\n### Inner\n\nMore.\n\n")
        );
        assert_eq!(section(page, "Two"), Some("## Two\n\nOther.\n"));
        assert_eq!(section(page, "Three"), None);
    }

    #[test]
    fn every_declared_read_of_the_workspace_is_found() {
        let root = crate::workspace_root();
        for piece in crate::exercise::blank::pieces(&root).expect("tests/blanks.toml") {
            assert!(!piece.reads.is_empty(), "{}: no reads", piece.name);
            for declared in &piece.reads {
                let read = read(&root, declared).unwrap_or_else(|e| panic!("{e}"));
                assert!(read.code_lines + read.words > 0, "{declared}: nothing read");
            }
        }
    }
}
