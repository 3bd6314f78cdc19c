//! The class: its pages in reading order, each page's track, and the exercises it asks for.
//!
//! `docs/src/class.toml` declares the pages; `tests/blanks.toml` declares the pieces to write,
//! each under its chapter. `just class-plan` and `just progress` both read the class from here,
//! so the plan and a student's progress always list the same work.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::exercise::blank::{Kind, Piece, pieces};
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
    /// The pieces and exercises of the page that a class does at home: the page's session
    /// does not hold them.
    #[serde(default)]
    pub take_home: Vec<String>,
}

impl Page {
    /// The chapter number of a `chNN` label, the key of its pieces in `tests/blanks.toml`.
    pub fn chapter(&self) -> Option<u32> {
        self.label.strip_prefix("ch")?.parse().ok()
    }
}

/// One pace figure and where it comes from: a published study or a measured trial, in one
/// line that starts `published:` or `measured:`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    /// The figure, in the unit its name gives.
    pub value: f64,
    /// Where it comes from.
    pub source: String,
}

/// The pace of one student, one figure per kind of reading and writing: every assumption of
/// the plan (`crate::plan`), stated under `[pace]` with its source, so that a teacher can
/// replace one with a trial of their own and rerun.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pace {
    /// Prose read to learn from it, in words a minute.
    pub prose_words_per_minute: Figure,
    /// Code read closely (a listing, the API a piece uses, a variant's function), in lines a
    /// minute.
    pub code_lines_per_minute: Figure,
    /// A command's output scanned for the lines the page points at, in words a minute.
    pub output_words_per_minute: Figure,
    /// A command typed from the page, in words (five characters) a minute.
    pub typing_words_per_minute: Figure,
    /// An answer composed (Predict, an exercise on paper), in words a minute.
    pub composing_words_per_minute: Figure,
    /// Waiting for one command of a prepared tree, in seconds.
    pub command_wait_seconds: Figure,
    /// The first build of a copy after `just prepare`, with its first check, in seconds.
    pub first_build_seconds: Figure,
    /// Writing one line of plain code to a spec and its checks, in minutes.
    pub plain_line_minutes: Figure,
    /// Writing one line of code that shares state between threads, in minutes.
    pub concurrent_line_minutes: Figure,
    /// Writing one line of async code, in minutes.
    pub async_line_minutes: Figure,
}

impl Pace {
    /// Every figure with its name in `[pace]`, in declaration order.
    pub fn figures(&self) -> [(&'static str, &Figure); 10] {
        [
            ("prose_words_per_minute", &self.prose_words_per_minute),
            ("code_lines_per_minute", &self.code_lines_per_minute),
            ("output_words_per_minute", &self.output_words_per_minute),
            ("typing_words_per_minute", &self.typing_words_per_minute),
            (
                "composing_words_per_minute",
                &self.composing_words_per_minute,
            ),
            ("command_wait_seconds", &self.command_wait_seconds),
            ("first_build_seconds", &self.first_build_seconds),
            ("plain_line_minutes", &self.plain_line_minutes),
            ("concurrent_line_minutes", &self.concurrent_line_minutes),
            ("async_line_minutes", &self.async_line_minutes),
        ]
    }

    /// Minutes per written line of code of `kind`.
    pub fn line_minutes(&self, kind: Kind) -> f64 {
        match kind {
            Kind::Plain => self.plain_line_minutes.value,
            Kind::Concurrent => self.concurrent_line_minutes.value,
            Kind::Async => self.async_line_minutes.value,
        }
    }
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

    /// The one sentence that says which work goes home, page by page. The instructor guide holds
    /// it word for word, and each page marks the sections of its take-home work
    /// (`TAKE_HOME_MARK`).
    pub fn take_home_sentence(&self) -> String {
        let work: Vec<String> = (self.pages.iter())
            .filter(|page| !page.take_home.is_empty())
            .map(|page| {
                let names: Vec<String> = page.take_home.iter().map(|n| format!("`{n}`")).collect();
                let label = match page.chapter() {
                    Some(chapter) => format!("chapter {chapter}"),
                    None => page.label.clone(),
                };
                format!("{} ({label})", names.join(" and "))
            })
            .collect();
        match work.as_slice() {
            [] => "Every session holds all of its pieces and exercises.".to_string(),
            [one] => format!("Take-home work, which no session holds: {one}."),
            [init @ .., last] => format!(
                "Take-home work, which no session holds: {} and {last}.",
                init.join(", ")
            ),
        }
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

/// What opens the section of a piece or an exercise that its page's session does not hold.
pub const TAKE_HOME_MARK: &str = "**Take-home.**";

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
    /// A pace figure has no source, or no sensible value.
    #[error("{CLASS_FILE}: pace {name}: {reason}")]
    Pace {
        /// The figure's name under `[pace]`.
        name: String,
        /// What does not hold.
        reason: String,
    },
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
        for name in &page.take_home {
            let piece = class.pieces_of(page).any(|piece| &piece.name == name);
            if !piece && !page.exercises.contains(name) {
                return Err(refuse(format!(
                    "take_home {name}: neither a piece of the page nor one of its exercises"
                )));
            }
        }
    }
    for (name, figure) in class.pace.figures() {
        let sourced = ["published: ", "measured: "]
            .iter()
            .any(|kind| figure.source.starts_with(kind));
        let positive = figure.value.is_finite() && figure.value > 0.0;
        if !sourced || figure.source.contains('\n') || !positive {
            return Err(ClassError::Pace {
                name: name.to_string(),
                reason: "needs a positive value and a one-line source that starts \
                         `published: ` or `measured: `"
                    .into(),
            });
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
        assert_eq!(chapters.count(), 9, "one page per chapter");
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

    // The guide says which work goes home; each page marks that work's section, and only it.
    #[test]
    fn take_home_work_is_named_by_the_guide_and_marked_on_its_page() {
        let root = crate::workspace_root();
        let class = load(&root).expect("docs/src/class.toml is valid");
        let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        let guide = std::fs::read_to_string(root.join("docs/src/instructor-guide.md")).unwrap();
        let sentence = class.take_home_sentence();
        assert!(
            flat(&guide).contains(&flat(&sentence)),
            "the guide does not say: {sentence}"
        );
        for page in &class.pages {
            let text = std::fs::read_to_string(root.join("docs/src").join(&page.file)).unwrap();
            let work = (class.pieces_of(page).map(|piece| &piece.name)).chain(&page.exercises);
            for name in work {
                let starts = [format!("--blank {name}"), format!("just exercise {name}")];
                let section = sections(&text)
                    .into_iter()
                    .find(|section| starts.iter().any(|start| section.contains(start.as_str())))
                    .unwrap_or_else(|| panic!("{}: no section makes a copy of {name}", page.label));
                let marked = section.contains(TAKE_HOME_MARK);
                let home = page.take_home.contains(name);
                assert_eq!(
                    marked, home,
                    "{}: {name}: take-home {home}, marked {marked}",
                    page.label
                );
            }
        }
    }

    // A page names the change of its exercise's variant only after the exercise: before it, a
    // table row says "find it yourself", and no diff or listing of the copy is shown.
    #[test]
    fn no_page_explains_its_exercise_before_asking_it() {
        let root = crate::workspace_root();
        let class = load(&root).expect("docs/src/class.toml is valid");
        for page in &class.pages {
            let text = std::fs::read_to_string(root.join("docs/src").join(&page.file)).unwrap();
            for name in &page.exercises {
                let asked = text
                    .find(&format!("just exercise {name}"))
                    .unwrap_or_else(|| panic!("{}: no `just exercise {name}`", page.label));
                let before = &text[..asked];
                let row = format!("| `{name}` |");
                for line in before.lines().filter(|line| line.starts_with(&row)) {
                    let change = line[row.len()..].split('|').next().unwrap_or("").trim();
                    assert_eq!(
                        change, "the exercise below: find it yourself",
                        "{}: the table names the change of {name} before its exercise",
                        page.label
                    );
                }
                for shown in [
                    format!("just diff {name}"),
                    format!("labs/{name}/src/lib.rs"),
                ] {
                    assert!(
                        !before.contains(&shown),
                        "{}: `{shown}` before the exercise asks for {name}",
                        page.label
                    );
                }
            }
        }
    }

    /// A page cut at each `## ` and `### ` heading.
    fn sections(text: &str) -> Vec<String> {
        let mut found = vec![String::new()];
        for line in text.lines() {
            if line.starts_with("## ") || line.starts_with("### ") {
                found.push(String::new());
            }
            let last = found.last_mut().expect("one section at least");
            last.push_str(line);
            last.push('\n');
        }
        found
    }

    // A figure without a source, or with a source of another kind, is refused.
    #[test]
    fn every_pace_figure_names_its_source() {
        let root = crate::workspace_root();
        let mut class = load(&root).expect("docs/src/class.toml is valid");
        assert!(validate(&root, &class).is_ok());
        class.pace.plain_line_minutes.source = "about right".into();
        let refused = validate(&root, &class);
        assert!(
            matches!(&refused, Err(ClassError::Pace { name, .. }) if name == "plain_line_minutes"),
            "{refused:?}"
        );
        class.pace.plain_line_minutes.source = "measured: a trial\nover two lines".into();
        assert!(validate(&root, &class).is_err());
    }

    #[test]
    fn the_tracks_sentence_follows_the_pages() {
        let page = |label: &str, track: Track, needs: Option<&str>| Page {
            label: label.into(),
            file: PathBuf::from(format!("{label}.md")),
            track,
            needs: needs.map(str::to_string),
            exercises: vec![],
            take_home: vec![],
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
