//! `just progress`: where a student stands. Every piece and exercise of the class, by chapter
//! and track, as not started, how many of its checks pass, or fixed; then the next step.
//!
//! A student's copy is found by the origin its manifest records (`[package.metadata.exercise]`,
//! written by `just exercise`), not by its folder, so a copy made `--as NAME` counts. Folders
//! named `book-*` are the book's own copies (the walkthrough makes and removes them) and are
//! never read. Each started copy's test program is built (all in one cargo run, into the target
//! folder) and run once, in a folder under the target folder: the copy itself is only read.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::cargo_test::cargo;
use crate::class::{Class, Track};
use crate::declared::{Declared, parse_manifest};
use crate::exercise::blank::{Piece, locate_body};
use crate::exercise::spec::{passed_in_order, taught_by, what_it_said, whole_command};
use crate::exercise::{EXERCISES_DIR, ExerciseError};
use crate::test_output::TestRun;

/// The prefix of the book's own copies, which are never a student's.
pub const BOOK_PREFIX: &str = "book-";

/// How long one copy's whole test program may run before its unfinished checks count as failed.
pub const RUN_TIME_LIMIT: Duration = Duration::from_secs(180);

/// What a class item is: a piece to write, or a variant to fix.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    /// `just exercise --blank PIECE`.
    Piece(String),
    /// `just exercise VARIANT`.
    Variant(String),
}

impl Origin {
    /// The command that starts it.
    pub fn start_command(&self) -> String {
        match self {
            Origin::Piece(name) => format!("just exercise --blank {name}"),
            Origin::Variant(name) => format!("just exercise {name}"),
        }
    }

    fn name(&self) -> &str {
        match self {
            Origin::Piece(name) | Origin::Variant(name) => name,
        }
    }
}

/// One failing check: its name and what it said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failing {
    /// `module::check`.
    pub check: String,
    /// The first lines of its panic, or why it did not run.
    pub said: String,
}

/// Where one item stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// No copy under `exercises/`.
    NotStarted,
    /// The copy (folder name) does not compile; the first error.
    DoesNotCompile(String, String),
    /// The copy's checks ran: how many pass of how many, and the failing ones in order.
    Counted {
        /// The copy's folder name.
        copy: String,
        /// Checks that passed.
        passed: usize,
        /// Checks counted.
        total: usize,
        /// Checks that did not pass, in teaching (or declared) order.
        failing: Vec<Failing>,
    },
}

impl Status {
    /// Every check passed.
    pub fn fixed(&self) -> bool {
        matches!(self, Status::Counted { failing, .. } if failing.is_empty())
    }

    /// The words a line shows.
    pub fn words(&self) -> String {
        match self {
            Status::NotStarted => "not started".into(),
            Status::DoesNotCompile(copy, _) => format!("does not compile (exercises/{copy})"),
            Status::Counted { copy, total, .. } if self.fixed() => {
                format!("fixed: all {total} checks pass (exercises/{copy})")
            }
            Status::Counted {
                copy,
                passed,
                total,
                ..
            } => format!("{passed} of {total} checks pass (exercises/{copy})"),
        }
    }

    /// How far along: a better copy of the same item is the one shown.
    fn rank(&self) -> (usize, usize) {
        match self {
            Status::NotStarted => (0, 0),
            Status::DoesNotCompile(..) => (1, 0),
            Status::Counted { passed, .. } => (2 + usize::from(self.fixed()), *passed),
        }
    }
}

/// One item of the class with its status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The page's label (`ch01`).
    pub page: String,
    /// Its track.
    pub track: Track,
    /// The extension page it stands on, if any.
    pub needs: Option<String>,
    /// The piece or variant.
    pub origin: Origin,
    /// Whether the class does it at home (`take_home` in `docs/src/class.toml`).
    pub take_home: bool,
    /// Where it stands.
    pub status: Status,
}

/// A folder under `exercises/` that is no copy of a class item: what it says it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Other {
    /// The folder name.
    pub copy: String,
    /// Its recorded origin, or why none could be read.
    pub what: String,
}

/// Where the student stands: every item in class order, and the other folders.
#[derive(Clone, Debug)]
pub struct Survey {
    /// Items in class order (core first; pieces of a page before its exercises).
    pub entries: Vec<Entry>,
    /// Folders that are not copies of class items.
    pub others: Vec<Other>,
    /// The pieces, for hints.
    pieces: Vec<Piece>,
    /// Each item's copy folder, for hints.
    dirs: BTreeMap<String, PathBuf>,
}

/// The copies under `<root>/exercises`, by origin; folders of no class origin go to `others`.
fn find_copies(root: &Path) -> (BTreeMap<Origin, Vec<String>>, Vec<Other>) {
    let mut copies: BTreeMap<Origin, Vec<String>> = BTreeMap::new();
    let mut others = Vec::new();
    let Ok(entries) = std::fs::read_dir(root.join(EXERCISES_DIR)) else {
        return (copies, others);
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.') && !name.starts_with(BOOK_PREFIX))
        .collect();
    names.sort();
    for name in names {
        let manifest = root.join(EXERCISES_DIR).join(&name).join("Cargo.toml");
        let parsed = std::fs::read_to_string(&manifest)
            .map_err(|error| error.to_string())
            .and_then(|text| parse_manifest(&text));
        let origin = match parsed {
            Ok(manifest) => match (manifest.blank, manifest.copied_from) {
                (Some(piece), _) => Ok(Origin::Piece(piece)),
                (None, Some(variant)) => Ok(Origin::Variant(variant)),
                _ => Err("records no origin".to_string()),
            },
            Err(reason) => Err(format!("no readable Cargo.toml: {reason}")),
        };
        match origin {
            Ok(origin) => copies.entry(origin).or_default().push(name),
            Err(what) => others.push(Other { copy: name, what }),
        }
    }
    (copies, others)
}

/// Surveys the copies of the workspace at `root` against `class`. `env` goes to cargo and the
/// test programs (a target folder, say).
pub fn survey(root: &Path, class: &Class, env: &[(&str, &str)]) -> Result<Survey, ExerciseError> {
    let (mut copies, mut others) = find_copies(root);
    let mut items = Vec::new();
    for page in &class.pages {
        let origins = (class
            .pieces_of(page)
            .map(|piece| Origin::Piece(piece.name.clone())))
        .chain(page.exercises.iter().cloned().map(Origin::Variant));
        items.extend(origins.map(|origin| (page, origin)));
    }
    let started: Vec<String> = (items.iter())
        .flat_map(|(_, origin)| copies.get(origin).into_iter().flatten().cloned())
        .collect();
    let built = build(root, &started, env)?;
    let mut survey = Survey {
        entries: Vec::new(),
        others: Vec::new(),
        pieces: class.pieces.clone(),
        dirs: BTreeMap::new(),
    };
    for (page, origin) in items {
        let mut status = Status::NotStarted;
        for copy in copies.remove(&origin).unwrap_or_default() {
            let dir = root.join(EXERCISES_DIR).join(&copy);
            let found = match built.get(&copy) {
                Some(Ok(program)) => count(root, class, &origin, &copy, program, env)?,
                Some(Err(error)) => Status::DoesNotCompile(copy.clone(), error.clone()),
                None => Status::DoesNotCompile(copy.clone(), "cargo built nothing".into()),
            };
            if found.rank() > status.rank() {
                survey.dirs.insert(origin.name().to_string(), dir);
                status = found;
            }
        }
        survey.entries.push(Entry {
            page: page.label.clone(),
            track: page.track,
            needs: page.needs.clone(),
            take_home: page.take_home.iter().any(|name| name == origin.name()),
            origin,
            status,
        });
    }
    for (origin, names) in copies {
        let what = match origin {
            Origin::Piece(name) => format!("a copy of the piece {name}, not in the class"),
            Origin::Variant(name) => format!("a copy of the variant {name}, not in the class"),
        };
        others.extend(names.into_iter().map(|copy| Other {
            copy,
            what: what.clone(),
        }));
    }
    others.sort_by(|a, b| a.copy.cmp(&b.copy));
    survey.others = others;
    Ok(survey)
}

/// The target folder cargo builds into, for `env` and the workspace at `root`.
fn target_dir(root: &Path, env: &[(&str, &str)]) -> PathBuf {
    let given = (env.iter().find(|(key, _)| *key == "CARGO_TARGET_DIR"))
        .map(|(_, value)| PathBuf::from(value))
        .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from));
    given.unwrap_or_else(|| root.join("target"))
}

/// Builds the `it` test program of every copy in `copies` in one cargo run, going on past a
/// copy that does not compile. Each copy gets its program, or its first error.
fn build(
    root: &Path,
    copies: &[String],
    env: &[(&str, &str)],
) -> Result<BTreeMap<String, Result<PathBuf, String>>, ExerciseError> {
    let mut result = BTreeMap::new();
    if copies.is_empty() {
        return Ok(result);
    }
    // Held for the whole build: see `crate::CARGO`.
    let _turn = crate::cargo_turn();
    let mut command = Command::new(cargo());
    command
        .current_dir(root)
        .args(["test", "--no-run", "--no-fail-fast", "-q"])
        .arg("--message-format=json-diagnostic-short")
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"));
    for copy in copies {
        command.args(["-p", &crate::exercise::package_name(copy), "--test", "it"]);
    }
    let output = (command.envs(env.iter().copied()).stdin(Stdio::null()))
        .output()
        .map_err(ExerciseError::Cargo)?;
    let by_manifest: BTreeMap<PathBuf, &String> = (copies.iter())
        .map(|copy| (root.join(EXERCISES_DIR).join(copy).join("Cargo.toml"), copy))
        .collect();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let manifest = PathBuf::from(message["manifest_path"].as_str().unwrap_or_default());
        let Some(copy) = by_manifest.get(&manifest) else {
            continue;
        };
        if message["reason"] == "compiler-artifact" && message["profile"]["test"] == true {
            if let Some(program) = message["executable"].as_str() {
                result.insert((*copy).clone(), Ok(PathBuf::from(program)));
            }
        } else if message["reason"] == "compiler-message"
            && message["message"]["level"] == "error"
            && !result.contains_key(*copy)
        {
            let rendered = message["message"]["rendered"]
                .as_str()
                .unwrap_or("an error");
            result.insert((*copy).clone(), Err(rendered.trim().to_string()));
        }
    }
    let unbuilt: Vec<String> = (copies.iter())
        .filter(|copy| !result.contains_key(*copy))
        .cloned()
        .collect();
    if !output.status.success() && copies.len() > 1 && !unbuilt.is_empty() {
        // Cargo stops at the first copy that does not compile: the others on their own.
        for copy in unbuilt {
            result.extend(build(root, std::slice::from_ref(&copy), env)?);
        }
        return Ok(result);
    }
    if result.is_empty() && !output.status.success() {
        // Cargo stopped before building anything: a manifest it cannot read, say.
        let said = String::from_utf8_lossy(&output.stderr);
        let first = said.lines().find(|line| !line.trim().is_empty());
        for copy in copies {
            let reason = first.unwrap_or("cargo failed").to_string();
            result.insert(copy.clone(), Err(reason));
        }
    }
    Ok(result)
}

/// Runs `program` once, whole, in a folder of its own under the target folder, within
/// [`RUN_TIME_LIMIT`]; returns what it printed.
fn run_program(program: &Path, work: &Path, env: &[(&str, &str)]) -> Result<String, ExerciseError> {
    std::fs::create_dir_all(work).map_err(|source| ExerciseError::Io {
        path: work.to_path_buf(),
        source,
    })?;
    let mut child = Command::new(program)
        .current_dir(work)
        .arg("--color=never")
        .env("RUST_BACKTRACE", "0")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(ExerciseError::Cargo)?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + RUN_TIME_LIMIT;
    while child.try_wait().map_err(ExerciseError::Cargo)?.is_none() {
        if Instant::now() >= deadline {
            // Stopped by its own id; the checks that never reported count as failed.
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(out.join().unwrap_or_default() + &err.join().unwrap_or_default())
}

/// The checks an item counts, in order: a piece's spec, then the program's other checks; a
/// variant's declared checks (loom models too), then any other check that failed.
fn checks_of(class: &Class, origin: &Origin, run: &TestRun) -> Vec<String> {
    let reported: BTreeSet<&String> = run.ran.iter().chain(&run.ignored).collect();
    match origin {
        Origin::Piece(name) => {
            let spec: Vec<String> = (class.pieces.iter())
                .filter(|piece| &piece.name == name)
                .flat_map(|piece| piece.spec.iter().map(|spec| spec.check.clone()))
                .collect();
            let chapter = (class.pieces.iter())
                .find(|piece| &piece.name == name)
                .map(|piece| piece.chapter);
            let taught = |check: &&String| chapter.is_none_or(|chapter| taught_by(chapter, check));
            let further = (reported.into_iter())
                .filter(|check| !spec.contains(check))
                .filter(taught);
            let further: Vec<String> = further.cloned().collect();
            spec.into_iter().chain(further).collect()
        }
        Origin::Variant(name) => {
            // The variant's declaration, as the copy's brief listed it.
            let declared: Option<Declared> = crate::declared(name).ok();
            let Some(declared) = declared else {
                return run.failed.iter().cloned().collect();
            };
            // An exercise of an earlier chapter leaves a later chapter's checks out.
            let root = crate::workspace_root();
            let chapter = crate::class::chapter_of_variant(&root, Some(class), name);
            let taught = |check: &&String| chapter.is_none_or(|chapter| taught_by(chapter, check));
            let named: Vec<String> = (declared.must_fail.iter())
                .chain(&declared.loom_must_fail)
                .filter(taught)
                .cloned()
                .collect();
            let others = (run.failed.iter())
                .filter(|check| !named.contains(check))
                .filter(taught);
            let others: Vec<String> = others.cloned().collect();
            named.into_iter().chain(others).collect()
        }
    }
}

/// Runs a copy's program once and counts its checks.
fn count(
    root: &Path,
    class: &Class,
    origin: &Origin,
    copy: &str,
    program: &Path,
    env: &[(&str, &str)],
) -> Result<Status, ExerciseError> {
    let work = target_dir(root, env).join("progress").join(copy);
    let output = run_program(program, &work, env)?;
    let run = TestRun::parse(&output);
    let checks = checks_of(class, origin, &run);
    let mut failing = Vec::new();
    for check in &checks {
        let said = if run.ran.contains(check) && !run.failed.contains(check) {
            continue;
        } else if run.failed.contains(check) {
            what_it_said(section(&output, check), &whole_command(copy, check))
        } else if let Some(reason) = run.ignored_because.get(check) {
            format!("skipped here: {reason}")
        } else if run.ignored.contains(check) {
            "skipped here: ignored by the test program".to_string()
        } else if output.contains(&format!("{check}: test")) || run.listed.contains(check) {
            "did not run".to_string()
        } else {
            format!(
                "did not report within {} s, or is missing: just check-exercise {copy}",
                RUN_TIME_LIMIT.as_secs()
            )
        };
        failing.push(Failing {
            check: check.clone(),
            said,
        });
    }
    let passed = passed_in_order(
        (checks.iter()).map(|check| !failing.iter().any(|failing| &failing.check == check)),
    );
    Ok(Status::Counted {
        copy: copy.to_string(),
        passed,
        total: checks.len(),
        failing,
    })
}

/// The part of a test program's output that a failed check's stdout section holds.
fn section<'a>(output: &'a str, check: &str) -> &'a str {
    let head = format!("---- {check} stdout ----");
    let Some(at) = output.find(&head) else {
        return "";
    };
    let rest = &output[at + head.len()..];
    let end = [rest.find("\n---- "), rest.find("\nfailures:\n")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rest.len());
    &rest[..end]
}

impl Survey {
    /// The first item in class order that is not fixed.
    pub fn next(&self) -> Option<&Entry> {
        self.entries.iter().find(|entry| !entry.status.fixed())
    }

    /// The hint of the first blank of `piece` whose body in the copy is still `todo!()`, or of
    /// every blank once none is.
    fn hints(&self, piece: &str) -> Vec<String> {
        let Some(piece) = self.pieces.iter().find(|p| p.name == piece) else {
            return Vec::new();
        };
        let file = match &piece.own {
            Some(own) => format!("src/{}.rs", own.module),
            None => "src/lib.rs".to_string(),
        };
        let source = (self.dirs.get(&piece.name))
            .and_then(|dir| std::fs::read_to_string(dir.join(file)).ok())
            .unwrap_or_default();
        let hint = |blank: &crate::exercise::blank::Blank| {
            format!("fn {}: {}", blank.function, blank.hint)
        };
        let open = piece.blank.iter().find(|blank| {
            locate_body(&source, &blank.function, blank.after.as_deref())
                .is_ok_and(|body| source[body].contains("todo!("))
        });
        match open {
            Some(blank) => vec![hint(blank)],
            None => piece.blank.iter().map(hint).collect(),
        }
    }

    /// The next step, as printed.
    pub fn render_next(&self) -> String {
        let Some(entry) = self.next() else {
            return "next: nothing: every piece and exercise of the class is fixed\n".into();
        };
        let (kind, name) = match &entry.origin {
            Origin::Piece(name) => ("piece", name),
            Origin::Variant(name) => ("exercise", name),
        };
        let mut out = format!("next: the {kind} {name} of {}\n", entry.page);
        match &entry.status {
            Status::NotStarted => {
                out.push_str(&format!("  start it: {}\n", entry.origin.start_command()));
            }
            Status::DoesNotCompile(copy, error) => {
                out.push_str(&format!("  exercises/{copy} does not compile: {error}\n"));
                out.push_str(&format!(
                    "  the compiler's messages: just check-exercise {copy}\n"
                ));
            }
            Status::Counted { copy, failing, .. } => {
                let first = &failing[0];
                out.push_str(&format!("  make it pass: {}\n", first.check));
                if let Origin::Piece(piece) = &entry.origin {
                    let expects = (self.pieces.iter().filter(|p| &p.name == piece))
                        .flat_map(|p| &p.spec)
                        .find(|spec| spec.check == first.check);
                    if let Some(spec) = expects {
                        out.push_str(&format!("  expects: {}\n", spec.expects));
                    }
                }
                for line in first.said.lines() {
                    out.push_str(&format!("  it said: {line}\n"));
                }
                match &entry.origin {
                    Origin::Piece(piece) => {
                        // A `todo!()` says its hint already.
                        let said = first.said.replace('\n', " ");
                        for hint in self.hints(piece) {
                            let text = hint.split_once(": ").map_or(hint.as_str(), |(_, h)| h);
                            if said.contains(text) {
                                continue;
                            }
                            out.push_str(&format!("  hint: {hint}\n"));
                        }
                    }
                    Origin::Variant(_) => {
                        out.push_str(&format!("  read: exercises/{copy}/README.md\n"));
                    }
                }
                out.push_str(&format!("  then: just check-exercise {copy}\n"));
            }
        }
        out
    }

    /// The whole report: one line per item under its chapter, other folders, the next step.
    pub fn render(&self) -> String {
        let width = (self.entries.iter())
            .map(|entry| entry.origin.name().len())
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        let mut page = "";
        for entry in &self.entries {
            if entry.page != page {
                page = &entry.page;
                let needs =
                    (entry.needs.as_ref()).map_or(String::new(), |on| format!(" (needs {on})"));
                out.push_str(&format!("{page}  {}{needs}\n", entry.track.name()));
            }
            let (kind, name) = match &entry.origin {
                Origin::Piece(name) => ("piece", name),
                Origin::Variant(name) => ("exercise", name),
            };
            let home = if entry.take_home { " (take-home)" } else { "" };
            out.push_str(&format!(
                "  {kind:<8}  {name:<width$}  {}{home}\n",
                entry.status.words()
            ));
        }
        for other in &self.others {
            out.push_str(&format!(
                "not counted: exercises/{} ({})\n",
                other.copy, other.what
            ));
        }
        out.push('\n');
        out.push_str(&self.render_next());
        out
    }
}

/// What the watch compares: every file under `exercises/` but the book's copies, with its size
/// and modification time.
pub fn fingerprint(root: &Path) -> BTreeMap<PathBuf, (u64, Option<SystemTime>)> {
    fn walk(dir: &Path, into: &mut BTreeMap<PathBuf, (u64, Option<SystemTime>)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() {
                walk(&path, into);
            }
            into.insert(path, (meta.len(), meta.modified().ok()));
        }
    }
    let mut found = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(root.join(EXERCISES_DIR)) else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(BOOK_PREFIX) && !name.starts_with('.') {
            walk(&entry.path(), &mut found);
            found.insert(entry.path(), (0, None));
        }
    }
    found
}

/// Sleeps `interval` between looks until `look` returns something other than `before`: the
/// watch polls, and never spins while nothing changes. Returns how many looks it took.
pub fn wait_for_change<T: PartialEq>(
    before: &T,
    interval: Duration,
    mut look: impl FnMut() -> T,
) -> usize {
    let mut looks = 0;
    loop {
        std::thread::sleep(interval);
        looks += 1;
        if look() != *before {
            return looks;
        }
    }
}
