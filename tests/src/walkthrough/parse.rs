//! Reading the docs' blocks (fences, kinds, `[exit: N]`), apart from running what they show.

use std::path::Path;

use super::{Need, NotRun, Shown, Walkthrough};
use crate::Error;

/// A fence line: its character, its length, its indent and its info string.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fence<'a> {
    pub(crate) char: char,
    pub(crate) len: usize,
    pub(crate) indent: usize,
    pub(crate) info: &'a str,
}

/// The opening fence on `line`, if it is one (CommonMark: at most three spaces of indent, three
/// or more backticks or tildes, and no backtick in a backtick fence's info string).
pub(crate) fn opening_fence(line: &str) -> Option<Fence<'_>> {
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
pub(crate) fn closes(open: &Fence<'_>, line: &str) -> bool {
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
    /// A session that runs: `console`, `console,slow`, or a slow one that needs the machine to
    /// offer something (`console,slow,root`, `console,slow,postgres`).
    Console { slow: bool, needs: Option<Need> },
    /// A block marked `<lang>,not-run: <reason>`, whatever its language.
    NotRun(String),
    /// Any other block: fine unless it shows a `$ ` prompt line.
    Other,
}

/// The languages of shell blocks: their commands are never content, so even without a `$ `
/// line they must run as a `console` block or say why not.
pub(crate) const SHELL_LANGUAGES: [&str; 10] = [
    "sh",
    "bash",
    "shell",
    "zsh",
    "fish",
    "shell-session",
    "shellsession",
    "sh-session",
    "bash-session",
    "terminal",
];

/// The language of an info string: the text before the first comma, space or brace.
pub(crate) fn language(info: &str) -> &str {
    &info[..info.find([',', ' ', '\t', '{']).unwrap_or(info.len())]
}

/// The kind of block an info string opens, or why it is refused.
fn kind(info: &str) -> Result<Kind, String> {
    if info.to_ascii_lowercase().starts_with("console") {
        let (slow, needs) = match info {
            "console" => (false, None),
            "console,slow" => (true, None),
            "console,slow,root" => (true, Some(Need::Root)),
            "console,slow,postgres" => (true, Some(Need::PostgresServer)),
            _ => {
                return Err(format!(
                    "unknown console block kind `{info}`: write `console`, `console,slow`, \
                     `console,slow,root` or `console,slow,postgres`"
                ));
            }
        };
        return Ok(Kind::Console { slow, needs });
    }
    let language = language(info);
    let rest = &info[language.len()..];
    if let Some(marker) = rest.strip_prefix(",not-run") {
        return match marker.strip_prefix(':').map(str::trim) {
            Some(reason) if !reason.is_empty() && !language.is_empty() => {
                Ok(Kind::NotRun(reason.to_string()))
            }
            Some(reason) if !reason.is_empty() => Err(format!(
                "`{info}` names no language: write `text,not-run: <reason>`"
            )),
            _ => Err(format!(
                "`{info}` gives no reason: write `{language},not-run: <reason>`"
            )),
        };
    }
    if SHELL_LANGUAGES.contains(&language.to_ascii_lowercase().as_str()) {
        return Err(never_run(info));
    }
    Ok(Kind::Other)
}

/// Why a block that shows commands but neither runs nor says why not is refused.
fn never_run(info: &str) -> String {
    let language = match language(info) {
        "" => "text",
        language => language,
    };
    let shown = match info {
        "" => "an unlabelled".to_string(),
        info => format!("a `{info}`"),
    };
    format!(
        "{shown} block is never run: show it as a `console` block with its output, \
         or mark it `{language},not-run: <reason>`"
    )
}

/// Whether a line of a block shows a shell prompt: `$ ` after any indent, or a lone `$`.
pub(crate) fn shows_prompt(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("$ ") || line.trim_end() == "$"
}

/// What the open top-level block is to the runner.
#[derive(Clone, Copy, Debug)]
enum Open {
    /// A console block: its commands run.
    Console { slow: bool, needs: Option<Need> },
    /// A block marked not-run: its lines are not read.
    NotRun,
    /// Any other block: a `$ ` line in it is an error.
    Other,
}

/// Reads the console and shell blocks of one Markdown text.
pub fn parse(file: &Path, text: &str) -> Result<Walkthrough, Error> {
    let malformed = |line: usize, reason: String| Error::Walkthrough {
        file: file.to_path_buf(),
        line,
        reason,
    };
    let mut found = Walkthrough::default();
    // The open top-level fence with the line it opened on and what it is.
    let mut open: Option<(Fence<'_>, usize, Open)> = None;
    // A fence open inside a list, a quote or an indented block, with the line it opened on.
    let mut nested: Option<(Fence<'_>, usize)> = None;
    // The first command of the console block that is open now.
    let mut block_start = 0;
    for (at, line) in text.lines().enumerate() {
        let number = at + 1;
        if let Some((fence, opened)) = nested {
            let inner = line.trim_start_matches([' ', '\t', '>']);
            if inner.len() < line.len() || line.is_empty() {
                if closes(&fence, inner) {
                    nested = None;
                } else if shows_prompt(inner) {
                    return Err(malformed(opened, nested_session()));
                }
                continue;
            }
            // A line at the margin ends the list or quote, and the block with it.
            nested = None;
        }
        let Some((fence, opened, block)) = open else {
            if let Some(fence) = opening_fence(line) {
                let block = match kind(fence.info).map_err(|r| malformed(number, r))? {
                    Kind::Console { slow, needs } => Open::Console { slow, needs },
                    Kind::NotRun(reason) => {
                        found.not_run.push(NotRun {
                            file: file.to_path_buf(),
                            line: number,
                            reason,
                        });
                        Open::NotRun
                    }
                    Kind::Other => Open::Other,
                };
                open = Some((fence, number, block));
                block_start = found.shown.len();
            } else if let Some(fence) = nested_fence(line) {
                if kind(fence.info) != Ok(Kind::Other) {
                    return Err(malformed(number, nested_session()));
                }
                nested = Some((fence, number));
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
        let (slow, needs) = match block {
            Open::Console { slow, needs } => (slow, needs),
            Open::NotRun => continue,
            Open::Other if shows_prompt(line) => {
                return Err(malformed(
                    opened,
                    format!(
                        "{} (its line {number} shows a `$ ` prompt)",
                        never_run(fence.info)
                    ),
                ));
            }
            Open::Other => continue,
        };
        // CommonMark removes up to the fence's own indent from each line of the block.
        let content = line
            .get(
                fence
                    .indent
                    .min(line.len() - line.trim_start_matches(' ').len())..,
            )
            .unwrap_or(line);
        let continued = found.shown[block_start..]
            .last()
            .is_some_and(|last| last.output.is_empty() && continues(&last.command));
        if continued {
            if content.trim().is_empty() {
                return Err(malformed(
                    number,
                    "the command above ends in `\\` but no line continues it".to_string(),
                ));
            }
            let last = found.shown.last_mut().expect("a command is open");
            last.command.push('\n');
            last.command.push_str(content);
        } else if let Some(command) = content.strip_prefix("$ ") {
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
                needs,
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

/// Whether a command goes on at the next line: its last line ends in one backslash, as bash
/// reads it, so a long command can be shown within the book's width.
pub(crate) fn continues(command: &str) -> bool {
    let last = command.lines().last().unwrap_or("").trim_end();
    let escapes = last.len() - last.trim_end_matches('\\').len();
    escapes % 2 == 1
}

/// Why a session inside a container is refused.
fn nested_session() -> String {
    "a console or shell fence, or one that shows `$ ` lines, inside a list, a quote or an \
     indented block is not read: put it at the top level, indented at most three spaces"
        .to_string()
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

#[cfg(test)]
pub(super) mod tests {
    use std::path::PathBuf;

    use super::*;

    pub(crate) fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    pub(crate) fn parsed(text: &str) -> Walkthrough {
        parse(Path::new("x.md"), text).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The `file:line: reason` a malformed text is refused with.
    pub(crate) fn refused(text: &str) -> String {
        match parse(Path::new("x.md"), text) {
            Ok(found) => panic!("accepted: {found:?}"),
            Err(error) => error.to_string(),
        }
    }

    // A slow block may name what it needs from the machine; each command carries it.
    #[test]
    fn console_blocks_name_what_they_need() {
        let text = "```console,slow,root\n$ mount\n```\n```console,slow,postgres\n$ initdb\n```\n```console\n$ echo\n```\n";
        let found = parsed(text);
        let needs: Vec<(&str, bool, Option<Need>)> = found
            .shown
            .iter()
            .map(|s| (s.command.as_str(), s.slow, s.needs))
            .collect();
        assert_eq!(
            needs,
            vec![
                ("mount", true, Some(Need::Root)),
                ("initdb", true, Some(Need::PostgresServer)),
                ("echo", false, None)
            ]
        );
        assert!(refused("```console,root\n$ x\n```\n").contains("unknown console block kind"));
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

    // `[exit: N]` is only valid as the last line, with a number.
    #[test]
    fn exit_line_only_last_and_numeric() {
        assert_eq!(
            refused("```console\n$ x\n[exit: 1]\nmore\n```\n"),
            "x.md:3: `[exit: N]` must be the last line of its output"
        );
        assert!(refused("```console\n$ x\n[exit: one]\n```\n").starts_with("x.md:3: "));
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
            "x.md:2: unknown console block kind `Console`: write `console`, `console,slow`, `console,slow,root` or `console,slow,postgres`"
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

    // A `text` block that shows a `$ ` line is refused at its fence unless it is marked.
    #[test]
    fn text_blocks_with_a_prompt_run_or_say_why_not() {
        assert_eq!(
            refused("intro\n```text\nPOST /x\n  $ cargo run\n```\n"),
            "x.md:2: a `text` block is never run: show it as a `console` block with its \
             output, or mark it `text,not-run: <reason>` (its line 4 shows a `$ ` prompt)"
        );
        assert!(refused("```\n$\n```\n").starts_with("x.md:1: an unlabelled block is never run"));
        assert!(refused("~~~~markdown\n```console\n$ x\n```\n~~~~\n").starts_with("x.md:1: "));
        assert!(refused("```text,not-run:\n$ x\n```\n").contains("gives no reason"));
        assert!(refused("```,not-run: why\n$ x\n```\n").contains("names no language"));
        let found = parsed("```text,not-run: the form of a session\n$ cargo run\n```\n");
        assert_eq!(found.not_run[0].reason, "the form of a session");
        assert!(found.shown.is_empty());
        // Without a prompt line a text block is content, and a `$` inside a line is no prompt.
        assert!(
            parsed("```text\nprice: 5 $\necho $ HOME\n```\n")
                .shown
                .is_empty()
        );
    }

    // A `shell-session` block, or any shell dialect, is a shell block: run it or mark it.
    #[test]
    fn shell_session_blocks_are_shell_blocks() {
        for info in [
            "shell-session",
            "ShellSession",
            "sh-session",
            "bash-session",
            "fish",
        ] {
            let text = format!("a\n```{info}\n$ cargo run\n```\n");
            assert_eq!(
                refused(&text),
                format!(
                    "x.md:2: a `{info}` block is never run: show it as a `console` block with \
                     its output, or mark it `{info},not-run: <reason>`"
                ),
            );
        }
        let found = parsed("```shell-session,not-run: a transcript\n$ cargo run\n```\n");
        assert_eq!(found.not_run.len(), 1);
    }

    // A prompt inside a block nested in a list or a quote is refused: the runner cannot read it.
    #[test]
    fn nested_blocks_with_a_prompt_are_refused() {
        assert!(
            refused("1. step\n\n    ```text\n    $ x\n    ```\n")
                .starts_with("x.md:3: a console or shell fence, or one that shows `$ ` lines")
        );
        assert!(refused("> ```\n> $ x\n> ```\n").starts_with("x.md:1: "));
        // A nested block without one is fine, and it ends where its list does.
        let found =
            parsed("1. step\n\n    ```text\n    hi\n\nafter\n```console\n$ echo a\na\n```\n");
        assert_eq!(found.shown.len(), 1);
    }

    // A command line ending in `\` goes on at the next line; the output starts after it.
    #[test]
    fn long_commands_continue_after_a_backslash() {
        let found = parsed("```console\n$ echo one \\\n  two \\\n  three\none two three\n```\n");
        assert_eq!(found.shown.len(), 1);
        assert_eq!(found.shown[0].command, "echo one \\\n  two \\\n  three");
        assert_eq!(found.shown[0].output, lines("one two three"));
        // An escaped backslash ends the command; a blank line cannot continue one.
        let found = parsed("```console\n$ echo a\\\\\na\\\n```\n");
        assert_eq!(found.shown[0].output, lines("a\\"));
        assert!(refused("```console\n$ echo \\\n\n```\n").starts_with("x.md:3: the command above"));
    }
}
