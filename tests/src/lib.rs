//! Workspace-level checks of the lab itself.
//!
//! The negative variants under `labs/` must keep failing exactly the checks they declare, and
//! every command shown in `docs/` and `README.md` must keep printing what the text says. This
//! crate reads the declarations, locates each variant's change in the code it mirrors,
//! reads `cargo test` output, and runs the walkthrough.
//!
//! # Reading order
//!
//! 1. `declared.rs`: what a variant promises (`[package.metadata.negative]`).
//! 2. `bin/negatives.rs` with `cargo_test.rs`, `test_output.rs` and `verdict.rs`: how
//!    `just test-negatives` runs a variant's real suite and holds it to that promise.
//! 3. `diff.rs` and `tidy/located.rs`: why a variant differs from the file it copies only
//!    inside its `// NEGATIVE:` blocks.
//! 4. `walkthrough/`: how every command in the book is run and its output compared, and
//!    `book_rules.rs`: the book's conventions (rhythm, captions, width, compiled solutions).
//! 5. `tidy.rs`: the rules of `ARCHITECTURE.md`, read from the manifests and the sources.
//! 6. Then as needed: `exercise/` (`just exercise`), `class.rs` with `plan.rs` and
//!    `progress.rs` (`just class-plan`, `just progress`), `diagrams/` (the book's pictures),
//!    `mutation.rs` (`just mutants`), `simulated.rs` with `bin/simulate.rs`
//!    (`just simulate`), and `help.rs` (every program answers `--help`, and lists every flag
//!    the book and the justfile pass it).

pub mod book_rules;
pub mod cargo_test;
pub mod class;
pub mod conformed;
pub mod declared;
pub mod diagrams;
pub mod diff;
pub mod exercise;
pub mod help;
pub mod mutation;
pub mod plan;
pub mod progress;
pub mod scenario;
pub mod simulated;
pub mod test_output;
pub mod tidy;
pub mod verdict;
pub mod walkthrough;

use std::path::PathBuf;

pub use declared::{
    Declared, assert_fails_as_declared, declared, mirrored_package, postgres_configured,
    skips_are_failures, variants,
};

/// Held by every cargo command that a test runs in this workspace, so that they run one at a
/// time. Two cargo commands side by side can fail each other for no fault of the code: cargo
/// globs the members and then reads each manifest, while `just exercise` adds a member under
/// `exercises/` and `just remove-exercise` removes one; and two builds of one package with
/// different features (`cargo test -p X` turns on its test knobs, `cargo run -p X` does not)
/// write the same `target/debug/<program>`, so one command can run the other's program.
pub static CARGO: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes [`CARGO`], whatever a panicking holder left behind.
pub fn cargo_turn() -> std::sync::MutexGuard<'static, ()> {
    CARGO
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The workspace root (the folder holding the top-level `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent()
        .expect("tests/ sits in the workspace root")
        .to_path_buf()
}

/// Why a workspace check could not even be carried out.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O failure.
        source: std::io::Error,
    },
    /// A variant's Cargo.toml has no usable `[package.metadata.negative]` table.
    #[error("{path}: no valid [package.metadata.negative] table: {reason}")]
    Declaration {
        /// The manifest.
        path: PathBuf,
        /// What is missing or malformed.
        reason: String,
    },
    /// A walkthrough block is malformed.
    #[error("{file}:{line}: {reason}")]
    Walkthrough {
        /// The Markdown file.
        file: PathBuf,
        /// The line where the problem starts.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Reads a file, naming it in the error.
pub fn read(path: impl Into<PathBuf>) -> Result<String, Error> {
    let path = path.into();
    std::fs::read_to_string(&path).map_err(|source| Error::Read { path, source })
}

/// A scratch workspace for fixtures, removed when dropped.
#[cfg(test)]
pub(crate) struct Scratch(pub(crate) PathBuf);

#[cfg(test)]
impl Scratch {
    /// A fresh folder holding `files`, each a path relative to it and its text.
    pub(crate) fn new(name: &str, files: &[(&str, &str)]) -> Scratch {
        let root =
            std::env::temp_dir().join(format!("retrykey-tests-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (file, text) in files {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().expect("a file has a folder"))
                .expect("the scratch folder is writable");
            std::fs::write(&path, text).expect("the scratch folder is writable");
        }
        Scratch(root)
    }

    /// A fresh folder holding `files`, each with one line of text.
    pub(crate) fn empty(name: &str, files: &[&str]) -> Scratch {
        let files: Vec<(&str, &str)> = files.iter().map(|file| (*file, "text\n")).collect();
        Scratch::new(name, &files)
    }
}

#[cfg(test)]
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
