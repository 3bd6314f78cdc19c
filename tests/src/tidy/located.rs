//! Where a lab's copy differs from the file it mirrors: inside its `// NEGATIVE:` blocks, or not.
//!
//! A block is found in the copy alone, so that reading the lab says what it may change:
//!
//! - it opens at a line that starts with `// NEGATIVE:`;
//! - if a line `// END NEGATIVE` follows before the next opening, the block ends there;
//! - otherwise it runs through the comment lines that continue the explanation, then through the
//!   code that follows, and ends before the first blank line or the first line indented less
//!   than the opening line (the end of the enclosing block).
//!
//! An added line is located when it lies in a block. A removed line has no place in the copy; it
//! is located when the copy line just before or just after the place it was removed from lies in
//! a block, so a block may replace the code around it. A blank line added or removed is no
//! change. A type the lab names after its bug is declared in its manifest (`renames`): a line of
//! the mirrored file that reads like the copy's once those names are changed is no change either.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use crate::diff::{Line, MARKER, MIRRORED_BY, changed_code_lines, diff, sources};
use crate::{Declared, Error};

/// What keeps a variant from being a change located in its `// NEGATIVE:` blocks (nothing, for
/// a well-made one). Each line names the file, the line and what is wrong.
pub fn change_problems(name: &str, declared: &Declared) -> Result<Vec<String>, Error> {
    let (correct, variant) = sources(name, declared)?;
    let copy = format!("labs/{name}/src/lib.rs");
    let mirrors = declared.mirrors.display();
    let mut problems = Vec::new();
    // Whoever edits the correct file must learn, on its first line, which copies to update.
    let first_line = correct.lines().next().unwrap_or_default();
    if !(first_line.starts_with(MIRRORED_BY) && first_line.contains(&format!("labs/{name}"))) {
        problems.push(format!(
            "{mirrors}:1: the first line does not name labs/{name} \
             (`{MIRRORED_BY} labs/{name}: ...`)"
        ));
    }
    if variant.lines().next() != Some(first_line) {
        problems.push(format!("{copy}:1: the first line is not that of {mirrors}"));
    }
    if !variant.contains(MARKER) {
        problems.push(format!("{copy}: no `{MARKER}` block marks the change"));
    }
    if changed_code_lines(&diff(&correct, &variant)) == 0 {
        problems.push(format!("{copy}: changes no code of {mirrors}"));
    }
    for change in unlocated(&correct, &variant, &declared.renames) {
        problems.push(format!(
            "{copy}:{}: {change}, outside every `{MARKER}` block (a copy of {mirrors})",
            change.line
        ));
    }
    Ok(problems)
}

/// The line that closes a block explicitly, for a block with blank lines inside.
pub const END_MARKER: &str = "// END NEGATIVE";

/// The `// NEGATIVE:` blocks of `copy`, as ranges of line indices (from 0).
pub fn blocks(copy: &str) -> Vec<RangeInclusive<usize>> {
    let lines: Vec<&str> = copy.lines().collect();
    let opens = |at: usize| lines[at].trim_start().starts_with(MARKER);
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        if !opens(at) {
            at += 1;
            continue;
        }
        let start = at;
        let explicit_end = (start + 1..lines.len())
            .take_while(|&next| !opens(next))
            .find(|&next| lines[next].trim_start().starts_with(END_MARKER));
        let end = explicit_end.unwrap_or_else(|| {
            let indent = indentation(lines[start]);
            let mut end = start;
            while end + 1 < lines.len() && lines[end + 1].trim_start().starts_with("//") {
                end += 1;
            }
            while end + 1 < lines.len()
                && !opens(end + 1)
                && !lines[end + 1].trim().is_empty()
                && indentation(lines[end + 1]) >= indent
            {
                end += 1;
            }
            end
        });
        found.push(start..=end);
        at = end + 1;
    }
    found
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Which side of the diff a changed line is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// In the mirrored file only: the copy lacks it.
    Removed,
    /// In the copy only.
    Added,
}

/// A changed line outside every block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unlocated {
    /// The copy's line number (from 1): the line itself, or for a removed line the copy line
    /// just after the place it is missing from.
    pub line: usize,
    /// Which side of the diff it is on.
    pub side: Side,
    /// The line's text.
    pub text: String,
}

impl std::fmt::Display for Unlocated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = match self.side {
            Side::Added => "adds",
            Side::Removed => "lacks",
        };
        write!(f, "{verb} `{}`", self.text.trim())
    }
}

/// The changed lines of `copy` against `correct` that lie outside every `// NEGATIVE:` block,
/// with `renames` (the mirrored file's name for a type, and the copy's) taken into account.
pub fn unlocated(correct: &str, copy: &str, renames: &BTreeMap<String, String>) -> Vec<Unlocated> {
    let blocks = blocks(copy);
    let in_block = |index: usize| blocks.iter().any(|block| block.contains(&index));
    let mut candidates = Vec::new();
    // The copy line the walk has reached: the next `Same` or `Added` line has this index.
    let mut next = 0;
    for line in diff(correct, copy) {
        match line {
            Line::Same(_) => next += 1,
            Line::Added(text) => {
                if !text.trim().is_empty() && !in_block(next) {
                    candidates.push(Unlocated {
                        line: next + 1,
                        side: Side::Added,
                        text: text.to_string(),
                    });
                }
                next += 1;
            }
            Line::Removed(text) => {
                let touches = (next > 0 && in_block(next - 1)) || in_block(next);
                if !text.trim().is_empty() && !touches {
                    candidates.push(Unlocated {
                        line: next + 1,
                        side: Side::Removed,
                        text: text.to_string(),
                    });
                }
            }
        }
    }
    without_renames(candidates, renames)
}

/// `changes` without the pairs that differ only by a declared rename: a removed line that,
/// renamed, equals an added line.
fn without_renames(
    mut changes: Vec<Unlocated>,
    renames: &BTreeMap<String, String>,
) -> Vec<Unlocated> {
    if renames.is_empty() {
        return changes;
    }
    let mut excused = vec![false; changes.len()];
    for removed in 0..changes.len() {
        if changes[removed].side != Side::Removed {
            continue;
        }
        let renamed = rename(&changes[removed].text, renames);
        let partner = (0..changes.len()).find(|&added| {
            !excused[added] && changes[added].side == Side::Added && changes[added].text == renamed
        });
        if let Some(added) = partner {
            excused[removed] = true;
            excused[added] = true;
        }
    }
    let mut kept = excused.iter();
    changes.retain(|_| !kept.next().copied().unwrap_or(false));
    changes
}

/// `text` with every whole-word occurrence of a key of `renames` replaced by its value.
pub fn rename(text: &str, renames: &BTreeMap<String, String>) -> String {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(renames.get(word.as_str()).unwrap_or(word));
        word.clear();
    };
    for c in text.chars() {
        if is_word(c) {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORRECT: &str = "\
// Mirrored by labs/x: see labs/README.md before changing this file.
use std::fmt;

pub struct Engine;

fn apply(total: u64, units: u64) -> u64 {
    let sum = total + units;
    check(sum);
    sum
}
";

    fn no_renames() -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    // A block runs from its marker through its explanation and the code below it, up to a
    // blank line or the end of the enclosing block.
    #[test]
    fn a_block_ends_at_a_blank_line_or_a_dedent() {
        let copy = "a\n    // NEGATIVE: why\n    // and more\n    x\n        y\n    z\n}\nb\n\n// NEGATIVE: two\nc\n\nd\n";
        assert_eq!(blocks(copy), vec![1..=5, 9..=10]);
    }

    // An explicit end marker carries a block over blank lines.
    #[test]
    fn an_end_marker_closes_a_block_over_blank_lines() {
        let copy = "a\n// NEGATIVE: why\nx\n\ny\n// END NEGATIVE\n\nz\n";
        assert_eq!(blocks(copy), vec![1..=5]);
    }

    // A change made inside the block, and the code it replaced next to it, are located.
    #[test]
    fn a_change_inside_its_block_is_located() {
        let copy = CORRECT.replace(
            "    check(sum);\n",
            "    // NEGATIVE: the sum is not checked.\n",
        );
        assert_eq!(unlocated(CORRECT, &copy, &no_renames()), vec![]);
    }

    // An uncopied fix: the mirrored file gained a line its copy lacks, outside the block.
    #[test]
    fn an_uncopied_fix_is_reported() {
        let fixed = CORRECT.replace("    sum\n}\n", "    sum\n}\n\nfn guard() {}\n");
        let copy = CORRECT.replace(
            "    check(sum);\n",
            "    // NEGATIVE: the sum is not checked.\n",
        );
        let found = unlocated(&fixed, &copy, &no_renames());
        assert_eq!(
            found,
            vec![Unlocated {
                line: 11,
                side: Side::Removed,
                text: "fn guard() {}".to_string(),
            }]
        );
        assert_eq!(found[0].to_string(), "lacks `fn guard() {}`");
    }

    // A line changed away from every block is reported, on the copy's line.
    #[test]
    fn a_change_outside_every_block_is_reported() {
        let copy = CORRECT
            .replace("use std::fmt;", "use std::fmt::Write;")
            .replace("    check(sum);\n", "    // NEGATIVE: unchecked.\n");
        let found = unlocated(CORRECT, &copy, &no_renames());
        let lines: Vec<(usize, Side)> = found.iter().map(|u| (u.line, u.side)).collect();
        assert_eq!(lines, vec![(2, Side::Removed), (2, Side::Added)]);
    }

    // A declared rename is no change; an undeclared one is.
    #[test]
    fn only_declared_renames_are_excused() {
        let copy = CORRECT
            .replace("pub struct Engine;", "pub struct Broken;")
            .replace("    check(sum);\n", "    // NEGATIVE: unchecked.\n");
        assert_eq!(unlocated(CORRECT, &copy, &no_renames()).len(), 2);
        let renames = BTreeMap::from([("Engine".to_string(), "Broken".to_string())]);
        assert_eq!(unlocated(CORRECT, &copy, &renames), vec![]);
    }

    // Renaming replaces whole words only.
    #[test]
    fn rename_replaces_whole_words() {
        let renames = BTreeMap::from([("Engine".to_string(), "Broken".to_string())]);
        assert_eq!(
            rename("impl Engine for EngineX (Engine)", &renames),
            "impl Broken for EngineX (Broken)"
        );
    }
}
