//! The walkthrough check: every command shown in a `console` block runs, and prints what is shown.
//!
//! The runner reads `README.md` and `docs/src/*.md` with these rules, so that a block it does not
//! understand is an error with `file:line`, never a silent skip:
//!
//! - **Fences.** As in CommonMark: a run of three or more backticks or tildes, indented at most
//!   three spaces, opens a block; only a run of the same character, at least as long, with nothing
//!   after it but spaces, closes it. A fence left open is an error. A console or shell fence
//!   nested in a list, a quote or an indented code block is an error too, since the runner only
//!   reads blocks at the top level.
//! - **Console blocks.** Every fence whose info string starts with `console`, in any letter case,
//!   is checked. Exactly two kinds exist: `console` (always run) and `console,slow` (run only with
//!   `RETRYKEY_DOCS_SLOW=1`, as `just docs-check` and `just ci` do; without it the commands are
//!   reported as skipped and counted, never as passed). Anything else (`Console`,
//!   `console,fast`, ...) is rejected.
//! - **Commands and output.** In a console block a line starting with `$ ` is a command, run with
//!   bash from the workspace root; the lines after it, up to the next command or the fence, are
//!   its output, stdout and stderr merged. Within a line `[..]` matches any text; a line that is
//!   exactly `...` matches any number of lines.
//! - **Exit status.** A command that exits non-zero shows `[exit: N]` as the last non-blank line
//!   of its output, with its real N. The status is compared on its own, before the wildcards are
//!   tried, so a `...` can never hide a failure. A command that exits 0 shows no `[exit: N]`
//!   line, and `[exit: N]` anywhere but last is an error.
//! - **Shell blocks.** A fence whose language is `sh`, `bash`, `shell` or `zsh` (any case) holds
//!   commands the runner cannot check, so it must say why in its info string, exactly as
//!   ```` ```sh,not-run: <reason> ```` with a non-empty reason. A shell block without that marker
//!   is an error: show it as a `console` block with its output instead. mdBook renders the
//!   marked block with the class `language-sh` (the marker becomes extra classes), so it is
//!   still highlighted as shell.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use crate::{Error, read, workspace_root};

/// One command shown in the docs, with the output and exit status the docs promise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    /// The Markdown file, relative to the workspace root.
    pub file: PathBuf,
    /// The line of the `$ ` command.
    pub line: usize,
    /// The command, as typed after `$ `.
    pub command: String,
    /// The promised output lines, without the `[exit: N]` line.
    pub output: Vec<String>,
    /// The promised exit status: the N of `[exit: N]`, or 0 when the block shows none.
    pub exit: i32,
    /// Whether the block is marked `slow`.
    pub slow: bool,
}

/// A shell block the docs mark as not run, with the reason they give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotRun {
    /// The Markdown file, relative to the workspace root.
    pub file: PathBuf,
    /// The line of the opening fence.
    pub line: usize,
    /// The text after `not-run:`.
    pub reason: String,
}

/// Everything the runner reads from one Markdown text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walkthrough {
    /// The commands of the console blocks, in order.
    pub shown: Vec<Shown>,
    /// The shell blocks marked `not-run`, in order.
    pub not_run: Vec<NotRun>,
}

/// The Markdown files whose commands are checked: README.md and every chapter under docs/src.
pub fn documents() -> Result<Vec<PathBuf>, Error> {
    let root = workspace_root();
    let chapters = root.join("docs/src");
    let mut files = vec![PathBuf::from("README.md")];
    let entries = std::fs::read_dir(&chapters).map_err(|source| Error::Read {
        path: chapters.clone(),
        source,
    })?;
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .filter_map(|path| path.strip_prefix(&root).ok().map(Path::to_path_buf))
        .collect();
    found.sort();
    files.extend(found);
    Ok(files)
}

/// The blocks of `file` (relative to the workspace root).
pub fn read_document(file: &Path) -> Result<Walkthrough, Error> {
    let text = read(workspace_root().join(file))?;
    parse(file, &text)
}

/// A fence line: its character, its length, its indent and its info string.
#[derive(Clone, Copy, Debug)]
struct Fence<'a> {
    char: char,
    len: usize,
    indent: usize,
    info: &'a str,
}

/// The opening fence on `line`, if it is one (CommonMark: at most three spaces of indent, three
/// or more backticks or tildes, and no backtick in a backtick fence's info string).
fn opening_fence(line: &str) -> Option<Fence<'_>> {
    let rest = line.trim_start_matches(' ');
    let indent = line.len() - rest.len();
    if indent > 3 {
        return None;
    }
    fence_at(rest, indent)
}

fn fence_at(rest: &str, indent: usize) -> Option<Fence<'_>> {
    let char = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let info = rest.trim_start_matches(char);
    let len = rest.len() - info.len();
    if len < 3 || (char == '`' && info.contains('`')) {
        return None;
    }
    Some(Fence {
        char,
        len,
        indent,
        info: info.trim(),
    })
}

/// Whether `line` closes the block `open` began: the same character, at least as long, at most
/// three spaces of indent, nothing after it but spaces.
fn closes(open: &Fence<'_>, line: &str) -> bool {
    let rest = line.trim_start_matches(' ');
    if line.len() - rest.len() > 3 {
        return false;
    }
    let after = rest.trim_start_matches(open.char);
    rest.len() - after.len() >= open.len && after.trim().is_empty()
}

/// A fence after list markers, quote markers or four or more spaces: CommonMark nests it in a
/// container this runner does not read.
fn nested_fence(line: &str) -> Option<Fence<'_>> {
    let start = line.find(['`', '~'])?;
    let (prefix, rest) = line.split_at(start);
    let container = prefix.chars().all(|c| {
        c.is_ascii_whitespace()
            || c.is_ascii_digit()
            || matches!(c, '>' | '-' | '*' | '+' | '.' | ')')
    });
    if !container || opening_fence(line).is_some() {
        return None;
    }
    fence_at(rest, 0)
}

/// How the runner treats a block, from its info string.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Console { slow: bool },
    NotRun(String),
    Other,
}

/// The kind of block an info string opens, or why it is refused.
fn kind(info: &str) -> Result<Kind, String> {
    if info.to_ascii_lowercase().starts_with("console") {
        return match info {
            "console" => Ok(Kind::Console { slow: false }),
            "console,slow" => Ok(Kind::Console { slow: true }),
            _ => Err(format!(
                "unknown console block kind `{info}`: write `console` or `console,slow`"
            )),
        };
    }
    let language_end = info.find([',', ' ', '\t', '{']).unwrap_or(info.len());
    let (language, rest) = info.split_at(language_end);
    if !matches!(
        language.to_ascii_lowercase().as_str(),
        "sh" | "bash" | "shell" | "zsh"
    ) {
        return Ok(Kind::Other);
    }
    match rest.strip_prefix(",not-run:").map(str::trim) {
        Some(reason) if !reason.is_empty() => Ok(Kind::NotRun(reason.to_string())),
        Some(_) => Err(format!(
            "`{info}` gives no reason: write `{language},not-run: <reason>`"
        )),
        None => Err(format!(
            "a `{info}` block is never run: show it as a `console` block with its output, \
             or mark it `{language},not-run: <reason>`"
        )),
    }
}

/// Reads the console and shell blocks of one Markdown text.
pub fn parse(file: &Path, text: &str) -> Result<Walkthrough, Error> {
    let malformed = |line: usize, reason: String| Error::Walkthrough {
        file: file.to_path_buf(),
        line,
        reason,
    };
    let mut found = Walkthrough::default();
    // The open fence with the line it opened on and, for a console block, whether it is slow.
    let mut open: Option<(Fence<'_>, usize, Option<bool>)> = None;
    // The first command of the console block that is open now.
    let mut block_start = 0;
    for (at, line) in text.lines().enumerate() {
        let number = at + 1;
        let Some((fence, _, console)) = open else {
            if let Some(fence) = opening_fence(line) {
                let console = match kind(fence.info).map_err(|r| malformed(number, r))? {
                    Kind::Console { slow } => Some(slow),
                    Kind::NotRun(reason) => {
                        found.not_run.push(NotRun {
                            file: file.to_path_buf(),
                            line: number,
                            reason,
                        });
                        None
                    }
                    Kind::Other => None,
                };
                open = Some((fence, number, console));
                block_start = found.shown.len();
            } else if let Some(nested) = nested_fence(line)
                && kind(nested.info) != Ok(Kind::Other)
            {
                return Err(malformed(
                    number,
                    "a console or shell fence inside a list, a quote or an indented block is not \
                     read: put it at the top level, indented at most three spaces"
                        .to_string(),
                ));
            }
            continue;
        };
        if closes(&fence, line) {
            open = None;
            for shown in &mut found.shown[block_start..] {
                promised_exit(shown).map_err(|(line, r)| malformed(line, r))?;
            }
            continue;
        }
        let Some(slow) = console else { continue };
        // CommonMark removes up to the fence's own indent from each line of the block.
        let content = line
            .get(
                fence
                    .indent
                    .min(line.len() - line.trim_start_matches(' ').len())..,
            )
            .unwrap_or(line);
        if let Some(command) = content.strip_prefix("$ ") {
            if command.trim().is_empty() {
                return Err(malformed(number, "empty command after `$ `".to_string()));
            }
            found.shown.push(Shown {
                file: file.to_path_buf(),
                line: number,
                command: command.to_string(),
                output: Vec::new(),
                exit: 0,
                slow,
            });
        } else {
            let last = found.shown[block_start..]
                .last_mut()
                .ok_or_else(|| malformed(number, "output before any `$ ` command".to_string()))?;
            last.output.push(content.to_string());
        }
    }
    if let Some((_, line, _)) = open {
        return Err(malformed(
            line,
            "this fence is never closed (a closing fence uses the same character, at least as \
             many times)"
                .to_string(),
        ));
    }
    Ok(found)
}

/// Moves a trailing `[exit: N]` line from the output into `exit`, and refuses one anywhere else.
fn promised_exit(shown: &mut Shown) -> Result<(), (usize, String)> {
    while shown.output.last().is_some_and(|l| l.trim().is_empty()) {
        shown.output.pop();
    }
    let at = |n: usize| shown.line + 1 + n;
    let last = shown.output.len().checked_sub(1);
    for (n, line) in shown.output.iter().enumerate() {
        let Some(code) = line.trim_end().strip_prefix("[exit: ") else {
            continue;
        };
        if Some(n) != last {
            return Err((
                at(n),
                "`[exit: N]` must be the last line of its output".into(),
            ));
        }
        let code: i32 = code
            .strip_suffix(']')
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| {
                (
                    at(n),
                    format!("`{line}` is not `[exit: N]` with a number N"),
                )
            })?;
        if code == 0 {
            return Err((
                at(n),
                "a command that succeeds shows no `[exit: 0]` line".into(),
            ));
        }
        shown.exit = code;
    }
    if shown.exit != 0 {
        shown.output.pop();
    }
    Ok(())
}

/// What a command did: its merged output and its exit status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ran {
    /// Stdout and stderr, merged.
    pub output: String,
    /// The exit status; a command killed by signal S shows 128 + S, as bash does.
    pub exit: i32,
}

impl fmt::Display for Ran {
    /// The output as the docs would show it, `[exit: N]` included.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.output)?;
        if self.exit != 0 {
            if !self.output.is_empty() && !self.output.ends_with('\n') {
                f.write_str("\n")?;
            }
            writeln!(f, "[exit: {}]", self.exit)?;
        }
        Ok(())
    }
}

/// Runs a shown command from the workspace root: stderr merged into stdout, cargo quiet, no
/// colour, no backtraces.
pub fn run(command: &str) -> Ran {
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(workspace_root())
        .env("CARGO_TERM_QUIET", "true")
        .env("CARGO_TERM_COLOR", "never")
        .env("NO_COLOR", "1")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdin(Stdio::null())
        .output();
    match output {
        Err(error) => Ran {
            output: format!("could not start bash: {error}\n"),
            exit: 127,
        },
        Ok(output) => Ran {
            output: String::from_utf8_lossy(&output.stdout).into_owned(),
            exit: exit_code(output.status),
        },
    }
}

fn exit_code(status: ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128 + signal;
        }
    }
    status.code().unwrap_or(-1)
}

/// How a command's run differs from what the docs show.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Mismatch {
    /// The shell could not find or start the command.
    #[error("the command could not run (exit {0})")]
    CouldNotRun(i32),
    /// The exit status differs; 0 is success, shown by no `[exit: N]` line.
    #[error("the docs show {}, the command {}", status(*promised), status(*actual))]
    Exit {
        /// The status the docs show.
        promised: i32,
        /// The status the command had.
        actual: i32,
    },
    /// The status agrees, the output does not.
    #[error("the output differs")]
    Output,
}

fn status(code: i32) -> String {
    match code {
        0 => "success (no `[exit: N]` line)".to_string(),
        code => format!("`[exit: {code}]`"),
    }
}

impl Shown {
    /// Whether `ran` is what the docs show: the exit status first, then the output lines.
    pub fn check(&self, ran: &Ran) -> Result<(), Mismatch> {
        if ran.exit == 127 || ran.output.contains("command not found") {
            return Err(Mismatch::CouldNotRun(ran.exit));
        }
        if ran.exit != self.exit {
            return Err(Mismatch::Exit {
                promised: self.exit,
                actual: ran.exit,
            });
        }
        if !matches(&self.output, &ran.output) {
            return Err(Mismatch::Output);
        }
        Ok(())
    }

    /// The promised output as the docs show it, `[exit: N]` included.
    pub fn promised(&self) -> String {
        let mut text = self.output.join("\n");
        if self.exit != 0 {
            text.push_str(&format!("\n[exit: {}]", self.exit));
        }
        text
    }
}

/// Whether `actual` output matches the promised lines (`[..]` and `...` as wildcards).
pub fn matches(promised: &[String], actual: &str) -> bool {
    let promised: Vec<&str> = trim_trailing_blank(promised.iter().map(|l| l.trim_end()).collect());
    let actual: Vec<&str> = trim_trailing_blank(actual.lines().map(str::trim_end).collect());
    match_lines(&promised, &actual)
}

fn trim_trailing_blank(mut lines: Vec<&str>) -> Vec<&str> {
    while lines.last().is_some_and(|line| line.is_empty()) {
        lines.pop();
    }
    lines
}

fn match_lines(promised: &[&str], actual: &[&str]) -> bool {
    match promised.split_first() {
        None => actual.is_empty(),
        Some((&"...", rest)) => (0..=actual.len()).any(|skip| match_lines(rest, &actual[skip..])),
        Some((line, rest)) => {
            !actual.is_empty() && match_line(line, actual[0]) && match_lines(rest, &actual[1..])
        }
    }
}

/// One line, where each `[..]` matches any text.
fn match_line(promised: &str, actual: &str) -> bool {
    let mut parts = promised.split("[..]");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = actual.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (n, part) in parts.iter().enumerate() {
        if n + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    fn parsed(text: &str) -> Walkthrough {
        parse(Path::new("x.md"), text).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The `file:line: reason` a malformed text is refused with.
    fn refused(text: &str) -> String {
        match parse(Path::new("x.md"), text) {
            Ok(found) => panic!("accepted: {found:?}"),
            Err(error) => error.to_string(),
        }
    }

    /// The single command of a one-command console block.
    fn one(text: &str) -> Shown {
        let mut found = parsed(text).shown;
        assert_eq!(found.len(), 1, "one command in {text:?}");
        found.remove(0)
    }

    fn ran(output: &str, exit: i32) -> Ran {
        Ran {
            output: output.to_string(),
            exit,
        }
    }

    // Exact lines must match exactly; trailing blank lines and spaces do not count.
    #[test]
    fn exact_output() {
        assert!(matches(&lines("a\nb"), "a\nb\n\n"));
        assert!(!matches(&lines("a\nb"), "a\nc\n"));
        assert!(!matches(&lines("a"), "a\nb\n"));
    }

    // `[..]` stands for any text within a line, `...` for any number of lines.
    #[test]
    fn wildcards() {
        assert!(matches(
            &lines("listening on http://[..]"),
            "listening on http://127.0.0.1:4000"
        ));
        assert!(matches(&lines("a [..] c [..]"), "a b c d"));
        assert!(!matches(&lines("a [..] c"), "a b d"));
        assert!(matches(&lines("first\n...\nlast"), "first\nx\ny\nlast"));
        assert!(matches(&lines("first\n...\nlast"), "first\nlast"));
        assert!(!matches(&lines("first\n...\nlast"), "first\nx"));
    }

    // Commands and their output are read from console blocks; marked shell blocks are listed.
    #[test]
    fn parses_console_blocks() {
        let text = "intro\n```sh,not-run: needs a server\n$ not checked\n```\n```console\n$ echo hi\nhi\n$ false\n[exit: 1]\n```\n```console,slow\n$ sleep 1\n```\n";
        let found = parsed(text);
        let commands: Vec<(&str, usize, i32, bool)> = found
            .shown
            .iter()
            .map(|s| (s.command.as_str(), s.output.len(), s.exit, s.slow))
            .collect();
        assert_eq!(
            commands,
            vec![
                ("echo hi", 1, 0, false),
                ("false", 0, 1, false),
                ("sleep 1", 0, 0, true)
            ]
        );
        assert_eq!(
            found.not_run,
            vec![NotRun {
                file: PathBuf::from("x.md"),
                line: 2,
                reason: "needs a server".to_string()
            }]
        );
    }

    // A console block with output before its first command is an error, not a silent skip.
    #[test]
    fn rejects_output_without_command() {
        assert_eq!(
            refused("```console\nhi\n```\n"),
            "x.md:2: output before any `$ ` command"
        );
    }

    // A failing command under a `...`-only output is a mismatch: `...` cannot swallow the exit.
    #[test]
    fn ellipsis_does_not_hide_a_failure() {
        let shown = one("```console\n$ cargo test\n...\n```\n");
        assert_eq!(shown.exit, 0);
        assert_eq!(
            shown.check(&ran("running 3 tests\nFAILED\n", 101)),
            Err(Mismatch::Exit {
                promised: 0,
                actual: 101
            })
        );
        assert_eq!(shown.check(&ran("running 3 tests\nok\n", 0)), Ok(()));
    }

    // A failure must be shown with its own N, as the last line, and then it matches.
    #[test]
    fn failure_needs_its_exit_line() {
        let shown = one("```console\n$ cargo test\n...\n[exit: 101]\n\n```\n");
        assert_eq!(shown.exit, 101);
        assert_eq!(shown.output, lines("..."));
        assert_eq!(shown.check(&ran("FAILED\n", 101)), Ok(()));
        assert_eq!(
            shown.check(&ran("FAILED\n", 1)),
            Err(Mismatch::Exit {
                promised: 101,
                actual: 1
            })
        );
    }

    // A command that succeeds must not promise `[exit: N]`.
    #[test]
    fn success_must_not_promise_an_exit_line() {
        let shown = one("```console\n$ true\n[exit: 2]\n```\n");
        assert_eq!(
            shown.check(&ran("", 0)),
            Err(Mismatch::Exit {
                promised: 2,
                actual: 0
            })
        );
        assert_eq!(
            refused("```console\n$ true\n[exit: 0]\n```\n"),
            "x.md:3: a command that succeeds shows no `[exit: 0]` line"
        );
    }

    // `[exit: N]` is only valid as the last line, with a number.
    #[test]
    fn exit_line_only_last_and_numeric() {
        assert_eq!(
            refused("```console\n$ x\n[exit: 1]\nmore\n```\n"),
            "x.md:3: `[exit: N]` must be the last line of its output"
        );
        assert!(refused("```console\n$ x\n[exit: one]\n```\n").starts_with("x.md:3: "));
    }

    // A missing command is reported as such, whatever the docs promise.
    #[test]
    fn missing_command_is_not_a_match() {
        let shown = one("```console\n$ nope\n...\n[exit: 127]\n```\n");
        assert_eq!(
            shown.check(&run("no-such-command-anywhere")),
            Err(Mismatch::CouldNotRun(127))
        );
    }

    // Console fences in either character and any length of three or more are read.
    #[test]
    fn reads_every_console_fence_form() {
        for text in [
            "~~~console\n$ echo a\na\n~~~\n",
            "````console\n$ echo a\n```\na\n````\n",
            "   ```console\n   $ echo a\n   a\n   ```\n",
            "~~~~console\n$ echo a\n~~~\na\n~~~~~\n",
        ] {
            let found = parsed(text);
            assert_eq!(found.shown.len(), 1, "{text:?}");
            assert_eq!(found.shown[0].command, "echo a", "{text:?}");
            assert_eq!(found.shown[0].output.last().map(String::as_str), Some("a"));
        }
        // A shorter or different fence inside a block is content, not its end.
        let found = parsed("````console\n$ echo a\n```\n~~~~\n````\n");
        assert_eq!(found.shown[0].output, lines("```\n~~~~"));
    }

    // Any other info string starting with console, in any case, is refused with its line.
    #[test]
    fn rejects_unknown_console_kinds() {
        assert_eq!(
            refused("text\n```Console\n$ echo a\n```\n"),
            "x.md:2: unknown console block kind `Console`: write `console` or `console,slow`"
        );
        assert!(refused("~~~CONSOLE,slow\n$ x\n~~~\n").starts_with("x.md:1: unknown console"));
        assert!(refused("```console,fast\n$ x\n```\n").starts_with("x.md:1: unknown console"));
        assert!(refused("````consoles\n$ x\n````\n").starts_with("x.md:1: unknown console"));
    }

    // A block that never closes is an error, and a console block cannot hide inside another.
    #[test]
    fn rejects_unclosed_and_nested_fences() {
        assert_eq!(parsed("```console\n$ x\n```` \n").shown.len(), 1);
        assert!(
            refused("````console\n$ x\n```\n").starts_with("x.md:1: this fence is never closed")
        );
        assert!(refused("```text\nhi\n\n```console\n$ x\n").starts_with("x.md:1: "));
        assert!(refused("~~~text\n```\n").starts_with("x.md:1: this fence is never closed"));
        assert!(refused("- step\n\n    ```console\n    $ x\n    ```\n").starts_with("x.md:3: "));
        assert!(refused("> ```console\n> $ x\n> ```\n").starts_with("x.md:1: "));
        // Indented code that shows a plain fence is fine.
        assert!(parsed("    ```text\n    hi\n").shown.is_empty());
    }

    // A shell block is refused unless it says `not-run: <reason>`; any language case counts.
    #[test]
    fn shell_blocks_need_a_not_run_reason() {
        assert_eq!(
            refused("a\n```sh\ncargo run\n```\n"),
            "x.md:2: a `sh` block is never run: show it as a `console` block with its output, \
             or mark it `sh,not-run: <reason>`"
        );
        for info in [
            "bash",
            "Shell",
            "ZSH",
            "sh,ignore",
            "sh not-run: x",
            "sh,not-run x",
        ] {
            let text = format!("~~~{info}\ncargo run\n~~~\n");
            assert!(refused(&text).starts_with("x.md:1: "), "{info}");
        }
        assert!(refused("```sh,not-run:   \nx\n```\n").contains("gives no reason"));
        let found = parsed("~~~~Bash,not-run: the set-up commands\ncargo test\n~~~~\n");
        assert_eq!(found.not_run[0].reason, "the set-up commands");
        assert!(found.shown.is_empty());
        // Other languages are not the runner's business.
        assert!(
            parsed("```rust\nfn main() {}\n```\n```\nplain\n```\n")
                .shown
                .is_empty()
        );
    }

    // A failing command reports its exit status, and stderr is part of the output.
    #[test]
    fn runs_with_exit_status() {
        let failed = run("echo out; echo err >&2; exit 3");
        assert_eq!(failed, ran("out\nerr\n", 3));
        assert_eq!(failed.to_string(), "out\nerr\n[exit: 3]\n");
        assert_eq!(run("echo fine"), ran("fine\n", 0));
        assert_eq!(run("kill -TERM $$").exit, 128 + 15);
    }
}
