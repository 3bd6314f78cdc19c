//! The class plan: each page's minutes, computed from what the page holds at the stated pace.
//!
//! `docs/src/class.toml` declares the pages and, under `[pace]`, every assumption; this module
//! measures each page (prose words, listing lines, commands and their output, Predict questions,
//! written exercises) and the work it asks for (each piece's reference bodies, each variant's
//! `// NEGATIVE:` blocks), and prices them. Nothing is typed per chapter, so the plan follows the
//! pages as they change.

mod measure;

use std::path::{Path, PathBuf};

use crate::class::{Class, ClassError, Frame, Pace, Page, Track};
use crate::exercise::blank::{Piece, locate_body};
use crate::tidy::located::blocks;

pub use measure::{Content, measure};

/// Why a plan cannot be computed.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The class declaration does not hold.
    #[error(transparent)]
    Class(#[from] ClassError),
    /// A file could not be read.
    #[error("{}: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// An include directive does not resolve to lines.
    #[error("{}: `{directive}`: {reason}", page.display())]
    Include {
        /// The page holding it.
        page: PathBuf,
        /// The directive as written.
        directive: String,
        /// What does not resolve.
        reason: String,
    },
    /// A piece's blanked function cannot be found in its source.
    #[error("piece {piece}: {reason}")]
    Piece {
        /// The piece.
        piece: String,
        /// What went wrong.
        reason: String,
    },
    /// A variant has no `// NEGATIVE:` block to size it by.
    #[error("exercise {0}: no `// NEGATIVE:` block in labs/{0}/src/lib.rs")]
    NoBlocks(String),
}

/// One piece of work a page asks a student to do, with the lines it is sized by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Work {
    /// The piece or the variant.
    pub name: String,
    /// The lines the student writes or fixes.
    pub lines: usize,
}

/// One page of the plan: what it holds, and what it costs.
#[derive(Clone, Debug)]
pub struct PagePlan {
    /// The page, as declared.
    pub page: Page,
    /// What the page holds.
    pub content: Content,
    /// The pieces to write.
    pub pieces: Vec<Work>,
    /// The make-it-green exercises.
    pub variants: Vec<Work>,
}

/// Minutes of one kind of work on a page, with the word a breakdown shows.
pub type Part = (&'static str, f64);

impl PagePlan {
    /// The minutes of each kind of work, before rounding.
    pub fn parts(&self, pace: &Pace) -> Vec<Part> {
        let content = &self.content;
        let sized = |work: &[Work], fixed: f64, per_line: f64| {
            work.iter()
                .map(|work| fixed + per_line * work.lines as f64)
                // Plus zero: the sum of no work is -0.0, which would print as such.
                .sum::<f64>()
                + 0.0
        };
        vec![
            ("reading", content.words as f64 / pace.words_per_minute),
            (
                "listings",
                content.listing_lines as f64 / pace.listing_lines_per_minute,
            ),
            (
                "commands",
                content.commands as f64 * pace.command_minutes
                    + content.output_lines as f64 * pace.output_line_minutes,
            ),
            (
                "predict",
                content.predict_questions as f64 * pace.predict_question_minutes,
            ),
            (
                "pieces",
                sized(
                    &self.pieces,
                    pace.piece_fixed_minutes,
                    pace.piece_line_minutes,
                ),
            ),
            (
                "exercises",
                sized(
                    &self.variants,
                    pace.variant_fixed_minutes,
                    pace.variant_line_minutes,
                ) + content.written_exercises as f64 * pace.written_exercise_minutes,
            ),
        ]
    }

    /// The page's minutes, rounded up: a plan promises no less than it takes.
    pub fn minutes(&self, pace: &Pace) -> u64 {
        let sum: f64 = self.parts(pace).iter().map(|(_, minutes)| minutes).sum();
        sum.ceil() as u64
    }
}

/// The plan of the whole class.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The pace every page is priced at.
    pub pace: Pace,
    /// What the plan must fit.
    pub frame: Frame,
    /// The pages, in reading order.
    pub pages: Vec<PagePlan>,
}

impl Plan {
    /// The minutes of the pages of one track.
    pub fn track_minutes(&self, track: Track) -> u64 {
        self.pages
            .iter()
            .filter(|page| page.page.track == track)
            .map(|page| page.minutes(&self.pace))
            .sum()
    }

    /// What does not fit the frame: the core past its day, an extension past its session.
    pub fn overruns(&self) -> Vec<String> {
        let mut found = Vec::new();
        let core = self.track_minutes(Track::Core);
        if core > self.frame.core_minutes {
            found.push(format!("core {core} min > {} min", self.frame.core_minutes));
        }
        for page in &self.pages {
            let minutes = page.minutes(&self.pace);
            if page.page.track == Track::Extension && minutes > self.frame.extension_minutes {
                let limit = self.frame.extension_minutes;
                found.push(format!("{} {minutes} min > {limit} min", page.page.label));
            }
        }
        found
    }

    /// The minutes of every page.
    pub fn total_minutes(&self) -> u64 {
        self.pages.iter().map(|page| page.minutes(&self.pace)).sum()
    }
}

/// Computes the plan of the workspace at `root`.
pub fn plan(root: &Path) -> Result<Plan, PlanError> {
    let class = crate::class::load(root)?;
    let pages = class
        .pages
        .iter()
        .map(|page| page_plan(root, &class, page))
        .collect::<Result<_, _>>()?;
    Ok(Plan {
        pace: class.pace,
        frame: class.frame,
        pages,
    })
}

fn page_plan(root: &Path, class: &Class, page: &Page) -> Result<PagePlan, PlanError> {
    let file = root.join("docs/src").join(&page.file);
    let content = measure(root, &file, &read(&file)?)?;
    let pieces = class
        .pieces_of(page)
        .map(|piece| piece_work(root, piece))
        .collect::<Result<_, _>>()?;
    let variants = page
        .exercises
        .iter()
        .map(|variant| variant_work(root, variant))
        .collect::<Result<_, _>>()?;
    Ok(PagePlan {
        page: page.clone(),
        content,
        pieces,
        variants,
    })
}

/// A piece, sized by the lines of its blanked functions' reference bodies.
pub fn piece_work(root: &Path, piece: &Piece) -> Result<Work, PlanError> {
    let source = read(&root.join(&piece.source))?;
    let mut lines = 0;
    for blank in &piece.blank {
        let body =
            locate_body(&source, &blank.function, blank.after.as_deref()).map_err(|error| {
                PlanError::Piece {
                    piece: piece.name.clone(),
                    reason: error.to_string(),
                }
            })?;
        // The braces hold nothing the student writes.
        lines += code_lines(&source[body.start + 1..body.end - 1]);
    }
    Ok(Work {
        name: piece.name.clone(),
        lines,
    })
}

/// A make-it-green exercise, sized by the code lines of the variant's `// NEGATIVE:` blocks.
pub fn variant_work(root: &Path, variant: &str) -> Result<Work, PlanError> {
    let copy = read(&root.join("labs").join(variant).join("src/lib.rs"))?;
    let all: Vec<&str> = copy.lines().collect();
    let found = blocks(&copy);
    if found.is_empty() {
        return Err(PlanError::NoBlocks(variant.to_string()));
    }
    let lines = found
        .into_iter()
        .map(|block| code_lines(&all[block].join("\n")))
        .sum();
    Ok(Work {
        name: variant.to_string(),
        lines,
    })
}

/// Lines that hold code: neither blank, nor only a comment, nor only closing delimiters.
fn code_lines(text: &str) -> usize {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("//"))
        // A line that only closes what an earlier line opened (`}`, `});`) is not written
        // on its own: an editor or the line that opened it supplies it.
        .filter(|line| {
            !line
                .chars()
                .all(|c| matches!(c, '}' | ')' | ']' | ';' | ','))
        })
        .count()
}

fn read(path: &Path) -> Result<String, PlanError> {
    std::fs::read_to_string(path).map_err(|error| PlanError::Read {
        path: path.to_path_buf(),
        reason: error.to_string(),
    })
}

impl Plan {
    /// One line per page (`ch01  NN min`), then the core's minutes and the whole class's.
    /// With `parts`, each page line goes on with its track, and is followed by its minutes by
    /// kind of work (before rounding) and by each piece and exercise with the lines it is sized by.
    pub fn render(&self, parts: bool) -> String {
        let mut out = String::new();
        for page in &self.pages {
            let line = format!("{:<5} {:>3} min", page.page.label, page.minutes(&self.pace));
            if !parts {
                out += &format!("{line}\n");
                continue;
            }
            let shown: Vec<String> = (page.parts(&self.pace).iter())
                .map(|(kind, minutes)| format!("{kind} {minutes:.1}"))
                .collect();
            let track = match &page.page.needs {
                Some(needs) => format!("{} after {needs}", page.page.track.name()),
                None => page.page.track.name().to_string(),
            };
            out += &format!("{line}  {track}\n        {}\n", shown.join(", "));
            for (kind, work) in [("piece", &page.pieces), ("exercise", &page.variants)] {
                for work in work {
                    out += &format!("        {kind} {}: {} lines\n", work.name, work.lines);
                }
            }
        }
        out += &format!("core {} min\n", self.track_minutes(Track::Core));
        out += &format!("total {} min\n", self.total_minutes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pace() -> Pace {
        crate::class::load(&crate::workspace_root())
            .expect("docs/src/class.toml is valid")
            .pace
    }

    fn page(content: Content, pieces: Vec<Work>, variants: Vec<Work>) -> PagePlan {
        PagePlan {
            page: Page {
                label: "ch01".into(),
                file: PathBuf::from("ch01.md"),
                track: Track::Core,
                needs: None,
                exercises: vec![],
            },
            content,
            pieces,
            variants,
        }
    }

    #[test]
    fn each_kind_of_work_is_priced_at_its_pace_and_the_page_rounds_up() {
        let pace = pace();
        let content = Content {
            words: 300,
            listing_lines: 20,
            commands: 3,
            output_lines: 40,
            predict_questions: 2,
            written_exercises: 1,
        };
        let piece = Work {
            name: "p".into(),
            lines: 10,
        };
        let variant = Work {
            name: "v".into(),
            lines: 4,
        };
        let plan = page(content, vec![piece], vec![variant]);
        let parts = plan.parts(&pace);
        let expected = [
            300.0 / pace.words_per_minute,
            20.0 / pace.listing_lines_per_minute,
            3.0 * pace.command_minutes + 40.0 * pace.output_line_minutes,
            2.0 * pace.predict_question_minutes,
            pace.piece_fixed_minutes + 10.0 * pace.piece_line_minutes,
            pace.variant_fixed_minutes
                + 4.0 * pace.variant_line_minutes
                + pace.written_exercise_minutes,
        ];
        for ((kind, minutes), expected) in parts.iter().zip(expected) {
            assert!(
                (minutes - expected).abs() < 1e-9,
                "{kind}: {minutes} != {expected}"
            );
        }
        let sum: f64 = expected.iter().sum();
        assert_eq!(plan.minutes(&pace), sum.ceil() as u64);
        let empty = page(Content::default(), vec![], vec![]);
        assert_eq!(empty.minutes(&pace), 0);
    }

    // The core track fits one class day and each extension one session, by the plan.
    #[test]
    fn the_class_fits_its_frame() {
        let plan = plan(&crate::workspace_root()).expect("the plan computes");
        assert_eq!(
            plan.overruns(),
            Vec::<String>::new(),
            "{}",
            plan.render(true)
        );
        let mut tight = plan.clone();
        tight.frame.core_minutes = plan.track_minutes(Track::Core) - 1;
        tight.frame.extension_minutes = 1;
        let found = tight.overruns();
        assert!(found[0].starts_with("core "), "{found:?}");
        let extensions = (plan.pages.iter()).filter(|p| p.page.track == Track::Extension);
        assert_eq!(found.len(), 1 + extensions.count(), "{found:?}");
    }

    #[test]
    fn the_workspace_plan_prices_every_page_and_adds_up() {
        let plan = plan(&crate::workspace_root()).expect("the plan computes");
        assert!(plan.pages.iter().all(|page| page.minutes(&plan.pace) > 0));
        let core: u64 = (plan.pages.iter())
            .filter(|page| page.page.track == Track::Core)
            .map(|page| page.minutes(&plan.pace))
            .sum();
        assert_eq!(plan.track_minutes(Track::Core), core);
        let rendered = plan.render(false);
        assert_eq!(rendered.lines().count(), plan.pages.len() + 2, "{rendered}");
        assert!(rendered.ends_with(&format!("total {} min\n", plan.total_minutes())));
    }
}
