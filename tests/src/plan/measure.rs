//! What a page holds, counted the way a student meets it.
//!
//! - **Prose words**: every word outside a fenced block, answers inside `<details>` included
//!   (a student reads them to check their own).
//! - **Listing lines**: the lines of a fenced block that is not a console block, with each
//!   `{{#include …}}` counted as the lines mdBook shows in its place.
//! - **Commands**, the **characters** typed for them, and the **output words** read: a console
//!   block's `$ ` lines, and the words of the rest. In an answer every line is read, so a command
//!   there counts as output, and so does one in an `## Exercise` section, whose copy and checks
//!   the exercise's own minutes price.
//! - **Answer words**: the words of each answer a student is asked to write first: the
//!   `<details>` of a "Predict" or "Exercises" section, or one that follows a paragraph asking
//!   for a prediction. A question is priced by the answer it asks for, not by its question marks.

use std::path::Path;

use crate::book_rules::Include;

use super::PlanError;

/// The counts of one page, or of part of one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Content {
    /// Words of prose, answers included.
    pub words: usize,
    /// Lines of code, configuration or text shown outside console blocks.
    pub listing_lines: usize,
    /// Commands a student types (`$ ` lines of console blocks).
    pub commands: usize,
    /// Characters of those commands.
    pub typed_chars: usize,
    /// Words those commands print, as shown, and every word of a console block in an answer.
    pub output_words: usize,
    /// Words of the answers a student writes before reading them.
    pub answer_words: usize,
}

impl std::ops::AddAssign for Content {
    fn add_assign(&mut self, other: Content) {
        self.words += other.words;
        self.listing_lines += other.listing_lines;
        self.commands += other.commands;
        self.typed_chars += other.typed_chars;
        self.output_words += other.output_words;
        self.answer_words += other.answer_words;
    }
}

/// A page's counts, split between its session and the take-home work it marks: a section (`## `
/// or `### `) holding [`TAKE_HOME_MARK`](crate::class::TAKE_HOME_MARK) is read and done at home.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measured {
    /// What the page's session holds.
    pub session: Content,
    /// What its take-home sections hold.
    pub home: Content,
}

/// Counts the page `text` (the file `file`, under the workspace `root`), its take-home sections
/// apart.
pub fn measure_page(root: &Path, file: &Path, text: &str) -> Result<Measured, PlanError> {
    let mut measured = Measured::default();
    let mut section = Section::Other;
    for chunk in sections(text) {
        let content = measure_in(root, file, chunk, section)?;
        // A `### ` part stays in the section of the `## ` heading above it.
        if let Some(heading) = chunk.strip_prefix("## ") {
            section = Section::of(heading.lines().next().unwrap_or_default());
        }
        if chunk.contains(crate::class::TAKE_HOME_MARK) {
            measured.home += content;
        } else {
            measured.session += content;
        }
    }
    Ok(measured)
}

/// `text` cut before each `## ` or `### ` heading outside a fenced block.
fn sections(text: &str) -> Vec<&str> {
    let mut cuts = vec![0];
    let mut fenced = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && offset > 0 && (line.starts_with("## ") || line.starts_with("### ")) {
            cuts.push(offset);
        }
        offset += line.len();
    }
    cuts.push(text.len());
    cuts.windows(2)
        .map(|pair| &text[pair[0]..pair[1]])
        .collect()
}

/// The section a line belongs to, by its `## ` heading.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    /// Questions answered before running anything, or numbered exercises on paper.
    Asked,
    /// A make-it-green or write-it-yourself section: `## Exercise: ...`.
    Exercise,
    Other,
}

impl Section {
    fn of(heading: &str) -> Section {
        match heading.trim() {
            "Predict" | "Exercises" => Section::Asked,
            exercise if exercise.starts_with("Exercise") => Section::Exercise,
            _ => Section::Other,
        }
    }
}

/// Where a line stands with respect to `<details>`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    Outside,
    /// An answer the student writes first, then reads.
    Asked,
    /// An answer only read (a piece's solution, a note).
    Read,
}

/// Counts the page `text` (the file `file`, under the workspace `root`), whole.
pub fn measure(root: &Path, file: &Path, text: &str) -> Result<Content, PlanError> {
    measure_in(root, file, text, Section::Other)
}

/// Counts `text`, which starts in `section`.
fn measure_in(
    root: &Path,
    file: &Path,
    text: &str,
    mut section: Section,
) -> Result<Content, PlanError> {
    let mut content = Content::default();
    let mut fence: Option<String> = None;
    let mut answer = Answer::Outside;
    // Whether the last paragraph before an answer asked for a prediction.
    let mut asks = false;
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
                let typed = answer == Answer::Outside && section != Section::Exercise;
                match trimmed.strip_prefix("$ ") {
                    Some(command) if typed => {
                        content.commands += 1;
                        content.typed_chars += command.trim().chars().count();
                    }
                    _ => content.output_words += line.split_whitespace().count(),
                }
            }
            Some(_) => content.listing_lines += listing_lines(root, file, line)?,
            None => {
                if let Some(heading) = trimmed.strip_prefix("## ") {
                    section = Section::of(heading);
                    answer = Answer::Outside;
                    asks = false;
                }
                if trimmed.starts_with("<details>") {
                    answer = if section == Section::Asked || asks {
                        Answer::Asked
                    } else {
                        Answer::Read
                    };
                } else if trimmed.starts_with("</details>") {
                    answer = Answer::Outside;
                    asks = false;
                }
                if Include::parse(line).is_some() {
                    content.listing_lines += listing_lines(root, file, line)?;
                    continue;
                }
                let count = words(line);
                content.words += count;
                if answer == Answer::Asked {
                    content.answer_words += count;
                } else if answer == Answer::Outside && count > 0 {
                    asks = line.contains("Predict");
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
pub(crate) fn words(line: &str) -> usize {
    line.split_whitespace()
        .filter(|token| !token.starts_with('<') || !token.ends_with('>'))
        .filter(|token| token.chars().any(char::is_alphanumeric))
        .count()
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
                    ```console\n$ just test\nok now\n[exit: 1]\n$ just again\n```\n";
        let content = counted(page);
        assert_eq!(content.words, 1 + 4, "{content:?}");
        assert_eq!(content.listing_lines, 3, "{content:?}");
        assert_eq!(
            (content.commands, content.typed_chars, content.output_words),
            (2, "just test".len() + "just again".len(), 4),
            "{content:?}"
        );
        assert_eq!(content.answer_words, 0);
    }

    #[test]
    fn an_asked_answer_is_priced_by_its_words_and_a_solution_is_only_read() {
        let page = "## Predict\n\nWhich fails? Which passes?\n\n<details>\n<summary>Answer</summary>\n\n\
                    One two three.\n\n</details>\n\n## Run\n\nPredict the output, then run it.\n\n\
                    <details>\n\nFour five.\n\n</details>\n\nA plain paragraph.\n\n<details>\n\n\
                    Not asked.\n\n</details>\n\n## Exercises\n\n1. Change it.\n\n<details>\n\n\
                    Six.\n\n</details>\n";
        let content = counted(page);
        // `<summary>Answer</summary>` is markup, no word.
        assert_eq!(content.answer_words, 3 + 2 + 1, "{content:?}");
    }

    #[test]
    fn a_take_home_section_is_counted_apart_with_its_parts() {
        let page = "# T\n\nOne two.\n\n## Exercise: at home\n\n**Take-home.** Three.\n\n\
                    ```console\n$ just exercise x\nmade\n```\n\n### Write it yourself\n\n\
                    Four five.\n\n```console\n$ typed\n```\n\n## Summary\n\nSix.\n";
        let measured = measure_page(Path::new("."), Path::new("page.md"), page).unwrap();
        // The `### ` part holds no mark: it stays in the session, in its `## Exercise`
        // section, whose commands are the exercise's own.
        // Headings are prose too: `# T`, `### Write it yourself`, `## Summary`.
        assert_eq!(
            measured.session.words,
            (1 + 2) + (3 + 2) + (1 + 1),
            "{measured:?}"
        );
        assert_eq!(measured.session.commands, 0, "{measured:?}");
        assert_eq!(measured.session.output_words, 2, "{measured:?}");
        assert_eq!(measured.home.words, 3 + 2, "{measured:?}");
        assert_eq!(measured.home.output_words, 4 + 1, "{measured:?}");
        let whole = counted(page);
        let mut sum = measured.session;
        sum += measured.home;
        assert_eq!(sum, whole);
    }

    #[test]
    fn a_command_in_an_answer_is_read_not_typed() {
        let page = "```console\n$ typed\nout\n```\n<details>\n\n```console\n$ read\nout\n```\n\n</details>\n";
        let content = counted(page);
        assert_eq!(
            (content.commands, content.output_words),
            (1, 1 + 2 + 1),
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
            (content.commands, content.output_words),
            (2, 4 + 1),
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
