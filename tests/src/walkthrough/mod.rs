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

mod check;
mod parse;

use std::path::{Path, PathBuf};

use crate::{Error, read, workspace_root};

pub use check::{Mismatch, Ran, matches, run};
pub use parse::parse;

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
