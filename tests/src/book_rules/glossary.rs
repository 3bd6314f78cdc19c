//! Convention 7: the glossary lists its terms in the order a reader meets them.
//!
//! A reader meets a term where the teaching path first links it (`glossary.md#anchor`): the
//! introduction, then the chapters with the pages nested under them, in `SUMMARY.md`'s order.
//! Before class, the primers, the appendices and the instructor guide are looked up out of
//! order, so their links do not count. Every term must be linked from that path.

use std::path::{Path, PathBuf};

use super::{Rule, Violation};
use crate::{Error, read};

/// The page that holds the terms.
const GLOSSARY: &str = "docs/src/glossary.md";

/// Pages linked from `SUMMARY.md` that a reader looks things up in, rather than reads in order.
const REFERENCE_PAGES: &[&str] = &["before-class.md", "primers.md", "glossary.md"];

/// The glossary's anchors in its own order, each with its heading's line.
pub fn terms(text: &str) -> Vec<(String, usize)> {
    (text.lines().enumerate())
        .filter_map(|(index, line)| line.strip_prefix("## ").map(|h| (anchor(h), index + 1)))
        .collect()
}

/// mdBook's anchor for a heading: lower case, spaces to dashes, other punctuation dropped.
fn anchor(heading: &str) -> String {
    (heading.trim().to_lowercase().chars())
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The teaching path: the pages of `SUMMARY.md` up to its first part title (`# ...` after the
/// first line), without the reference pages.
pub fn teaching_path(summary: &str) -> Vec<PathBuf> {
    let mut pages = Vec::new();
    for line in summary.lines().skip(1) {
        if line.starts_with("# ") {
            break;
        }
        let Some((_, rest)) = line.split_once("](") else {
            continue;
        };
        let Some((page, _)) = rest.split_once(')') else {
            continue;
        };
        if !REFERENCE_PAGES.contains(&page) {
            pages.push(Path::new("docs/src").join(page));
        }
    }
    pages
}

/// The anchors the pages link in the glossary, in the order of their first link.
pub fn first_links(pages: &[(PathBuf, String)]) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for (_, text) in pages {
        for piece in text.split("glossary.md#").skip(1) {
            let name: String = (piece.chars())
                .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            if !order.contains(&name) {
                order.push(name);
            }
        }
    }
    order
}

/// Every place where the glossary's order is not the order of first links, and every term the
/// teaching path never links.
pub fn glossary_order(root: &Path) -> Result<Vec<Violation>, Error> {
    let summary = read(root.join("docs/src/SUMMARY.md"))?;
    let mut pages = Vec::new();
    for page in teaching_path(&summary) {
        let text = read(root.join(&page))?;
        pages.push((page, text));
    }
    let met = first_links(&pages);
    let terms = terms(&read(root.join(GLOSSARY))?);
    let mut violations = Vec::new();
    let violation = |line, message| Violation {
        file: PathBuf::from(GLOSSARY),
        line,
        rule: Rule::Glossary,
        message,
    };
    for (term, line) in &terms {
        if !met.contains(term) {
            violations.push(violation(
                *line,
                format!("`{term}` is never linked from the introduction or a chapter"),
            ));
        }
    }
    let listed: Vec<&String> = terms.iter().map(|(term, _)| term).collect();
    let expected: Vec<&String> = met.iter().filter(|term| listed.contains(term)).collect();
    for ((term, line), wanted) in terms.iter().filter(|(t, _)| met.contains(t)).zip(&expected) {
        if term != *wanted {
            violations.push(violation(
                *line,
                format!("`{term}` stands where the reader next meets `{wanted}`"),
            ));
            break;
        }
    }
    Ok(violations)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_and_first_links_read_as_mdbook_writes_them() {
        assert_eq!(anchor("At least once"), "at-least-once");
        assert_eq!(anchor("Fail closed"), "fail-closed");
        let pages = vec![(
            PathBuf::from("a.md"),
            "a [key](glossary.md#operation-key), [x](glossary.md#effect) and \
             [key](glossary.md#operation-key)"
                .to_string(),
        )];
        assert_eq!(first_links(&pages), ["operation-key", "effect"]);
        let summary = "# Summary\n\n[Introduction](introduction.md)\n[Primers](primers.md)\n\n\
                       - [One](ch01.md)\n  - [Nested](kit.md)\n\n# Appendices\n\n- [A](a.md)\n";
        assert_eq!(
            teaching_path(summary),
            [
                PathBuf::from("docs/src/introduction.md"),
                PathBuf::from("docs/src/ch01.md"),
                PathBuf::from("docs/src/kit.md"),
            ]
        );
    }
}
