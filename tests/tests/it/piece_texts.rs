//! What a piece tells a student names only what exists.
//!
//! A piece's summary, hints and expected behaviours reach the student through `just exercise`
//! and `just check-exercise`. Two of them once promised `Error::Full`, a variant that had been
//! renamed `Error::Capacity`: a student then looks for a name the code does not have.

use std::path::Path;

use retrykey_tests::exercise::blank::pieces;
use retrykey_tests::tidy::sources::rust_files;
use retrykey_tests::workspace_root;

/// Every `Type::name` path of a text, and every code span that is a Rust name or path.
fn names(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for token in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '`')) {
        let quoted = token.starts_with('`') && token.ends_with('`') && token.len() > 2;
        let bare = token.trim_matches('`').trim_end_matches(':');
        let path = bare.contains("::") && bare.starts_with(|c: char| c.is_ascii_uppercase());
        if (quoted || path) && is_rust_name(bare) {
            found.push(bare.to_string());
        }
    }
    found
}

fn is_rust_name(text: &str) -> bool {
    !text.is_empty()
        && text.split("::").all(|segment| {
            segment.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && segment.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
}

/// The Rust sources of the crates, as one text per file.
fn sources(root: &Path) -> Vec<String> {
    (rust_files(&root.join("crates"))
        .expect("crates/ is readable")
        .iter())
    .map(|path| std::fs::read_to_string(path).expect("readable"))
    .collect()
}

/// The names of `text` that no source holds: a path must appear whole (`Error::Capacity`), a
/// single name as a word.
fn unknown(text: &str, sources: &[String]) -> Vec<String> {
    let word = |source: &str, name: &str| {
        source.match_indices(name).any(|(at, _)| {
            let before = source[..at].chars().next_back();
            let after = source[at + name.len()..].chars().next();
            let edge = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            edge(before) && edge(after)
        })
    };
    names(text)
        .into_iter()
        .filter(|name| !sources.iter().any(|source| word(source, name)))
        .collect()
}

// Every name a piece's summary, hints and expectations give (`Type::name`, or a code span)
// exists in the crates' sources.
#[test]
fn every_piece_names_only_what_exists() {
    let root = workspace_root();
    let sources = sources(&root);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for piece in pieces(&root).expect("tests/blanks.toml reads") {
        let hints = piece.blank.iter().map(|blank| &blank.hint);
        let expects = piece.spec.iter().map(|spec| &spec.expects);
        for text in std::iter::once(&piece.summary).chain(hints).chain(expects) {
            checked += names(text).len();
            for name in unknown(text, &sources) {
                wrong.push(format!("piece {}: names `{name}`: {text}", piece.name));
            }
        }
    }
    assert!(
        checked >= 10,
        "the texts name the code: {checked} names found"
    );
    assert!(
        wrong.is_empty(),
        "names that exist nowhere:\n{}",
        wrong.join("\n")
    );
}

// A renamed variant and a code span naming nothing are found; existing names pass.
#[test]
fn a_name_that_does_not_exist_is_found() {
    let sources = vec!["enum Error { Capacity }\nfn f() { Error::Capacity; }".to_string()];
    let text = "a full store is Error::Full, not Error::Capacity; see `nowhere` and `Capacity`";
    assert_eq!(unknown(text, &sources), ["Error::Full", "nowhere"]);
    assert!(unknown("plain words: no names here.", &sources).is_empty());
}
