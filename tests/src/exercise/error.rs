//! Why an exercise could not be created or checked: one error for every exercise command, kept
//! apart so that the class's pages can report a piece that fails to load.

use std::path::PathBuf;

use crate::diff::MARKER;

/// Why an exercise could not be created or checked.
#[derive(Debug, thiserror::Error)]
pub enum ExerciseError {
    /// No lab of that name.
    #[error("no variant named {0} under labs/ (`ls labs` lists them)")]
    UnknownVariant(String),
    /// A copy is there already; it may hold a student's work.
    #[error("{} exists already and may hold your work: nothing changed (pass --force to replace it)", .0.display())]
    Exists(PathBuf),
    /// No copy of that name.
    #[error("no exercise at {}: create it with `just exercise VARIANT`", .0.display())]
    Missing(PathBuf),
    /// No write-it-yourself piece of that name.
    #[error("no piece named {name} in tests/blanks.toml: the pieces are {}", known.join(", "))]
    UnknownPiece {
        /// The name asked for.
        name: String,
        /// The pieces there are.
        known: Vec<String>,
    },
    /// A piece's declaration does not match its source file.
    #[error("{}: {reason}", path.display())]
    Piece {
        /// The source file.
        path: PathBuf,
        /// What does not match.
        reason: String,
    },
    /// A blank copy's test program did not build.
    #[error("{0}")]
    Build(#[from] BuildError),
    /// A copy's name would not make a package name.
    #[error("`{0}` cannot name an exercise: use lowercase letters, digits and dashes")]
    BadName(String),
    /// The lab's `src/lib.rs` has no marked change to hide.
    #[error("{}: no `{MARKER}` comment to remove", .0.display())]
    NoMarker(PathBuf),
    /// A manifest is not what a lab or an exercise looks like.
    #[error("{}: {reason}", path.display())]
    Manifest {
        /// The Cargo.toml.
        path: PathBuf,
        /// What is missing or malformed.
        reason: String,
    },
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O failure.
        source: std::io::Error,
    },
    /// `cargo test` could not be started.
    #[error("cannot run cargo test: {0}")]
    Cargo(std::io::Error),
}

/// Why the build of an exercise's test program failed: cargo's own words went to stderr.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Cargo could not be started.
    #[error("cannot run cargo: {0}")]
    Cargo(std::io::Error),
    /// The code does not compile; the compiler's messages were printed above.
    #[error("does not compile: the compiler's messages are above")]
    Compile,
    /// Cargo said nothing of a package's test program.
    #[error("cargo built no test program for {0}")]
    NoProgram(String),
}
