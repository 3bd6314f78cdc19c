//! How a variant differs from the code it mirrors: a line diff, and where its changes lie.

use crate::{Declared, Error, read, workspace_root};

/// The comment that marks and explains a variant's one change.
pub const MARKER: &str = "// NEGATIVE:";

/// How every mirrored file begins: the labs that copy it follow (see labs/README.md).
pub const MIRRORED_BY: &str = "// Mirrored by";

/// The mirrored file and the variant's copy of it.
pub fn sources(name: &str, declared: &Declared) -> Result<(String, String), Error> {
    let root = workspace_root();
    let correct = read(root.join(&declared.mirrors))?;
    let variant = read(root.join("labs").join(name).join("src/lib.rs"))?;
    Ok((correct, variant))
}

/// One line of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// In both files.
    Same(&'a str),
    /// Only in the correct code.
    Removed(&'a str),
    /// Only in the variant.
    Added(&'a str),
}

/// The line diff from `correct` to `variant` (longest common subsequence of lines).
pub fn diff<'a>(correct: &'a str, variant: &'a str) -> Vec<Line<'a>> {
    let a: Vec<&str> = correct.lines().collect();
    let b: Vec<&str> = variant.lines().collect();
    // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut lines) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            lines.push(Line::Same(a[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            // Removals before additions, as `diff -u` prints them.
            lines.push(Line::Removed(a[i]));
            i += 1;
        } else {
            lines.push(Line::Added(b[j]));
            j += 1;
        }
    }
    lines
}

/// Lines added or removed, not counting comment lines (the `// NEGATIVE:` explanation).
pub fn changed_code_lines(lines: &[Line<'_>]) -> usize {
    lines
        .iter()
        .filter(|line| match line {
            Line::Same(_) => false,
            Line::Added(text) | Line::Removed(text) => {
                let text = text.trim();
                !text.is_empty() && !text.starts_with("//")
            }
        })
        .count()
}

/// The diff as text, `-` for removed and `+` for added lines, with `context` lines around.
pub fn render(lines: &[Line<'_>], context: usize) -> String {
    let near_change = |at: usize| {
        let lo = at.saturating_sub(context);
        let hi = (at + context + 1).min(lines.len());
        lines[lo..hi]
            .iter()
            .any(|line| !matches!(line, Line::Same(_)))
    };
    let mut out = String::new();
    let mut skipped = false;
    for (at, line) in lines.iter().enumerate() {
        if !near_change(at) {
            skipped = true;
            continue;
        }
        if skipped {
            out.push_str("  ...\n");
            skipped = false;
        }
        let (mark, text) = match line {
            Line::Same(text) => (' ', text),
            Line::Removed(text) => ('-', text),
            Line::Added(text) => ('+', text),
        };
        out.push_str(&format!("{mark} {text}\n"));
    }
    if skipped {
        out.push_str("  ...\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // A one-line change shows as one removal and one addition, nothing else.
    #[test]
    fn one_changed_line() {
        let lines = diff("a\nb\nc\n", "a\nx\nc\n");
        assert_eq!(
            lines,
            vec![
                Line::Same("a"),
                Line::Removed("b"),
                Line::Added("x"),
                Line::Same("c")
            ]
        );
        assert_eq!(changed_code_lines(&lines), 2);
    }

    // Comment lines do not count towards the size of a change.
    #[test]
    fn comments_do_not_count() {
        let lines = diff("a\nb\n", "a\n// NEGATIVE: why\nb\n");
        assert_eq!(changed_code_lines(&lines), 0);
        assert_eq!(render(&lines, 0), "  ...\n+ // NEGATIVE: why\n  ...\n");
    }
}
