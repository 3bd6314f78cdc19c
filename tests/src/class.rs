//! The class: its pages in reading order, each page's track, and the exercises it asks for.
//!
//! `docs/src/class.toml` declares the pages; `tests/blanks.toml` declares the pieces to write,
//! each under its chapter. `just class-plan` and `just progress` both read the class from here,
//! so the plan and a student's progress always list the same work.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::exercise::ExerciseError;
use crate::exercise::blank::{Piece, pieces};

/// The class declaration, from the workspace root.
pub const CLASS_FILE: &str = "docs/src/class.toml";

/// Whether a page belongs to the one class day or to a session of its own.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Track {
    /// The lab's promise: one class day.
    Core,
    /// A session that stands on the core, or on the one extension it names.
    Extension,
}

impl Track {
    /// The word a table shows.
    pub fn name(self) -> &'static str {
        match self {
            Track::Core => "core",
            Track::Extension => "extension",
        }
    }
}

/// One page of the class, as `docs/src/class.toml` declares it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Page {
    /// The short name a plan line shows: `ch01`.
    pub label: String,
    /// The Markdown file, under `docs/src`.
    pub file: PathBuf,
    /// Core or extension.
    pub track: Track,
    /// The one extension page this one stands on, besides the core.
    #[serde(default)]
    pub needs: Option<String>,
    /// The variants the page asks a student to make green (`just exercise VARIANT`).
    pub exercises: Vec<String>,
}

impl Page {
    /// The chapter number of a `chNN` label, the key of its pieces in `tests/blanks.toml`.
    pub fn chapter(&self) -> Option<u32> {
        self.label.strip_prefix("ch")?.parse().ok()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassFile {
    page: Vec<Page>,
}

/// The class: its pages in order, and every piece to write.
#[derive(Clone, Debug)]
pub struct Class {
    /// The pages, in reading order.
    pub pages: Vec<Page>,
    /// Every piece of `tests/blanks.toml`.
    pub pieces: Vec<Piece>,
}

impl Class {
    /// The pieces a page asks a student to write, in their declared order.
    pub fn pieces_of<'a>(&'a self, page: &Page) -> impl Iterator<Item = &'a Piece> + 'a {
        let chapter = page.chapter();
        self.pieces
            .iter()
            .filter(move |piece| Some(piece.chapter) == chapter)
    }
}

/// Why the class declaration cannot be read, or does not hold together.
#[derive(Debug, thiserror::Error)]
pub enum ClassError {
    /// The file could not be read or parsed.
    #[error("{}: {reason}", path.display())]
    File {
        /// The declaration.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The pieces could not be read.
    #[error(transparent)]
    Pieces(#[from] ExerciseError),
    /// A page names something that is not there.
    #[error("{CLASS_FILE}: page {label}: {reason}")]
    Page {
        /// The page's label.
        label: String,
        /// What does not hold.
        reason: String,
    },
}

/// Reads the class from the workspace at `root`, and checks that every name in it exists.
pub fn load(root: &Path) -> Result<Class, ClassError> {
    let path = root.join(CLASS_FILE);
    let file_error = |reason: String| ClassError::File {
        path: path.clone(),
        reason,
    };
    let text = std::fs::read_to_string(&path).map_err(|error| file_error(error.to_string()))?;
    let file: ClassFile = toml::from_str(&text).map_err(|error| file_error(error.to_string()))?;
    let class = Class {
        pages: file.page,
        pieces: pieces(root)?,
    };
    validate(root, &class)?;
    Ok(class)
}

fn validate(root: &Path, class: &Class) -> Result<(), ClassError> {
    for (index, page) in class.pages.iter().enumerate() {
        let refuse = |reason: String| ClassError::Page {
            label: page.label.clone(),
            reason,
        };
        if !root.join("docs/src").join(&page.file).is_file() {
            return Err(refuse(format!("no page docs/src/{}", page.file.display())));
        }
        if class.pages[..index]
            .iter()
            .any(|other| other.label == page.label)
        {
            return Err(refuse("the label is used twice".into()));
        }
        if let Some(needs) = &page.needs {
            // A page stands only on what comes before it: no chapter needs a later one.
            let earlier = class.pages[..index]
                .iter()
                .find(|other| &other.label == needs);
            match earlier {
                Some(other) if other.track == Track::Extension => {}
                Some(_) => return Err(refuse(format!("needs {needs}, which is core already"))),
                None => return Err(refuse(format!("needs {needs}, no earlier page"))),
            }
        }
        for variant in &page.exercises {
            if !root.join("labs").join(variant).join("Cargo.toml").is_file() {
                return Err(refuse(format!("exercise {variant}: no labs/{variant}")));
            }
        }
    }
    if let Some(core_after) = class
        .pages
        .windows(2)
        .find(|pair| pair[0].track == Track::Extension && pair[1].track == Track::Core)
    {
        return Err(ClassError::Page {
            label: core_after[1].label.clone(),
            reason: "a core page after an extension: the core is read first".into(),
        });
    }
    for piece in &class.pieces {
        let declared = class
            .pages
            .iter()
            .any(|page| page.chapter() == Some(piece.chapter));
        if !declared {
            return Err(ClassError::Page {
                label: format!("ch{:02}", piece.chapter),
                reason: format!("piece {} has no page in the class", piece.name),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_class_holds_together() {
        let class = load(&crate::workspace_root()).expect("docs/src/class.toml is valid");
        assert_eq!(class.pages.len(), 8, "one page per chapter");
        assert!(class.pages.iter().any(|page| page.track == Track::Core));
    }
}
