//! Running a shown command and matching its output, apart from reading the docs.

use std::fmt;
use std::process::{Command, ExitStatus, Stdio};

use super::Shown;
use crate::workspace_root;

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
    use crate::walkthrough::parse::tests::{lines, parsed, refused};

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

    // A missing command is reported as such, whatever the docs promise.
    #[test]
    fn missing_command_is_not_a_match() {
        let shown = one("```console\n$ nope\n...\n[exit: 127]\n```\n");
        assert_eq!(
            shown.check(&run("no-such-command-anywhere")),
            Err(Mismatch::CouldNotRun(127))
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

    // A command shown on several lines runs as one, as bash reads the backslashes.
    #[test]
    fn continued_commands_run_as_one() {
        let shown = one("```console\n$ printf '%s,' one \\\n  two\none,two,\n```\n");
        assert_eq!(shown.check(&run(&shown.command)), Ok(()));
    }
}
