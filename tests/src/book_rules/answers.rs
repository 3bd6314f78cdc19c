//! Convention 6: a piece's answer appears only after the exercise that asks for it.
//!
//! A piece blanks function bodies of a correct file. A chapter that includes those lines in a
//! listing before `just exercise --blank <piece>` has shown the student the answer to copy. So
//! an include whose lines reach into a blanked body (its signature alone is fine) may stand only
//! inside a `<details>` answer, after the line that makes the piece's copy; no earlier chapter
//! may show them at all.

use std::path::{Path, PathBuf};

use crate::exercise::blank::{Piece, locate_body};

use super::{Include, Rule, Violation, chapter_number, violation};

/// The lines of one blanked body in its file, from 1: the lines strictly inside its braces.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The piece.
    pub piece: String,
    /// The chapter that asks for it.
    pub chapter: u32,
    /// The blanked function.
    pub function: String,
    /// The file, from the workspace root.
    pub source: PathBuf,
    /// The first and last line of the body's inside.
    pub lines: (usize, usize),
}

/// The answers of `pieces`, located in their sources.
pub fn answers(root: &Path, pieces: &[Piece]) -> Result<Vec<Answer>, String> {
    let mut found = Vec::new();
    for piece in pieces {
        let text = std::fs::read_to_string(root.join(&piece.source))
            .map_err(|error| format!("{}: {error}", piece.source.display()))?;
        for blank in &piece.blank {
            let body = locate_body(&text, &blank.function, blank.after.as_deref())
                .map_err(|error| format!("piece {}: {error}", piece.name))?;
            let line_of = |at: usize| text[..at].matches('\n').count() + 1;
            found.push(Answer {
                piece: piece.name.clone(),
                chapter: piece.chapter,
                function: blank.function.clone(),
                source: piece.source.clone(),
                lines: (line_of(body.start) + 1, line_of(body.end) - 1),
            });
        }
    }
    Ok(found)
}

/// Convention 6 on the page `file`, whose text is `text`.
pub fn early_answers(root: &Path, file: &Path, text: &str, answers: &[Answer]) -> Vec<Violation> {
    let Some(chapter) = chapter_number(file) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut in_details = false;
    let mut asked: Vec<&str> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        in_details =
            (in_details || trimmed.starts_with("<details>")) && !trimmed.starts_with("</details>");
        for answer in answers {
            if line.contains(&format!("just exercise --blank {}", answer.piece)) {
                asked.push(&answer.piece);
            }
        }
        let Some(include) = Include::parse(line) else {
            continue;
        };
        let Ok(shown) = include.shown(root) else {
            continue; // convention 2 names an include that does not resolve
        };
        for answer in answers.iter().filter(|answer| answer.chapter >= chapter) {
            let reaches = include.resolved() == answer.source
                && (shown.iter()).any(|(at, _)| (answer.lines.0..=answer.lines.1).contains(at));
            let allowed =
                answer.chapter == chapter && in_details && asked.contains(&&*answer.piece);
            if reaches && !allowed {
                let message = format!(
                    "shows the body of `{}`, the answer to piece {} (chapter {}), before its \
                     exercise asks for it: include it only in a <details> answer after \
                     `just exercise --blank {}`",
                    answer.function, answer.piece, answer.chapter, answer.piece
                );
                found.push(violation(file, index + 1, Rule::Answers, message));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exercise::blank::pieces;

    fn said(text: &str) -> Vec<String> {
        let root = crate::workspace_root();
        let pieces = pieces(&root).unwrap();
        let answers = answers(&root, &pieces).unwrap();
        let page = Path::new("docs/src/ch01-example.md");
        let found = early_answers(&root, page, text, &answers);
        found.into_iter().map(|v| v.message).collect()
    }

    const APPLY: &str = "{{#include ../../crates/retrykey/src/store.rs:apply}}";
    const STATE: &str = "{{#include ../../crates/retrykey/src/store.rs:state}}";

    #[test]
    fn an_answer_before_its_exercise_is_refused() {
        let found = said(&format!("Read it:\n\n```rust\n{APPLY}\n```\n"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("piece store-apply"), "{found:?}");
        let hidden_too_early = format!("<details>\n\n```rust\n{APPLY}\n```\n\n</details>\n");
        assert_eq!(said(&hidden_too_early).len(), 1);
        let open_after = format!("just exercise --blank store-apply\n\n```rust\n{APPLY}\n```\n");
        assert_eq!(said(&open_after).len(), 1);
    }

    #[test]
    fn an_answer_in_details_after_its_exercise_and_other_lines_pass() {
        let page = format!(
            "```rust\n{STATE}\n```\n\n$ just exercise --blank store-apply\n\n<details>\n\n\
             ```rust\n{APPLY}\n```\n\n</details>\n"
        );
        assert_eq!(said(&page), Vec::<String>::new());
    }
}
