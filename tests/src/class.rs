//! The class: its pages in reading order, each page's track, and the exercises it asks for.
//!
//! `docs/src/class.toml` declares the pages; `tests/blanks.toml` declares the pieces to write,
//! each under its chapter. `just class-plan` and `just progress` both read the class from here,
//! so the plan and a student's progress always list the same work.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::exercise::blank::{Piece, pieces};
use crate::exercise::error::ExerciseError;

/// The class declaration, from the workspace root.
pub const CLASS_FILE: &str = "docs/src/class.toml";

/// Whether a page belongs to the one class day or to a session of its own.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Track {
    /// The lab's promise: one class day.
    Core,
    /// A session that stands on the core, or on the one extension it names.
    Extension,
}

impl Track {
    /// The word a table shows.
    pub fn name(self) -> &'static str {
        match self {
            Track::Core => "core",
            Track::Extension => "extension",
        }
    }
}

/// One page of the class, as `docs/src/class.toml` declares it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Page {
    /// The short name a plan line shows: `ch01`.
    pub label: String,
    /// The Markdown file, under `docs/src`.
    pub file: PathBuf,
    /// Core or extension.
    pub track: Track,
    /// The one extension page this one stands on, besides the core.
    #[serde(default)]
    pub needs: Option<String>,
    /// The variants the page asks a student to make green (`just exercise VARIANT`).
    pub exercises: Vec<String>,
}

impl Page {
    /// The chapter number of a `chNN` label, the key of its pieces in `tests/blanks.toml`.
    pub fn chapter(&self) -> Option<u32> {
        self.label.strip_prefix("ch")?.parse().ok()
    }
}

/// The pace of one student, one figure per kind of work: every assumption of the plan
/// (`crate::plan`), stated under `[pace]` so that a teacher can change one and rerun.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pace {
    /// Prose words read a minute.
    pub words_per_minute: f64,
    /// Listing lines (included or written) read a minute.
    pub listing_lines_per_minute: f64,
    /// Minutes to type one command and see it finish.
    pub command_minutes: f64,
    /// Minutes to read one line of a command's shown output.
    pub output_line_minutes: f64,
    /// Minutes to answer one Predict question on paper and check it.
    pub predict_question_minutes: f64,
    /// Minutes of a piece besides its lines: the spec, the copy, the checks.
    pub piece_fixed_minutes: f64,
    /// Minutes per line of a piece's reference bodies.
    pub piece_line_minutes: f64,
    /// Minutes of a make-it-green exercise besides its lines: the README, the failing check.
    pub variant_fixed_minutes: f64,
    /// Minutes per line of a variant's `// NEGATIVE:` blocks.
    pub variant_line_minutes: f64,
    /// Minutes per numbered item of a page's "Exercises" section.
    pub written_exercise_minutes: f64,
}

/// What the class must fit, in minutes of the plan.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Frame {
    /// The core track: one class day.
    pub core_minutes: u64,
    /// Each extension page: one session of its own.
    pub extension_minutes: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassFile {
    page: Vec<Page>,
    frame: Frame,
    pace: Pace,
}

/// The class: its pages in order, every piece to write, and the pace the plan assumes.
#[derive(Clone, Debug)]
pub struct Class {
    /// The pages, in reading order.
    pub pages: Vec<Page>,
    /// Every piece of `tests/blanks.toml`.
    pub pieces: Vec<Piece>,
    /// The pace of `[pace]`.
    pub pace: Pace,
    /// The frame of `[frame]`.
    pub frame: Frame,
}

impl Class {
    /// The chapter of the page that asks a student to make `variant` green, if one does.
    pub fn chapter_of_exercise(&self, variant: &str) -> Option<u32> {
        (self.pages.iter())
            .find(|page| page.exercises.iter().any(|name| name == variant))
            .and_then(Page::chapter)
    }

    /// The pieces a page asks a student to write, in their declared order.
    pub fn pieces_of<'a>(&'a self, page: &Page) -> impl Iterator<Item = &'a Piece> + 'a {
        let chapter = page.chapter();
        self.pieces
            .iter()
            .filter(move |piece| Some(piece.chapter) == chapter)
    }
}

impl Class {
    /// The one sentence that says which chapters are the class day and which are sessions of
    /// their own. README.md, the introduction, Before class and the instructor guide each hold
    /// it word for word (`TRACK_PAGES`), so the tracks can change only here and in the pages
    /// together.
    pub fn tracks_sentence(&self) -> String {
        let numbers = |track: Track| -> Vec<&Page> {
            let of_track = self.pages.iter().filter(move |page| page.track == track);
            of_track.filter(|page| page.chapter().is_some()).collect()
        };
        let core: Vec<u32> = numbers(Track::Core)
            .iter()
            .filter_map(|p| p.chapter())
            .collect();
        let extensions: Vec<String> = numbers(Track::Extension)
            .iter()
            .map(|page| {
                let number = page.chapter().unwrap_or_default();
                match page
                    .needs
                    .as_deref()
                    .and_then(|label| self.chapter_of(label))
                {
                    Some(needs) => format!("{number} (after {needs})"),
                    None => number.to_string(),
                }
            })
            .collect();
        format!(
            "The core track is {}, one class day; {} an extension session of its own.",
            chapters(&core),
            match extensions.as_slice() {
                [] => "no chapter is".to_string(),
                [one] => format!("chapter {one} is"),
                [init @ .., last] => format!("chapters {} and {last} are each", init.join(", ")),
            }
        )
    }

    fn chapter_of(&self, label: &str) -> Option<u32> {
        let page = self.pages.iter().find(|page| page.label == label)?;
        page.chapter()
    }
}

/// The chapter a variant belongs to: the page that asks for it, or else its stage's chapter (of
/// the same number), as the stages table of `ARCHITECTURE.md` (held equal to the book's) gives it.
pub fn chapter_of_variant(root: &Path, class: Option<&Class>, variant: &str) -> Option<u32> {
    if let Some(chapter) = class.and_then(|class| class.chapter_of_exercise(variant)) {
        return Some(chapter);
    }
    let stage = crate::declared(variant).ok()?.stage;
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).ok()?;
    crate::tidy::first_chapter_of_stage(&map, stage)
}

/// The pages that state the tracks in `Class::tracks_sentence`'s words.
pub const TRACK_PAGES: [&str; 4] = [
    "README.md",
    "docs/src/introduction.md",
    "docs/src/before-class.md",
    "docs/src/instructor-guide.md",
];

/// `chapters 1 to 4` for a run of numbers, `chapters 1, 3 and 4` otherwise.
fn chapters(numbers: &[u32]) -> String {
    let run = numbers.windows(2).all(|pair| pair[1] == pair[0] + 1);
    match numbers {
        [] => "no chapter".to_string(),
        [one] => format!("chapter {one}"),
        [first, .., last] if run => format!("chapters {first} to {last}"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(u32::to_string).collect();
            format!("chapters {} and {last}", init.join(", "))
        }
    }
}

/// The pages of `TRACK_PAGES` that do not hold `sentence` (whitespace, line breaks included,
/// compared as single spaces).
pub fn pages_missing(root: &Path, sentence: &str) -> Vec<String> {
    let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let sentence = flat(sentence);
    TRACK_PAGES
        .iter()
        .filter(|page| {
            let text = std::fs::read_to_string(root.join(page)).unwrap_or_default();
            !flat(&text).contains(&sentence)
        })
        .map(|page| page.to_string())
        .collect()
}

/// Why the class declaration cannot be read, or does not hold together.
#[derive(Debug, thiserror::Error)]
pub enum ClassError {
    /// The file could not be read or parsed.
    #[error("{}: {reason}", path.display())]
    File {
        /// The declaration.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The pieces could not be read.
    #[error(transparent)]
    Pieces(#[from] ExerciseError),
    /// A page names something that is not there.
    #[error("{CLASS_FILE}: page {label}: {reason}")]
    Page {
        /// The page's label.
        label: String,
        /// What does not hold.
        reason: String,
    },
}

/// Reads the class from the workspace at `root`, and checks that every name in it exists.
pub fn load(root: &Path) -> Result<Class, ClassError> {
    let path = root.join(CLASS_FILE);
    let file_error = |reason: String| ClassError::File {
        path: path.clone(),
        reason,
    };
    let text = std::fs::read_to_string(&path).map_err(|error| file_error(error.to_string()))?;
    let file: ClassFile = toml::from_str(&text).map_err(|error| file_error(error.to_string()))?;
    let class = Class {
        pages: file.page,
        pieces: pieces(root)?,
        pace: file.pace,
        frame: file.frame,
    };
    validate(root, &class)?;
    Ok(class)
}

fn validate(root: &Path, class: &Class) -> Result<(), ClassError> {
    for (index, page) in class.pages.iter().enumerate() {
        let refuse = |reason: String| ClassError::Page {
            label: page.label.clone(),
            reason,
        };
        if !root.join("docs/src").join(&page.file).is_file() {
            return Err(refuse(format!("no page docs/src/{}", page.file.display())));
        }
        if class.pages[..index]
            .iter()
            .any(|other| other.label == page.label)
        {
            return Err(refuse("the label is used twice".into()));
        }
        if let Some(needs) = &page.needs {
            // A page stands only on what comes before it: no chapter needs a later one.
            let earlier = class.pages[..index]
                .iter()
                .find(|other| &other.label == needs);
            match earlier {
                Some(other) if other.track == Track::Extension => {}
                Some(_) => return Err(refuse(format!("needs {needs}, which is core already"))),
                None => return Err(refuse(format!("needs {needs}, no earlier page"))),
            }
        }
        for variant in &page.exercises {
            if !root.join("labs").join(variant).join("Cargo.toml").is_file() {
                return Err(refuse(format!("exercise {variant}: no labs/{variant}")));
            }
        }
    }
    if let Some(core_after) = class
        .pages
        .windows(2)
        .find(|pair| pair[0].track == Track::Extension && pair[1].track == Track::Core)
    {
        return Err(ClassError::Page {
            label: core_after[1].label.clone(),
            reason: "a core page after an extension: the core is read first".into(),
        });
    }
    for piece in &class.pieces {
        let declared = class
            .pages
            .iter()
            .any(|page| page.chapter() == Some(piece.chapter));
        if !declared {
            return Err(ClassError::Page {
                label: format!("ch{:02}", piece.chapter),
                reason: format!("piece {} has no page in the class", piece.name),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_class_holds_together() {
        let class = load(&crate::workspace_root()).expect("docs/src/class.toml is valid");
        let chapters = class.pages.iter().filter(|page| page.chapter().is_some());
        assert_eq!(chapters.count(), 8, "one page per chapter");
        assert!(class.pages.iter().any(|page| page.track == Track::Core));
    }

    #[test]
    fn every_track_page_states_the_tracks_of_the_declaration() {
        let root = crate::workspace_root();
        let class = load(&root).expect("docs/src/class.toml is valid");
        let sentence = class.tracks_sentence();
        let missing = pages_missing(&root, &sentence);
        assert!(missing.is_empty(), "{missing:?} do not say: {sentence}");
    }

    #[test]
    fn the_tracks_sentence_follows_the_pages() {
        let page = |label: &str, track: Track, needs: Option<&str>| Page {
            label: label.into(),
            file: PathBuf::from(format!("{label}.md")),
            track,
            needs: needs.map(str::to_string),
            exercises: vec![],
        };
        let mut class = Class {
            pages: vec![
                page("ch01", Track::Core, None),
                page("ch02", Track::Core, None),
                page("ch03", Track::Extension, None),
                page("ch04", Track::Extension, Some("ch03")),
            ],
            pieces: vec![],
            pace: load(&crate::workspace_root()).unwrap().pace,
            frame: Frame {
                core_minutes: 0,
                extension_minutes: 0,
            },
        };
        assert_eq!(
            class.tracks_sentence(),
            "The core track is chapters 1 to 2, one class day; chapters 3 and 4 (after 3) \
             are each an extension session of its own."
        );
        class.pages[1].track = Track::Extension;
        assert!(
            class
                .tracks_sentence()
                .starts_with("The core track is chapter 1, ")
        );
        assert_eq!(chapters(&[1, 3, 4]), "chapters 1, 3 and 4");
    }
}
