//! What a page holds, counted the way a student meets it.
//!
//! - **Prose words**: every word outside a fenced block, answers inside `<details>` included
//!   (a student reads them to check their own).
//! - **Listing lines**: the lines of a fenced block that is not a console block, with each
//!   `{{#include …}}` counted as the lines mdBook shows in its place.
//! - **Commands** and their **output lines**: a console block's `$ ` lines, and the rest; in an
//!   answer every line is read, so a command there counts as an output line, and so does one in
//!   an `## Exercise` section, whose copy and checks the exercise's own minutes price.
//! - **Predict questions**: each question mark in a "Predict" section's prose, outside its
//!   answer, and each other sentence that asks for a prediction.
//! - **Written exercises**: each numbered item of an "Exercises" section.

use std::path::Path;

use crate::book_rules::Include;

use super::PlanError;

/// The counts of one page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Content {
    /// Words of prose, answers included.
    pub words: usize,
    /// Lines of code, configuration or text shown outside console blocks.
    pub listing_lines: usize,
    /// Commands a student types (`$ ` lines of console blocks).
    pub commands: usize,
    /// Lines those commands print, as shown, and every line of a console block in an answer.
    pub output_lines: usize,
    /// Questions asked before the answer is shown.
    pub predict_questions: usize,
    /// Numbered items of an "Exercises" section.
    pub written_exercises: usize,
}

/// The section a line belongs to, by its `## ` heading.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Predict,
    /// A make-it-green or write-it-yourself section: `## Exercise: ...`.
    Exercise,
    /// The numbered exercises on paper: `## Exercises`.
    Exercises,
    Other,
}

impl Section {
    fn of(heading: &str) -> Section {
        match heading.trim() {
            "Predict" => Section::Predict,
            "Exercises" => Section::Exercises,
            exercise if exercise.starts_with("Exercise") => Section::Exercise,
            _ => Section::Other,
        }
    }
}

/// Counts the page `text` (the file `file`, under the workspace `root`).
pub fn measure(root: &Path, file: &Path, text: &str) -> Result<Content, PlanError> {
    let mut content = Content::default();
    let mut fence: Option<String> = None;
    let mut section = Section::Other;
    let mut in_answer = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(info.trim().to_string()),
            };
            continue;
        }
        match &fence {
            Some(info) if info.starts_with("console") => {
                // In an answer a command is read, not typed; in an exercise the exercise's
                // own minutes price making the copy and running its checks.
                let typed = !in_answer && section != Section::Exercise;
                if trimmed.starts_with("$ ") && typed {
                    content.commands += 1;
                } else {
                    content.output_lines += 1;
                }
            }
            Some(_) => content.listing_lines += listing_lines(root, file, line)?,
            None => {
                if let Some(heading) = trimmed.strip_prefix("## ") {
                    section = Section::of(heading);
                    in_answer = false;
                }
                if trimmed.starts_with("<details>") {
                    in_answer = true;
                } else if trimmed.starts_with("</details>") {
                    in_answer = false;
                }
                if Include::parse(line).is_some() {
                    content.listing_lines += listing_lines(root, file, line)?;
                    continue;
                }
                content.words += words(line);
                if !in_answer {
                    content.predict_questions += match section {
                        Section::Predict => line.matches('?').count(),
                        _ => line.matches("Predict").count(),
                    };
                }
                if section == Section::Exercises && !in_answer && numbered(line) {
                    content.written_exercises += 1;
                }
            }
        }
    }
    Ok(content)
}

/// The lines a listing line shows: those of its include, or itself.
fn listing_lines(root: &Path, file: &Path, line: &str) -> Result<usize, PlanError> {
    let Some(include) = Include::parse(line) else {
        return Ok(1);
    };
    let shown = include.shown(root).map_err(|reason| PlanError::Include {
        page: file.to_path_buf(),
        directive: line.trim().to_string(),
        reason,
    })?;
    Ok(shown.len())
}

/// Words of a prose line: tokens holding a letter or a digit (markup alone is none).
fn words(line: &str) -> usize {
    line.split_whitespace()
        .filter(|token| !token.starts_with('<') || !token.ends_with('>'))
        .filter(|token| token.chars().any(char::is_alphanumeric))
        .count()
}

/// Whether a line opens a numbered list item (`1. `).
fn numbered(line: &str) -> bool {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && line[digits..].starts_with(". ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(text: &str) -> Content {
        measure(Path::new("."), Path::new("page.md"), text).unwrap()
    }

    #[test]
    fn prose_listings_and_commands_are_counted_apart() {
        let page = "# Title\n\nTwo words, then three-more.\n\n```rust\nfn a() {}\n\nfn b() {}\n```\n\n\
                    ```console\n$ just test\nok\n[exit: 1]\n$ just again\n```\n";
        let content = counted(page);
        assert_eq!(content.words, 1 + 4, "{content:?}");
        assert_eq!(content.listing_lines, 3, "{content:?}");
        assert_eq!(
            (content.commands, content.output_lines),
            (2, 2),
            "{content:?}"
        );
        assert_eq!(content.predict_questions, 0);
    }

    #[test]
    fn predict_counts_questions_before_the_answer_and_exercises_count_items() {
        let page = "## Predict\n\nWhich fails? Which passes?\n\n<details>\n<summary>Answer</summary>\n\n\
                    Why? Because.\n\n</details>\n\n## Run\n\nPredict the output, then run it.\n\n\
                    ## Exercises\n\n1. Change it.\n2. Run it again.\n   1. not an item at the top\n\
                    <details>\n\n1. An answer.\n\n</details>\n";
        let content = counted(page);
        assert_eq!(content.predict_questions, 2 + 1, "{content:?}");
        assert_eq!(content.written_exercises, 2, "{content:?}");
    }

    #[test]
    fn a_command_in_an_answer_is_read_not_typed() {
        let page = "```console\n$ typed\nout\n```\n<details>\n\n```console\n$ read\nout\n```\n\n</details>\n";
        let content = counted(page);
        assert_eq!(
            (content.commands, content.output_lines),
            (1, 3),
            "{content:?}"
        );
    }

    #[test]
    fn an_exercise_prices_its_own_commands() {
        let page = "## Run\n\n```console\n$ typed\n```\n\n## Exercise: write it\n\n\
                    ```console\n$ just exercise x\nmade\n```\n\n## Summary\n\n\
                    ```console\n$ typed\n```\n";
        let content = counted(page);
        assert_eq!(
            (content.commands, content.output_lines),
            (2, 2),
            "{content:?}"
        );
    }

    #[test]
    fn an_include_counts_the_lines_it_shows() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let page = "```toml\n{{#include class.toml:1:3}}\n```\n";
        assert_eq!(counted_at(root, page).listing_lines, 3);
        let missing = measure(
            root,
            Path::new("p.md"),
            "```rust\n{{#include nowhere.rs}}\n```\n",
        );
        assert!(
            matches!(missing, Err(PlanError::Include { .. })),
            "{missing:?}"
        );
    }

    fn counted_at(root: &Path, text: &str) -> Content {
        measure(root, Path::new("page.md"), text).unwrap()
    }
}
