//! The walkthrough check: every command shown in a `console` block runs, and prints what is shown.
//!
//! The runner reads `README.md`, every `.md` page under `docs/src` (subfolders too),
//! `labs/README.md` and each variant's `labs/<variant>/README.md`, with these rules, so that a
//! block it does not understand is an error with `file:line`, never a silent skip:
//!
//! - **Fences.** As in CommonMark: a run of three or more backticks or tildes, indented at most
//!   three spaces, opens a block; only a run of the same character, at least as long, with nothing
//!   after it but spaces, closes it. A fence left open is an error. A console or shell fence, or
//!   any block that shows a `$ ` line, nested in a list, a quote or an indented code block is an
//!   error too, since the runner only reads blocks at the top level.
//! - **Console blocks.** Every fence whose info string starts with `console`, in any letter case,
//!   is checked. Exactly four kinds exist: `console` (always run), `console,slow` (run only with
//!   `RETRYKEY_DOCS_SLOW=1`, as `just docs-check` and `just ci` do; without it the commands are
//!   reported as skipped and counted, never as passed), and two slow kinds that need the machine
//!   to offer something: `console,slow,root` (root, as mounting a filesystem does) and
//!   `console,slow,postgres` (PostgreSQL's server programs, for a run that starts a server of
//!   its own). Where the need is missing, their commands are skipped and counted the same way.
//!   Anything else (`Console`, `console,fast`, ...) is rejected.
//! - **Commands and output.** In a console block a line starting with `$ ` is a command, run with
//!   bash from the workspace root; the lines after it, up to the next command or the fence, are
//!   its output, stdout and stderr merged. A command whose line ends in one `\` goes on at the
//!   next line, as bash reads it, so a long command fits the book's width. Within a line `[..]`
//!   matches any text; a line that is exactly `...` matches any number of lines.
//! - **Exit status.** A command that exits non-zero shows `[exit: N]` as the last non-blank line
//!   of its output, with its real N. The status is compared on its own, before the wildcards are
//!   tried, so a `...` can never hide a failure. A command that exits 0 shows no `[exit: N]`
//!   line, and `[exit: N]` anywhere but last is an error.
//! - **Not-run blocks.** A block whose commands the runner cannot check says why in its info
//!   string, exactly as ```` ```<lang>,not-run: <reason> ```` with a language and a non-empty
//!   reason (`sh,not-run: needs root`, `text,not-run: the form of a session`). Its lines are
//!   not read. mdBook renders it with the class `language-<lang>` (the marker becomes extra
//!   classes), so it is still highlighted as that language.
//! - **Shell blocks.** A fence whose language is a shell's (`sh`, `bash`, `shell`, `zsh`, `fish`,
//!   `shell-session`, `sh-session`, `bash-session`, `shellsession`, `terminal`, any case)
//!   holds commands, shown with a prompt or not, so it is either a `console` block or marked
//!   not-run; without the marker it is an error.
//! - **Prompts anywhere.** Any other block (`text`, an unlabelled fence, any info string) that
//!   shows a prompt line, `$ ` after any indent or a lone `$`, is an error naming its fence:
//!   a session a reader could type is run as a `console` block, and a quoted prompt that is not
//!   a real run (the form of a block, a transcript of another machine) is marked
//!   `text,not-run: <reason>`.

mod check;
pub(crate) mod parse;

use std::path::{Path, PathBuf};

use crate::{Error, read, workspace_root};

pub use check::{Mismatch, Ran, matches, run};
pub use parse::parse;

/// What a console block needs from the machine beyond the workspace and its tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Root that may mount a filesystem (`console,slow,root`), as `disk-full` needs.
    Root,
    /// PostgreSQL's server programs, and as root a `postgres` user to run them as, for a run
    /// that starts a server of its own (`console,slow,postgres`).
    PostgresServer,
}

impl Need {
    /// Why this machine cannot run the block, or `None` when it can: the very probes the runs
    /// decide their own skips by.
    pub fn missing(self) -> Option<String> {
        match self {
            Need::Root => retrykey_faults::tmpfs::can_mount().err(),
            Need::PostgresServer => retrykey_faults::own_pg::can_run_server().err(),
        }
    }
}

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
    /// What the block needs from the machine, if anything.
    pub needs: Option<Need>,
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

/// The Markdown files whose commands are checked, relative to the workspace root.
pub fn documents() -> Result<Vec<PathBuf>, Error> {
    documents_in(&workspace_root())
}

/// The pages under `root` whose blocks are read, in reading order: `README.md`, every `.md`
/// under `docs/src` at any depth, then `labs/README.md` and each variant's `labs/*/README.md`.
pub fn documents_in(root: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files = vec![PathBuf::from("README.md")];
    let mut pages = Vec::new();
    markdown_under(&root.join("docs/src"), &mut pages)?;
    pages.sort();
    files.extend(pages);
    if root.join("labs/README.md").is_file() {
        files.push(PathBuf::from("labs/README.md"));
    }
    let mut variants: Vec<PathBuf> = list(&root.join("labs"))?
        .into_iter()
        .map(|dir| dir.join("README.md"))
        .filter(|readme| readme.is_file())
        .collect();
    variants.sort();
    files.extend(variants);
    Ok(files
        .into_iter()
        .map(|file| file.strip_prefix(root).unwrap_or(&file).to_path_buf())
        .collect())
}

/// The entries of a folder.
fn list(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    Ok(entries.flatten().map(|entry| entry.path()).collect())
}

/// Every `.md` file under `dir`, at any depth.
fn markdown_under(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), Error> {
    for path in list(dir)? {
        if path.is_dir() {
            markdown_under(&path, found)?;
        } else if path.extension().is_some_and(|ext| ext == "md") {
            found.push(path);
        }
    }
    Ok(())
}

/// The blocks of `file` (relative to the workspace root).
pub fn read_document(file: &Path) -> Result<Walkthrough, Error> {
    let text = read(workspace_root().join(file))?;
    parse(file, &text)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::documents_in;
    use crate::Scratch;

    // Pages in subfolders of docs/src and each variant's README are read; other files are not.
    #[test]
    fn reads_subfolder_pages_and_variant_readmes() {
        let scratch = Scratch::empty(
            "documents",
            &[
                "README.md",
                "docs/src/ch01-a.md",
                "docs/src/deep/er/page.md",
                "docs/src/diagrams/a.svg",
                "docs/book/ch01-a.md",
                "labs/README.md",
                "labs/b-variant/README.md",
                "labs/a-variant/README.md",
                "labs/a-variant/NOTES.md",
                "labs/no-readme/Cargo.toml",
            ],
        );
        let found = documents_in(&scratch.0).unwrap_or_else(|e| panic!("{e}"));
        let expected: Vec<&Path> = [
            "README.md",
            "docs/src/ch01-a.md",
            "docs/src/deep/er/page.md",
            "labs/README.md",
            "labs/a-variant/README.md",
            "labs/b-variant/README.md",
        ]
        .iter()
        .map(Path::new)
        .collect();
        assert_eq!(found, expected);
    }
}
