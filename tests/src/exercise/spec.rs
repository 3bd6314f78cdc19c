//! A blank piece's checks as a progressive spec: built once, then run one at a time in teaching
//! order, stopping at the first that fails and saying what it expects.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::blank::Piece;
use super::{BuildError, ExerciseError};
use crate::cargo_test::cargo;
use crate::test_output::TestRun;

/// How long one check may run before it counts as failed (a body that never returns).
pub const CHECK_TIME_LIMIT: Duration = Duration::from_secs(120);

/// What one check did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It ran and passed.
    Passed,
    /// It ran and failed, with the first lines of what it said.
    Failed(String),
    /// It ran past [`CHECK_TIME_LIMIT`] and was stopped.
    TimedOut,
    /// The test program ignores it here (a PostgreSQL check without a server), with the reason.
    Ignored(String),
    /// The test program has no such check.
    Missing,
}

/// The outcome of `just check-exercise` on a blank piece.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The copy's folder, as shown.
    pub dir: PathBuf,
    /// The spec: each check with what it expects.
    pub spec: Vec<(String, String)>,
    /// The checks run so far, in order, with their verdicts; the last is the first that did not
    /// pass, if any did not.
    pub ran: Vec<(String, Verdict)>,
    /// Checks of the test program that the spec does not order (run after it).
    pub further: Vec<String>,
}

impl Progress {
    /// Every check of the spec and of the program ran and passed.
    pub fn fixed(&self) -> bool {
        self.ran.len() == self.spec.len() + self.further.len()
            && self
                .ran
                .iter()
                .all(|(_, verdict)| *verdict == Verdict::Passed)
    }

    /// The first check that did not pass, with its verdict.
    pub fn first_failure(&self) -> Option<&(String, Verdict)> {
        self.ran
            .iter()
            .find(|(_, verdict)| *verdict != Verdict::Passed)
    }

    /// The report as printed.
    pub fn render(&self) -> String {
        let total = self.spec.len() + self.further.len();
        let expects: BTreeMap<&str, &str> = (self.spec.iter())
            .map(|(check, expects)| (check.as_str(), expects.as_str()))
            .collect();
        let mut out = String::new();
        for (number, (check, verdict)) in self.ran.iter().enumerate() {
            let number = number + 1;
            let word = match verdict {
                Verdict::Passed => "ok",
                Verdict::Failed(_) => "FAILED",
                Verdict::TimedOut => "TIMED OUT",
                Verdict::Ignored(_) => "SKIPPED",
                Verdict::Missing => "MISSING",
            };
            out.push_str(&format!("{word:<9} {number:>2}/{total} {check}\n"));
            if *verdict == Verdict::Passed {
                continue;
            }
            if let Some(expects) = expects.get(check.as_str()) {
                out.push_str(&wrapped("expects: ", expects));
            }
            match verdict {
                Verdict::Failed(said) => {
                    for line in said.lines() {
                        out.push_str(&wrapped("it said: ", line));
                    }
                }
                Verdict::TimedOut => out.push_str(&wrapped(
                    "it ran longer than ",
                    &format!(
                        "{} s: a loop that never ends, or a lock that is never released?",
                        CHECK_TIME_LIMIT.as_secs()
                    ),
                )),
                Verdict::Ignored(reason) => out.push_str(&wrapped("ignored here: ", reason)),
                Verdict::Missing => out.push_str(&wrapped(
                    "missing: ",
                    "the test program has no such check: was tests/it changed?",
                )),
                Verdict::Passed => {}
            }
        }
        if self.fixed() {
            out.push_str(&format!("fixed: all {total} checks pass\n"));
        } else {
            let passed = passed_in_order(
                self.ran
                    .iter()
                    .map(|(_, verdict)| *verdict == Verdict::Passed),
            );
            out.push_str(&format!(
                "not fixed: {passed} of {total} checks pass; make check {} pass, then run this \
                 again\n",
                passed + 1
            ));
        }
        out
    }
}

/// The width the report keeps to, so it reads in a terminal and in the book without wrapping.
pub const WIDTH: usize = 80;

/// `text` after `label`, indented under the check's name and wrapped at [`WIDTH`] on spaces;
/// continuation lines start under the text. A word longer than a line stays whole.
fn wrapped(label: &str, text: &str) -> String {
    let indent = " ".repeat(10);
    let hanging = " ".repeat(10 + label.chars().count());
    let mut out = format!("{indent}{label}");
    let mut column = out.chars().count();
    let mut first = true;
    for word in text.split(' ') {
        let width = word.chars().count();
        if !first && column + 1 + width > WIDTH {
            out.push('\n');
            out.push_str(&hanging);
            column = hanging.len();
        } else if !first {
            out.push(' ');
            column += 1;
        }
        out.push_str(word);
        column += width;
        first = false;
    }
    out.push('\n');
    out
}

/// A test program built by cargo: the package's manifest and the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    /// The package's `Cargo.toml`.
    pub manifest: PathBuf,
    /// The test program (`tests/it`).
    pub program: PathBuf,
}

/// Builds the `it` test programs of `packages` of the workspace at `workspace` in one cargo
/// run, and returns each one's path by package name. The compiler's messages go to stderr.
pub fn build(
    workspace: &Path,
    packages: &[String],
    env: &[(&str, &str)],
) -> Result<BTreeMap<String, PathBuf>, BuildError> {
    // Held for the whole build: see `crate::CARGO`.
    let _turn = crate::cargo_turn();
    let mut command = Command::new(cargo());
    command
        .current_dir(workspace)
        .args([
            "test",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"));
    for package in packages {
        command.args(["-p", package, "--test", "it"]);
    }
    command.envs(env.iter().copied());
    command.stdin(Stdio::null()).stderr(Stdio::inherit());
    let output = command.output().map_err(BuildError::Cargo)?;
    let mut programs = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" || message["profile"]["test"] != true {
            continue;
        }
        let (Some(executable), Some(package_id)) = (
            message["executable"].as_str(),
            message["package_id"].as_str(),
        ) else {
            continue;
        };
        if let Some(package) = packages.iter().find(|p| package_id_names(package_id, p)) {
            programs.insert(package.clone(), PathBuf::from(executable));
        }
    }
    if !output.status.success() {
        return Err(BuildError::Compile);
    }
    for package in packages {
        if !programs.contains_key(package) {
            return Err(BuildError::NoProgram(package.clone()));
        }
    }
    Ok(programs)
}

/// Whether a cargo package id (`path+file:///…/x#name@0.1.0`, or `…/name#0.1.0`) is `name`'s.
pub(crate) fn package_id_names(id: &str, name: &str) -> bool {
    let Some((path, fragment)) = id.rsplit_once('#') else {
        return false;
    };
    match fragment.split_once('@') {
        Some((package, _)) => package == name,
        None => path.rsplit('/').next() == Some(name),
    }
}

/// The names of the tests of `program`, ignored ones included.
pub fn listing(program: &Path, dir: &Path) -> Result<Vec<String>, ExerciseError> {
    let output = Command::new(program)
        .current_dir(dir)
        .args(["--list", "--format", "terse"])
        .stdin(Stdio::null())
        .output()
        .map_err(ExerciseError::Cargo)?;
    let run = TestRun::parse(&String::from_utf8_lossy(&output.stdout));
    Ok(run.listed.into_iter().collect())
}

/// Runs one test of `program` on its own, within [`CHECK_TIME_LIMIT`].
fn run_one(program: &Path, dir: &Path, check: &str) -> Result<Verdict, ExerciseError> {
    let copy = dir.file_name().unwrap_or_default().to_string_lossy();
    let whole = whole_command(&copy, check);
    let mut child = Command::new(program)
        .current_dir(dir)
        .args(["--exact", check, "--test-threads=1", "--color=never"])
        // The panic message is what a student needs; a backtrace would bury it.
        .env("RUST_BACKTRACE", "0")
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
    let deadline = Instant::now() + CHECK_TIME_LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(ExerciseError::Cargo)? {
            break Some(status);
        }
        if Instant::now() >= deadline {
            // Stopped by its own id; the reader threads end with its pipes.
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let text = out.join().unwrap_or_default() + &err.join().unwrap_or_default();
    let Some(status) = status else {
        return Ok(Verdict::TimedOut);
    };
    let run = TestRun::parse(&text);
    if let Some(reason) = run.ignored_because.get(check) {
        return Ok(Verdict::Ignored(reason.clone()));
    }
    if run.ignored.contains(check) {
        return Ok(Verdict::Ignored("ignored by the test program".to_string()));
    }
    if status.success() && run.ran.contains(check) && !run.failed.contains(check) {
        return Ok(Verdict::Passed);
    }
    Ok(Verdict::Failed(what_it_said(&text, &whole)))
}

/// How many lines of a failed check's message a report shows whole; a longer one shows its
/// first [`SAID_HEAD`] and its last lines, and says how to see all of it.
pub const SAID_LINES: usize = 12;
/// The first lines a cut message keeps.
const SAID_HEAD: usize = 4;
/// A value longer than this many characters is shown by its two ends and its length.
pub const LONG_VALUE: usize = 60;

/// What a failed check said: its panic message, whole when it has at most [`SAID_LINES`] lines
/// (the last lines are where an assertion shows what differs, so they are never the ones cut),
/// else its first and last lines around one line that says how many were left out and gives
/// `whole`, the command that prints all of it. Without a panic, the output's last lines. A long
/// value is shortened to its ends and its length.
pub(crate) fn what_it_said(output: &str, whole: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let mut said: Vec<&str> = match lines.iter().position(|line| line.contains("panicked at")) {
        Some(at) => lines[at + 1..]
            .iter()
            .take_while(|line| {
                !line.starts_with("note: ")
                    && **line != "stack backtrace:"
                    && !line.starts_with("---- ")
                    && **line != "failures:"
            })
            .copied()
            .collect(),
        None => Vec::new(),
    };
    while said.last().is_some_and(|line| line.trim().is_empty()) {
        said.pop();
    }
    if said.is_empty() {
        said = lines.iter().rev().take(4).rev().copied().collect();
    }
    let said: Vec<String> = said.iter().map(|line| shorten_values(line)).collect();
    if said.len() <= SAID_LINES {
        return said.join("\n");
    }
    let tail = SAID_LINES - SAID_HEAD - 1;
    let left_out = said.len() - SAID_HEAD - tail;
    let mut shown: Vec<String> = said[..SAID_HEAD].to_vec();
    shown.push(format!("[{left_out} lines left out; all of it: {whole}]"));
    shown.extend_from_slice(&said[said.len() - tail..]);
    shown.join("\n")
}

/// `line` with each word longer than [`LONG_VALUE`] characters shown as its first 24 and last 12
/// characters and its length, so a 257-byte key does not fill the screen.
fn shorten_values(line: &str) -> String {
    (line.split(' '))
        .map(|word| {
            let chars: Vec<char> = word.chars().collect();
            if chars.len() <= LONG_VALUE {
                return word.to_string();
            }
            let head: String = chars[..24].iter().collect();
            let tail: String = chars[chars.len() - 12..].iter().collect();
            format!("{head}…{tail} ({} characters)", chars.len())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// How many checks pass, counted the one way `just check-exercise` and `just progress` both
/// count: in teaching order, up to the first that does not pass. A check after that one is not
/// counted even if it passes, since the first failure may be why it passes.
pub fn passed_in_order(passes: impl IntoIterator<Item = bool>) -> usize {
    passes.into_iter().take_while(|passed| *passed).count()
}

/// The command that runs one check of an exercise's copy and prints all it says.
pub fn whole_command(copy: &str, check: &str) -> String {
    format!(
        "cargo test -p {} --test it -- --exact {check}",
        super::package_name(copy)
    )
}

/// The checks that a later chapter teaches, by the prefix of their names, with that chapter:
/// the simulator's suite (chapter 8), which the programs of earlier stages' variants also run,
/// and the HTTP suite's check of the reservation a fenced write needs (chapter 6).
pub const LATER_CHECKS: [(&str, u32); 2] = [
    ("sim::", 8),
    ("http_suite::first_attempt_carries_its_reservation", 6),
];

/// Whether the check `test` of a test program is one that chapter `chapter` has taught. A piece
/// or an exercise of an earlier chapter leaves a later chapter's checks out: it neither names
/// them in its spec nor runs them, so a student never has to pass what the book has not shown.
pub fn taught_by(chapter: u32, test: &str) -> bool {
    (LATER_CHECKS.iter())
        .all(|(prefix, taught_in)| chapter >= *taught_in || !test.starts_with(prefix))
}

/// Runs the checks of the program `program` for `piece` in teaching order, stopping at the first
/// that does not pass; the program's checks the spec does not name run after it, except the
/// simulator's before its chapter. `dir` is the
/// copy's folder (the tests' working directory), `shown` how to print it.
pub fn progress(
    piece: &Piece,
    program: &Path,
    dir: &Path,
    shown: &Path,
) -> Result<Progress, ExerciseError> {
    let tests = listing(program, dir)?;
    let spec: Vec<(String, String)> = (piece.spec.iter())
        .map(|spec| (spec.check.clone(), spec.expects.clone()))
        .collect();
    let named: BTreeSet<&str> = spec.iter().map(|(check, _)| check.as_str()).collect();
    let further: Vec<String> = (tests.iter())
        .filter(|test| !named.contains(test.as_str()) && taught_by(piece.chapter, test))
        .cloned()
        .collect();
    let known: BTreeSet<&str> = tests.iter().map(String::as_str).collect();
    let mut progress = Progress {
        dir: shown.to_path_buf(),
        spec,
        ran: Vec::new(),
        further,
    };
    let order: Vec<String> = (progress.spec.iter().map(|(check, _)| check.clone()))
        .chain(progress.further.iter().cloned())
        .collect();
    for check in order {
        let verdict = if known.contains(check.as_str()) {
            run_one(program, dir, &check)?
        } else {
            Verdict::Missing
        };
        let passed = verdict == Verdict::Passed;
        progress.ran.push((check, verdict));
        if !passed {
            break;
        }
    }
    Ok(progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(ran: Vec<(&str, Verdict)>) -> Progress {
        Progress {
            dir: PathBuf::from("exercises/x"),
            spec: vec![
                ("a::first".to_string(), "the first thing".to_string()),
                ("a::second".to_string(), "the second thing".to_string()),
            ],
            ran: ran
                .into_iter()
                .map(|(check, verdict)| (check.to_string(), verdict))
                .collect(),
            further: Vec::new(),
        }
    }

    // The report names the first failing check, what it expects and what it said.
    #[test]
    fn the_first_failure_is_named_with_its_expectation() {
        let report = progress(vec![
            ("a::first", Verdict::Passed),
            (
                "a::second",
                Verdict::Failed("not yet implemented: write it".to_string()),
            ),
        ]);
        assert!(!report.fixed());
        assert_eq!(
            report.render(),
            "ok         1/2 a::first\n\
             FAILED     2/2 a::second\n          expects: the second thing\n          \
             it said: not yet implemented: write it\n\
             not fixed: 1 of 2 checks pass; make check 2 pass, then run this again\n"
        );
    }

    // Long lines wrap under their text, within the width; a long word stays whole.
    #[test]
    fn long_lines_wrap_under_their_text() {
        let text = "a retry under the same key gets the first receipt back, marked replayed, \
                    with no second effect";
        let out = wrapped("expects: ", text);
        assert_eq!(
            out,
            "          expects: a retry under the same key gets the first receipt back,\n\
             \x20                  marked replayed, with no second effect\n"
        );
        assert!(out.lines().all(|line| line.chars().count() <= WIDTH));
        let long = "x".repeat(90);
        assert_eq!(
            wrapped("it said: ", &long),
            format!("          it said: {long}\n")
        );
    }

    // Fixed only when every check ran and passed.
    #[test]
    fn fixed_needs_every_check() {
        let all = progress(vec![
            ("a::first", Verdict::Passed),
            ("a::second", Verdict::Passed),
        ]);
        assert!(all.fixed());
        assert!(all.render().ends_with("fixed: all 2 checks pass\n"));
        assert!(!progress(vec![("a::first", Verdict::Passed)]).fixed());
        let skipped = progress(vec![
            ("a::first", Verdict::Passed),
            (
                "a::second",
                Verdict::Ignored("needs PostgreSQL".to_string()),
            ),
        ]);
        assert!(!skipped.fixed());
        assert!(skipped.render().contains("ignored here: needs PostgreSQL"));
    }

    // The panic message is what a failed check said; cargo's noise is not.
    #[test]
    fn the_panic_message_is_kept() {
        let output = "running 1 test\ntest a::b ... FAILED\n\nfailures:\n\n---- a::b stdout ----\n\
                      \nthread 'a::b' panicked at src/x.rs:1:1:\nretry applied twice: total 10\n\
                      note: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(what_it_said(output, "cmd"), "retry applied twice: total 10");
    }

    // The line that shows the difference is the last one: a message too long to show whole keeps
    // its ends and says how to see the rest; a long value keeps its ends and its length.
    #[test]
    fn the_difference_is_never_the_line_cut() {
        let output = "thread 'm' panicked at src/model.rs:1:1:\nthe ledger departs.\nshrunk:\n  a\n  \
                      b\n  c\n  d\nstep 4: ledger Capacity, model Ceiling\nnote: run with x\n";
        let said = what_it_said(output, "cmd");
        assert!(
            said.ends_with("step 4: ledger Capacity, model Ceiling"),
            "{said}"
        );
        let many: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        let output = format!("thread 'm' panicked at x:\n{many}note: x\n");
        let said = what_it_said(&output, "cargo test -p exercise-x");
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(lines.len(), SAID_LINES);
        assert_eq!(lines[0], "line 1");
        assert_eq!(
            lines[SAID_HEAD],
            "[19 lines left out; all of it: cargo test -p exercise-x]"
        );
        assert_eq!(lines.last(), Some(&"line 30"));
        let key = format!("key \"{}\" refused", "\\u{301}".repeat(40));
        let said = what_it_said(&format!("thread 'k' panicked at x:\n{key}\n"), "cmd");
        assert!(said.contains("(282 characters)"), "{said}");
        assert!(said.chars().count() < 80, "{said}");
    }

    // Both reports count the checks that pass in teaching order, up to the first that does not.
    #[test]
    fn passing_checks_are_counted_up_to_the_first_failure() {
        assert_eq!(passed_in_order([true, false, true, true]), 1);
        assert_eq!(passed_in_order([true, true]), 2);
    }

    // A later chapter's checks are left out before that chapter, and only they.
    #[test]
    fn later_chapters_checks_wait_for_their_chapter() {
        let sim = "sim::lost_reply_seeds_keep_every_rule";
        assert!(!taught_by(3, sim));
        assert!(!taught_by(7, sim));
        assert!(taught_by(8, sim));
        assert!(taught_by(1, "contract::lost_reply_then_retry"));
        assert!(taught_by(4, "http_suite::keyless_posts_pass_through"));
        assert!(taught_by(2, "model::sim_like_name"));
    }

    // Package ids of both cargo formats name their package, and only it.
    #[test]
    fn package_ids_are_matched_exactly() {
        assert!(package_id_names(
            "path+file:///w/exercises/x#exercise-x@0.1.0",
            "exercise-x"
        ));
        assert!(!package_id_names(
            "path+file:///w/exercises/x#exercise-xy@0.1.0",
            "exercise-x"
        ));
        assert!(package_id_names(
            "path+file:///w/exercises/exercise-x#0.1.0",
            "exercise-x"
        ));
    }
}
