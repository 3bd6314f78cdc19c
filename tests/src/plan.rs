//! The class plan: each page's minutes, computed from what a student reads and writes on it, at
//! the stated pace.
//!
//! `docs/src/class.toml` declares the pages and, under `[pace]`, every figure with its source;
//! this module measures each page (prose words, listing lines, commands, their output, the
//! answers a student writes first) and the work it asks for: each piece's brief, the API and
//! primer sections it lists to read, and its written lines at the pace for its kind of code;
//! each variant's brief, the functions holding its bug, and the lines of the fix. Nothing is
//! typed per chapter, so the plan follows the pages and the code as they change.

mod measure;
mod reads;

use std::path::{Path, PathBuf};

use crate::class::{Class, ClassError, Frame, Pace, Page, Track};
use crate::exercise::blank::{Kind, Piece, locate_body};
use crate::tidy::located::blocks;

pub use measure::{Content, Measured, measure, measure_page};
pub use reads::Read;
use reads::{enclosing_function, read};

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
    /// A piece's declared read does not resolve.
    #[error("read `{read}`: {reason}")]
    Reads {
        /// The read, as declared.
        read: String,
        /// What does not resolve.
        reason: String,
    },
    /// A variant has no `// NEGATIVE:` block to size it by.
    #[error("exercise {0}: no `// NEGATIVE:` block in labs/{0}/src/lib.rs")]
    NoBlocks(String),
}

/// One piece of work a page asks a student to do: what they read, and what they write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Work {
    /// The piece or the variant.
    pub name: String,
    /// The kind of code written.
    pub kind: Kind,
    /// The lines the student writes or fixes.
    pub lines: usize,
    /// What the student reads first: the brief, then the declared reads.
    pub reads: Vec<Read>,
    /// Whether the class does it at home.
    pub take_home: bool,
}

impl Work {
    /// Minutes of reading.
    pub fn read_minutes(&self, pace: &Pace) -> f64 {
        (self.reads.iter())
            .map(|read| {
                read.code_lines as f64 / pace.code_lines_per_minute.value
                    + read.words as f64 / pace.prose_words_per_minute.value
            })
            .sum::<f64>()
            + 0.0
    }

    /// Minutes of writing.
    pub fn write_minutes(&self, pace: &Pace) -> f64 {
        self.lines as f64 * pace.line_minutes(self.kind)
    }

    /// Minutes of the whole work: reading, writing and the copy's first build.
    pub fn minutes(&self, pace: &Pace) -> f64 {
        self.read_minutes(pace) + self.write_minutes(pace) + pace.first_build_seconds.value / 60.0
    }
}

/// One page of the plan: what it holds, and what it costs.
#[derive(Clone, Debug)]
pub struct PagePlan {
    /// The page, as declared.
    pub page: Page,
    /// What the page's session holds.
    pub content: Content,
    /// What its take-home sections hold.
    pub home: Content,
    /// The pieces to write.
    pub pieces: Vec<Work>,
    /// The make-it-green exercises.
    pub variants: Vec<Work>,
}

/// Minutes of one kind of work on a page, with the word a breakdown shows.
pub type Part = (&'static str, f64);

/// Words a minute to minutes: a typed word is five characters.
const CHARS_PER_WORD: f64 = 5.0;

impl PagePlan {
    /// The minutes of each kind of work done in the page's session, before rounding.
    pub fn parts(&self, pace: &Pace) -> Vec<Part> {
        let in_class = |work: &[Work]| {
            (work.iter().filter(|work| !work.take_home))
                .map(|work| work.minutes(pace))
                // Plus zero: the sum of no work is -0.0, which would print as such.
                .sum::<f64>()
                + 0.0
        };
        let mut parts = content_parts(&self.content, pace);
        parts.push(("pieces", in_class(&self.pieces)));
        parts.push(("exercises", in_class(&self.variants)));
        parts
    }

    /// The page's session, rounded up: a plan promises no less than it takes.
    pub fn minutes(&self, pace: &Pace) -> u64 {
        let sum: f64 = self.parts(pace).iter().map(|(_, minutes)| minutes).sum();
        sum.ceil() as u64
    }

    /// The page's take-home work, rounded up: its take-home sections and their work.
    pub fn take_home_minutes(&self, pace: &Pace) -> u64 {
        let work = self.pieces.iter().chain(&self.variants);
        let sum: f64 = (work.filter(|work| work.take_home))
            .map(|work| work.minutes(pace))
            .sum::<f64>()
            + (content_parts(&self.home, pace).iter())
                .map(|(_, minutes)| minutes)
                .sum::<f64>();
        sum.ceil() as u64
    }
}

/// The minutes of what a page (or part of one) holds, by kind, before rounding.
fn content_parts(content: &Content, pace: &Pace) -> Vec<Part> {
    vec![
        (
            "prose",
            content.words as f64 / pace.prose_words_per_minute.value,
        ),
        (
            "listings",
            content.listing_lines as f64 / pace.code_lines_per_minute.value,
        ),
        (
            "commands",
            content.commands as f64 * pace.command_wait_seconds.value / 60.0
                + content.typed_chars as f64 / CHARS_PER_WORD / pace.typing_words_per_minute.value,
        ),
        (
            "output",
            content.output_words as f64 / pace.output_words_per_minute.value,
        ),
        (
            "answers",
            content.answer_words as f64 / pace.composing_words_per_minute.value,
        ),
    ]
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
    /// The minutes of the sessions of one track's pages.
    pub fn track_minutes(&self, track: Track) -> u64 {
        self.pages
            .iter()
            .filter(|page| page.page.track == track)
            .map(|page| page.minutes(&self.pace))
            .sum()
    }

    /// The minutes of all take-home work.
    pub fn take_home_minutes(&self) -> u64 {
        (self.pages.iter())
            .map(|page| page.take_home_minutes(&self.pace))
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

    /// The minutes of every session and of the take-home work.
    pub fn total_minutes(&self) -> u64 {
        let sessions: u64 = self.pages.iter().map(|page| page.minutes(&self.pace)).sum();
        sessions + self.take_home_minutes()
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
    let measured = measure_page(root, &file, &read_file(&file)?)?;
    let at_home = |name: &str| page.take_home.iter().any(|home| home == name);
    let pieces = class
        .pieces_of(page)
        .map(|piece| piece_work(root, piece, at_home(&piece.name)))
        .collect::<Result<_, _>>()?;
    let variants = page
        .exercises
        .iter()
        .map(|variant| variant_work(root, variant, at_home(variant)))
        .collect::<Result<_, _>>()?;
    Ok(PagePlan {
        page: page.clone(),
        content: measured.session,
        home: measured.home,
        pieces,
        variants,
    })
}

/// A piece: its brief and declared reads, then the lines of its blanked functions' reference
/// bodies, written at the pace of its kind.
pub fn piece_work(root: &Path, piece: &Piece, take_home: bool) -> Result<Work, PlanError> {
    let source = read_file(&root.join(&piece.source))?;
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
    let brief = crate::exercise::blank::brief(piece, &piece.name);
    let mut reads = vec![brief_read(root, &brief)?];
    for declared in &piece.reads {
        reads.push(read(root, declared)?);
    }
    Ok(Work {
        name: piece.name.clone(),
        kind: piece.kind,
        lines,
        reads,
        take_home,
    })
}

/// A make-it-green exercise: its brief, the functions that hold its `// NEGATIVE:` blocks, read
/// whole, and the code lines of those blocks, written as plain code.
pub fn variant_work(root: &Path, variant: &str, take_home: bool) -> Result<Work, PlanError> {
    let path = root.join("labs").join(variant).join("src/lib.rs");
    let copy = read_file(&path)?;
    let all: Vec<&str> = copy.lines().collect();
    let found = blocks(&copy);
    if found.is_empty() {
        return Err(PlanError::NoBlocks(variant.to_string()));
    }
    let (_, brief) =
        crate::exercise::copy_texts(&root.join("labs"), variant, variant).map_err(|error| {
            PlanError::Read {
                path: path.clone(),
                reason: error.to_string(),
            }
        })?;
    let mut reads = vec![brief_read(root, &brief)?];
    let mut functions: Vec<std::ops::Range<usize>> = Vec::new();
    for block in &found {
        if let Some(function) = enclosing_function(&copy, *block.start()..*block.end() + 1)
            && !functions.contains(&function)
        {
            functions.push(function);
        }
    }
    for function in functions {
        let shown = all[function.clone()]
            .iter()
            .filter(|line| !line.trim().is_empty() && !line.trim_start().starts_with("// NEGATIVE"))
            .count();
        reads.push(Read {
            what: format!("labs/{variant}/src/lib.rs:{}", function.start + 1),
            code_lines: shown,
            words: 0,
        });
    }
    let lines = found
        .into_iter()
        .map(|block| code_lines(&all[block].join("\n")))
        .sum();
    Ok(Work {
        name: variant.to_string(),
        kind: Kind::Plain,
        lines,
        reads,
        take_home,
    })
}

/// A brief, read as prose with its listings.
fn brief_read(root: &Path, brief: &str) -> Result<Read, PlanError> {
    let content = measure(root, Path::new("README.md"), brief)?;
    Ok(Read {
        what: "the brief".into(),
        code_lines: content.listing_lines,
        words: content.words,
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

/// `1 line`, `2 lines`.
fn lines(count: usize) -> String {
    match count {
        1 => "1 line".into(),
        count => format!("{count} lines"),
    }
}

fn read_file(path: &Path) -> Result<String, PlanError> {
    std::fs::read_to_string(path).map_err(|error| PlanError::Read {
        path: path.to_path_buf(),
        reason: error.to_string(),
    })
}

impl Plan {
    /// One line per page (`ch01  NN min`, its session), then the core's minutes, the take-home
    /// work's and the whole class's. With `parts`, each page line goes on with its track, and is
    /// followed by its minutes by kind of work (before rounding) and by each piece and exercise
    /// with what it reads and writes; the pace and its sources close the plan.
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
            let mut track = match &page.page.needs {
                Some(needs) => format!("{} after {needs}", page.page.track.name()),
                None => page.page.track.name().to_string(),
            };
            let home = page.take_home_minutes(&self.pace);
            if home > 0 {
                track += &format!(", take-home {home} min");
            }
            out += &format!("{line}  {track}\n        {}\n", shown.join(", "));
            for (kind, work) in [("piece", &page.pieces), ("exercise", &page.variants)] {
                for work in work {
                    out += &self.render_work(kind, work);
                }
            }
        }
        out += &format!("core {} min\n", self.track_minutes(Track::Core));
        out += &format!("take-home {} min\n", self.take_home_minutes());
        out += &format!("total {} min\n", self.total_minutes());
        if parts {
            out += "pace (docs/src/class.toml):\n";
            for (name, figure) in self.pace.figures() {
                out += &format!("  {name} {}: {}\n", figure.value, figure.source);
            }
        }
        out
    }

    fn render_work(&self, kind: &str, work: &Work) -> String {
        let pace = &self.pace;
        let place = if work.take_home { ", take-home" } else { "" };
        let mut out = format!(
            "        {kind} {} ({}{place}): {:.1} min\n",
            work.name,
            work.kind.name(),
            work.minutes(pace)
        );
        for read in &work.reads {
            let size = match (read.code_lines, read.words) {
                (0, words) => format!("{words} words"),
                (code, 0) => lines(code),
                (code, words) => format!("{words} words, {}", lines(code)),
            };
            out += &format!("          reads {}: {size}\n", read.what);
        }
        out += &format!(
            "          writes {}: {:.1} min; reads {:.1} min; first build {} s\n",
            lines(work.lines),
            work.write_minutes(pace),
            work.read_minutes(pace),
            pace.first_build_seconds.value
        );
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
                take_home: vec![],
            },
            content,
            home: Content::default(),
            pieces,
            variants,
        }
    }

    fn work(name: &str, kind: Kind, lines: usize, take_home: bool) -> Work {
        Work {
            name: name.into(),
            kind,
            lines,
            reads: vec![Read {
                what: "x.rs#X".into(),
                code_lines: 12,
                words: 100,
            }],
            take_home,
        }
    }

    #[test]
    fn each_kind_of_work_is_priced_at_its_pace_and_the_page_rounds_up() {
        let pace = pace();
        let content = Content {
            words: 300,
            listing_lines: 20,
            commands: 3,
            typed_chars: 40,
            output_words: 120,
            answer_words: 50,
        };
        let piece = work("p", Kind::Async, 10, false);
        let variant = work("v", Kind::Plain, 4, false);
        let plan = page(content, vec![piece], vec![variant]);
        let parts = plan.parts(&pace);
        let read =
            12.0 / pace.code_lines_per_minute.value + 100.0 / pace.prose_words_per_minute.value;
        let build = pace.first_build_seconds.value / 60.0;
        let expected = [
            300.0 / pace.prose_words_per_minute.value,
            20.0 / pace.code_lines_per_minute.value,
            3.0 * pace.command_wait_seconds.value / 60.0
                + 40.0 / 5.0 / pace.typing_words_per_minute.value,
            120.0 / pace.output_words_per_minute.value,
            50.0 / pace.composing_words_per_minute.value,
            read + 10.0 * pace.async_line_minutes.value + build,
            read + 4.0 * pace.plain_line_minutes.value + build,
        ];
        for ((kind, minutes), expected) in parts.iter().zip(expected) {
            assert!(
                (minutes - expected).abs() < 1e-9,
                "{kind}: {minutes} != {expected}"
            );
        }
        let sum: f64 = expected.iter().sum();
        assert_eq!(plan.minutes(&pace), sum.ceil() as u64);
        assert_eq!(plan.take_home_minutes(&pace), 0);
        let empty = page(Content::default(), vec![], vec![]);
        assert_eq!(empty.minutes(&pace), 0);
    }

    #[test]
    fn take_home_work_leaves_the_session_and_counts_apart() {
        let pace = pace();
        let home = work("p", Kind::Plain, 10, true);
        let expected = home.minutes(&pace).ceil() as u64;
        let plan = page(Content::default(), vec![home], vec![]);
        assert_eq!(plan.minutes(&pace), 0);
        assert_eq!(plan.take_home_minutes(&pace), expected);
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
        assert_eq!(rendered.lines().count(), plan.pages.len() + 3, "{rendered}");
        // The parts show, for each piece, every read its brief lists and the lines it writes,
        // and every pace figure with its source.
        let parts = plan.render(true);
        let class = crate::class::load(&crate::workspace_root()).expect("the class loads");
        for piece in &class.pieces {
            let work = (plan.pages.iter().flat_map(|page| &page.pieces))
                .find(|work| work.name == piece.name)
                .expect("every piece is priced");
            assert!(
                parts.contains(&format!("piece {} (", piece.name)),
                "{parts}"
            );
            assert!(parts.contains(&format!("writes {}:", lines(work.lines))));
            for read in &piece.reads {
                assert!(
                    parts.contains(&format!("reads {read}: ")),
                    "{read}: {parts}"
                );
            }
        }
        for (name, figure) in plan.pace.figures() {
            assert!(parts.contains(&format!("{name} {}: {}", figure.value, figure.source)));
        }
        assert!(rendered.ends_with(&format!("total {} min\n", plan.total_minutes())));
    }
}
