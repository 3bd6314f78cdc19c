//! Rules read from Rust sources line by line: lint allowances and lab seams.

use std::path::{Path, PathBuf};

use crate::Error;

/// Every `.rs` file under `dir`, sorted, skipping build output (`target`) and hidden folders.
pub fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|source| Error::Read {
            path: dir.clone(),
            source,
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The attributes of `source` (joined when they span lines), with their line numbers (from 1).
fn attributes(source: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at].trim_start();
        if !(line.starts_with("#[") || line.starts_with("#![")) {
            at += 1;
            continue;
        }
        let start = at;
        let mut text = String::new();
        let mut depth = 0i32;
        loop {
            for c in lines[at].chars() {
                match c {
                    '[' => depth += 1,
                    ']' => depth -= 1,
                    _ => {}
                }
            }
            text.push_str(lines[at].trim());
            at += 1;
            if depth <= 0 || at == lines.len() {
                break;
            }
        }
        found.push((start + 1, text));
    }
    found
}

/// The lint lists of every `name(...)` in `attribute` (`allow`, `expect`), with what follows
/// the lints in the same parentheses.
fn lint_lists<'a>(attribute: &'a str, name: &str) -> Vec<&'a str> {
    let opening = format!("{name}(");
    let mut lists = Vec::new();
    let mut rest = attribute;
    while let Some(at) = rest.find(&opening) {
        let preceded_by_word = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let inner = &rest[at + opening.len()..];
        let mut depth = 1;
        let end = inner
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .map_or(inner.len(), |(end, _)| end);
        if !preceded_by_word {
            lists.push(&inner[..end]);
        }
        rest = &inner[end..];
    }
    lists
}

fn names_dead_code(list: &str) -> bool {
    list.split(',').any(|lint| lint.trim() == "dead_code")
}

/// The `allow(dead_code)` attributes of `source`, and the `expect(dead_code)` ones that give no
/// reason, as `(line, attribute)`.
pub fn dead_code_allowances(source: &str) -> Vec<(usize, String)> {
    attributes(source)
        .into_iter()
        .filter(|(_, attribute)| {
            lint_lists(attribute, "allow")
                .into_iter()
                .any(names_dead_code)
                || lint_lists(attribute, "expect")
                    .into_iter()
                    .any(|list| names_dead_code(list) && !list.contains("reason"))
        })
        .collect()
}

/// Whether a doc comment line calls its item a lab seam: it points at `labs/` or says "seam".
fn speaks_of_a_seam(doc: &str) -> bool {
    doc.contains("labs/")
        || doc
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| word.eq_ignore_ascii_case("seam") || word.eq_ignore_ascii_case("seams"))
}

/// Whether an attribute keeps its item out of the documented API.
fn hides(attribute: &str) -> bool {
    attribute.contains("doc(hidden)") || attribute.contains("feature = \"lab\"")
}

/// The public items of `source` documented as lab seams that the documented API still shows,
/// as `(line, item)`: their `///` comment points at `labs/` or says "seam", and no attribute
/// above them is `#[doc(hidden)]` or `#[cfg(feature = "lab")]`.
pub fn unhidden_seams(source: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let item = line.trim_start();
        let restricted = ["pub(crate)", "pub(super)", "pub(in "];
        let public = item.starts_with("pub ")
            || (item.starts_with("pub(") && !restricted.iter().any(|r| item.starts_with(r)));
        if !public {
            continue;
        }
        let (mut seam, mut hidden) = (false, false);
        for above in lines[..at].iter().rev().map(|l| l.trim_start()) {
            if let Some(doc) = above.strip_prefix("///") {
                seam |= speaks_of_a_seam(doc);
            } else if above.starts_with("#[") || above.starts_with(')') || above.starts_with('"') {
                hidden |= hides(above);
            } else if !above.starts_with("//") {
                break;
            }
        }
        if seam && !hidden {
            found.push((at + 1, item.to_string()));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    // Every spelling of an allowance of dead code is found; a reasoned expectation is not.
    #[test]
    fn dead_code_allowances_are_found_in_every_spelling() {
        let source = "#![allow(dead_code)]\n#[allow(unused, dead_code)]\nfn a() {}\n#[cfg_attr(test, allow(dead_code))]\n#[expect(dead_code)]\n#[expect(dead_code, reason = \"one build only\")]\n#[allow(\n    dead_code,\n)]\n#[allow(unused_imports)]\n";
        let lines: Vec<usize> = dead_code_allowances(source)
            .into_iter()
            .map(|(line, _)| line)
            .collect();
        assert_eq!(lines, vec![1, 2, 4, 5, 7]);
    }

    // A seam's doc comment asks for doc(hidden); other public items ask for nothing.
    #[test]
    fn a_seam_without_doc_hidden_is_found() {
        let source = "/// The seam the labs use.\n#[doc(hidden)]\npub fn hidden() {}\n\n/// A lab under `labs/` swaps it.\n#[derive(Debug)]\npub struct Shown;\n\n/// Ordinary.\npub fn plain() {}\n";
        assert_eq!(
            unhidden_seams(source),
            vec![(7, "pub struct Shown;".to_string())]
        );
    }
}
