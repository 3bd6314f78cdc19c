//! The walkthrough check: every command shown in a `console` block runs, and prints what is shown.
//!
//! In ```` ```console ```` blocks of `README.md` and `docs/src/*.md`, a line starting with `$ ` is
//! a command and the lines after it, up to the next command or the fence, are its output. Within
//! a line `[..]` matches any text; a line that is exactly `...` matches any number of lines. A
//! command that exits non-zero ends its output with `[exit: N]`. Blocks fenced as
//! ```` ```console,slow ```` are the ones that take long; they run with `RETRYKEY_DOCS_SLOW=1` (`just docs-check`, `just ci`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{Error, read, workspace_root};

/// One command shown in the docs, with the output the docs promise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    /// The Markdown file, relative to the workspace root.
    pub file: PathBuf,
    /// The line of the `$ ` command.
    pub line: usize,
    /// The command, as typed after `$ `.
    pub command: String,
    /// The promised output lines.
    pub output: Vec<String>,
    /// Whether the block is marked `slow`.
    pub slow: bool,
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

/// The commands shown in `file` (relative to the workspace root).
pub fn shown_in(file: &Path) -> Result<Vec<Shown>, Error> {
    let text = read(workspace_root().join(file))?;
    parse(file, &text)
}

/// Reads the `console` blocks of one Markdown text.
pub fn parse(file: &Path, text: &str) -> Result<Vec<Shown>, Error> {
    let malformed = |line: usize, reason: &str| Error::Walkthrough {
        file: file.to_path_buf(),
        line,
        reason: reason.to_string(),
    };
    let mut shown: Vec<Shown> = Vec::new();
    let mut block: Option<bool> = None; // Some(slow) inside a console block
    let mut other_fence = false;
    for (at, line) in text.lines().enumerate() {
        let number = at + 1;
        let fence = line.trim_start().strip_prefix("```");
        match (block, fence) {
            (Some(_), Some(_)) => block = None,
            (Some(slow), None) => {
                if let Some(command) = line.strip_prefix("$ ") {
                    shown.push(Shown {
                        file: file.to_path_buf(),
                        line: number,
                        command: command.to_string(),
                        output: Vec::new(),
                        slow,
                    });
                } else {
                    let last = shown
                        .last_mut()
                        .filter(|last| last.file == file && last.line < number)
                        .ok_or_else(|| malformed(number, "output before any `$ ` command"))?;
                    last.output.push(line.to_string());
                }
            }
            (None, Some(info)) if !other_fence => match info.trim() {
                "console" => block = Some(false),
                "console,slow" => block = Some(true),
                info if info.starts_with("console") => {
                    return Err(malformed(number, "unknown console block kind"));
                }
                "" => other_fence = true,
                _ => other_fence = true,
            },
            (None, Some(_)) => other_fence = false,
            (None, None) => {}
        }
    }
    if block.is_some() {
        return Err(malformed(
            text.lines().count(),
            "console block is not closed",
        ));
    }
    Ok(shown)
}

/// Runs a shown command from the workspace root: stderr merged into stdout, cargo quiet, no
/// colour, no backtraces. A non-zero exit is appended as `[exit: N]`.
pub fn run(command: &str) -> String {
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
        Err(error) => format!("could not start bash: {error}\n[exit: -1]"),
        Ok(output) => {
            let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
            if !output.status.success() {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                let code = output.status.code().unwrap_or(-1);
                text.push_str(&format!("[exit: {code}]\n"));
            }
            text
        }
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

    // Commands and their output are read from console blocks only; other fences are ignored.
    #[test]
    fn parses_console_blocks() {
        let text = "intro\n```sh\n$ not checked\n```\n```console\n$ echo hi\nhi\n$ false\n[exit: 1]\n```\n```console,slow\n$ sleep 1\n```\n";
        let shown = parse(Path::new("x.md"), text).expect("well formed");
        let commands: Vec<(&str, usize, bool)> = shown
            .iter()
            .map(|s| (s.command.as_str(), s.output.len(), s.slow))
            .collect();
        assert_eq!(
            commands,
            vec![
                ("echo hi", 1, false),
                ("false", 1, false),
                ("sleep 1", 0, true)
            ]
        );
    }

    // A console block with output before its first command is an error, not a silent skip.
    #[test]
    fn rejects_output_without_command() {
        assert!(parse(Path::new("x.md"), "```console\nhi\n```\n").is_err());
        assert!(parse(Path::new("x.md"), "```console,fast\n$ x\n```\n").is_err());
    }

    // A failing command reports its exit status, and stderr is part of the output.
    #[test]
    fn runs_with_exit_status() {
        assert_eq!(
            run("echo out; echo err >&2; exit 3"),
            "out\nerr\n[exit: 3]\n"
        );
        assert_eq!(run("echo fine"), "fine\n");
    }
}
