//! Write-it-yourself pieces: a correct file copied with the bodies that carry its lesson
//! replaced by `todo!("hint")`, and the stage's checks as the spec, in teaching order.
//!
//! The pieces are declared in `tests/blanks.toml`. Each names the correct file, the variant
//! whose manifest and test program the copy borrows (the variant mirrors the same file, so its
//! test program already runs the stage's checks against that file's functions), the functions
//! to blank with a one-line hint each, and the checks in the order a student should meet them.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{ExerciseError, copy_tree, io, set_aside};

/// The file, from the workspace root, that declares the pieces.
pub const PIECES_FILE: &str = "tests/blanks.toml";

/// The folder, from the workspace root, of each piece's wrong solutions (`<piece>/*.rs`).
pub const WRONG_DIR: &str = "tests/blanks";

/// One write-it-yourself piece, as `tests/blanks.toml` declares it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Piece {
    /// The piece's name: `just exercise --blank NAME`.
    pub name: String,
    /// The chapter that teaches it.
    pub chapter: u32,
    /// The correct file, from the workspace root.
    pub source: PathBuf,
    /// The variant (`labs/<harness>`) mirroring `source`, whose manifest and tests are borrowed.
    #[serde(default)]
    pub harness: Option<String>,
    /// For a piece that no variant mirrors: its own test program and library root.
    #[serde(default)]
    pub own: Option<Own>,
    /// What the piece does, for the copy's README.
    pub summary: String,
    /// The kind of code the bodies are, which sets the pace they are written at.
    pub kind: Kind,
    /// What to read before writing, as the brief lists it: an item of the workspace's code
    /// (`path/to/file.rs#Type::method`, `#Type`, `#function`, `#CONST`), whose doc comment and
    /// signature the student reads, or a section of a page (`docs/src/page.md#Heading`).
    pub reads: Vec<String>,
    /// The functions whose bodies the student writes.
    pub blank: Vec<Blank>,
    /// The checks, in teaching order: the first that fails is the one to work on.
    pub spec: Vec<Spec>,
}

/// The kind of code a piece's bodies are.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One thread, no `.await`.
    Plain,
    /// State shared between threads under a lock.
    Concurrent,
    /// `async` code: futures, `.await`, timeouts.
    Async,
}

impl Kind {
    /// The word `tests/blanks.toml` and a plan show.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Plain => "plain",
            Kind::Concurrent => "concurrent",
            Kind::Async => "async",
        }
    }
}

/// What a piece that no variant mirrors brings of its own.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Own {
    /// The copy's `tests/it/main.rs`, from the workspace root; the piece's name with
    /// underscores stands for the copy's crate.
    pub program: PathBuf,
    /// The copy's `src/lib.rs`; the blanked source becomes `src/<module>.rs`.
    pub lib: String,
    /// The module the source becomes.
    pub module: String,
    /// Workspace crates the copy depends on.
    pub dependencies: Vec<String>,
    /// Workspace crates its test program depends on.
    pub dev_dependencies: Vec<String>,
}

/// A function whose body becomes `todo!("<hint>")`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Blank {
    /// The function's name: the only `fn <name>` of the file, or the first after `after`.
    pub function: String,
    /// Text of the file before the function, when the name alone is not unique.
    #[serde(default)]
    pub after: Option<String>,
    /// What to write, in one line.
    pub hint: String,
}

/// One check of the spec: its name as `cargo test` prints it, and what it expects in one line.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// `module::check`.
    pub check: String,
    /// What the check expects, in one line.
    pub expects: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PiecesFile {
    piece: Vec<Piece>,
}

/// Reads the declared pieces from the workspace at `workspace`.
pub fn pieces(workspace: &Path) -> Result<Vec<Piece>, ExerciseError> {
    let path = workspace.join(PIECES_FILE);
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    let file: PiecesFile = toml::from_str(&text).map_err(|error| ExerciseError::Manifest {
        path: path.clone(),
        reason: error.to_string(),
    })?;
    Ok(file.piece)
}

/// The piece called `name`.
pub fn piece(workspace: &Path, name: &str) -> Result<Piece, ExerciseError> {
    let pieces = pieces(workspace)?;
    let known = pieces.iter().map(|piece| piece.name.clone()).collect();
    pieces
        .into_iter()
        .find(|piece| piece.name == name)
        .ok_or_else(|| ExerciseError::UnknownPiece {
            name: name.to_string(),
            known,
        })
}

/// Why a function could not be found or replaced in a source file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LocateError {
    /// No `fn <name>` (after the given line).
    #[error("no `fn {0}` in the file")]
    Missing(String),
    /// More than one: the piece must say `after` which line to look.
    #[error("`fn {0}` is not unique: give the line it follows (`after`)")]
    Ambiguous(String),
    /// The `after` line is not in the file.
    #[error("no line `{0}` to look after")]
    NoAnchor(String),
    /// The function has no body, or its braces do not balance.
    #[error("`fn {0}` has no body that ends")]
    NoBody(String),
    /// A wrong solution does not apply.
    #[error("the wrong solution does not apply: {0}")]
    Patch(String),
}

/// The byte range of the body of `fn <function>` in `source`, braces included.
pub fn locate_body(
    source: &str,
    function: &str,
    after: Option<&str>,
) -> Result<std::ops::Range<usize>, LocateError> {
    let start = match after {
        Some(line) => source
            .find(line)
            .ok_or_else(|| LocateError::NoAnchor(line.to_string()))?,
        None => 0,
    };
    let code = mask(source);
    let needle = format!("fn {function}");
    let mut found = Vec::new();
    let mut from = start;
    while let Some(at) = code[from..].find(&needle) {
        let at = from + at;
        let before = code[..at].chars().next_back();
        let next = code[at + needle.len()..].chars().next();
        let word_start = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let word_end = matches!(next, Some('(' | '<' | ' '));
        if word_start && word_end {
            found.push(at);
        }
        from = at + needle.len();
    }
    let at = match (found.as_slice(), after) {
        ([], _) => return Err(LocateError::Missing(function.to_string())),
        ([at], _) | ([at, ..], Some(_)) => *at,
        (_, None) => return Err(LocateError::Ambiguous(function.to_string())),
    };
    // The body opens at the first `{` outside parentheses and brackets after the name: no
    // signature in the pieces has a brace of its own (no const generic blocks).
    let bytes = code.as_bytes();
    let mut depth = 0i32;
    let mut open = None;
    for (offset, &byte) in bytes[at..].iter().enumerate() {
        match byte {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b';' if depth == 0 => break,
            b'{' if depth == 0 => {
                open = Some(at + offset);
                break;
            }
            _ => {}
        }
    }
    let open = open.ok_or_else(|| LocateError::NoBody(function.to_string()))?;
    let close =
        matching_brace(&code, open).ok_or_else(|| LocateError::NoBody(function.to_string()))?;
    Ok(open..close + 1)
}

/// The offset of the `}` that closes the `{` at `open` in masked code.
pub(crate) fn matching_brace(code: &str, open: usize) -> Option<usize> {
    let mut level = 0i32;
    for (offset, &byte) in code.as_bytes()[open..].iter().enumerate() {
        match byte {
            b'{' => level += 1,
            b'}' => {
                level -= 1;
                if level == 0 {
                    return Some(open + offset);
                }
            }
            _ => {}
        }
    }
    None
}

/// `source` with the contents of comments, strings and character literals replaced by spaces
/// (same length, same byte offsets), so that braces and names inside them are not code.
pub(crate) fn mask(source: &str) -> String {
    let chars: Vec<(usize, char)> = source.char_indices().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |out: &mut String, c: char| {
        for _ in 0..c.len_utf8() {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        let next = chars.get(i + 1).map(|&(_, c)| c);
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i].1 != '\n' {
                blank(&mut out, chars[i].1);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut nesting = 0;
            while i < chars.len() {
                let (c, next) = (chars[i].1, chars.get(i + 1).map(|&(_, c)| c));
                if c == '/' && next == Some('*') {
                    nesting += 1;
                    blank(&mut out, c);
                    blank(&mut out, '*');
                    i += 2;
                } else if c == '*' && next == Some('/') {
                    nesting -= 1;
                    blank(&mut out, c);
                    blank(&mut out, '/');
                    i += 2;
                    if nesting == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c);
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && raw_string_at(&chars, i) {
            let mut hashes = 0;
            let mut j = i + 1;
            while chars[j].1 == '#' {
                hashes += 1;
                j += 1;
            }
            // From the opening quote to the quote followed by as many hashes.
            let mut end = j + 1;
            while end < chars.len() {
                if chars[end].1 == '"'
                    && (1..=hashes).all(|k| chars.get(end + k).is_some_and(|&(_, c)| c == '#'))
                {
                    end += hashes + 1;
                    break;
                }
                end += 1;
            }
            for &(_, c) in &chars[i..end.min(chars.len())] {
                blank(&mut out, c);
            }
            i = end;
        } else if c == '"' {
            blank(&mut out, c);
            i += 1;
            while i < chars.len() && chars[i].1 != '"' {
                if chars[i].1 == '\\' {
                    blank(&mut out, '\\');
                    i += 1;
                }
                if i < chars.len() {
                    blank(&mut out, chars[i].1);
                    i += 1;
                }
            }
            if i < chars.len() {
                blank(&mut out, '"');
                i += 1;
            }
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}') or a lifetime ('a): only the first
            // is masked.
            let literal_end = if next == Some('\\') {
                (i + 2..chars.len()).find(|&j| chars[j].1 == '\'')
            } else if chars.get(i + 2).is_some_and(|&(_, c)| c == '\'') {
                Some(i + 2)
            } else {
                None
            };
            match literal_end {
                Some(end) => {
                    for &(_, c) in &chars[i..=end] {
                        blank(&mut out, c);
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether a raw string literal (`r"…"`, `r#"…"#`) starts at `i` (not an identifier ending in r).
fn raw_string_at(chars: &[(usize, char)], i: usize) -> bool {
    let before = i.checked_sub(1).map(|j| chars[j].1);
    if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
        return false;
    }
    let mut j = i + 1;
    while j < chars.len() && chars[j].1 == '#' {
        j += 1;
    }
    chars.get(j).is_some_and(|&(_, c)| c == '"')
}

/// The indentation of the line holding byte `at`.
fn indent_at(source: &str, at: usize) -> String {
    let line_start = source[..at].rfind('\n').map_or(0, |n| n + 1);
    source[line_start..]
        .chars()
        .take_while(|c| *c == ' ')
        .collect()
}

/// `source` with each blanked function's body replaced by `todo!("<hint>")`.
pub fn blank_source(source: &str, blanks: &[Blank]) -> Result<String, LocateError> {
    let mut ranges = Vec::new();
    for blank in blanks {
        let mut range = locate_body(source, &blank.function, blank.after.as_deref())?;
        // A body that is one `async move` block (a function returning `impl Future`) keeps
        // the block: `todo!()` itself is not a future.
        let inner = source[range.start + 1..range.end - 1].trim_start();
        if let Some(rest) = inner.strip_prefix("async move {") {
            let open = range.end - 1 - inner.len() + "async move ".len();
            let close = matching_brace(&mask(source), open)
                .ok_or_else(|| LocateError::NoBody(blank.function.clone()))?;
            if source[close + 1..range.end - 1].trim().is_empty() && !rest.is_empty() {
                range = open..close + 1;
            }
        }
        let indent = indent_at(source, range.start);
        // A format string: quotes, backslashes and braces are escaped.
        let hint = (blank.hint.replace('\\', "\\\\").replace('"', "\\\""))
            .replace('{', "{{")
            .replace('}', "}}");
        let body = format!("{{\n{indent}    todo!(\"{hint}\")\n{indent}}}");
        ranges.push((range, body));
    }
    Ok(replace_ranges(source, ranges))
}

/// Why a wrong solution could not be put in place of the reference bodies.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The file has no `@@` hunk.
    #[error("no `@@` hunk: a wrong solution is a change to the reference")]
    NoHunk,
    /// A hunk line starts with something other than ` `, `-` or `+`.
    #[error("line {0}: a hunk line starts with ` `, `-` or `+`")]
    Malformed(usize),
    /// A hunk's old lines are not in the reference.
    #[error("hunk {0}: its old lines are not in the reference")]
    NotFound(usize),
    /// A hunk's old lines are in the reference more than once.
    #[error("hunk {0}: its old lines are in the reference more than once")]
    Ambiguous(usize),
    /// A hunk changes the reference outside the bodies the piece blanks.
    #[error("hunk {0}: it changes the reference outside the bodies the piece blanks")]
    OutsideBlanks(usize),
    /// A blanked function is not in the reference.
    #[error(transparent)]
    Locate(#[from] LocateError),
}

/// One hunk of a wrong solution: the reference's lines and what replaces them.
struct Hunk {
    old: String,
    new: String,
}

/// The hunks of a wrong solution: after its `//` header, each `@@` line opens a hunk of lines
/// marked ` ` (kept), `-` (removed) or `+` (added). An empty line is a kept blank line.
fn hunks(patch: &str) -> Result<Vec<Hunk>, PatchError> {
    let mut hunks: Vec<(Vec<&str>, Vec<&str>)> = Vec::new();
    for (number, line) in patch.lines().enumerate() {
        if line.starts_with("@@") {
            hunks.push((Vec::new(), Vec::new()));
            continue;
        }
        let Some((old, new)) = hunks.last_mut() else {
            if line.starts_with("//") || line.trim().is_empty() {
                continue;
            }
            return Err(PatchError::Malformed(number + 1));
        };
        match line.split_at_checked(1) {
            None => {
                old.push("");
                new.push("");
            }
            Some((" ", text)) => {
                old.push(text);
                new.push(text);
            }
            Some(("-", text)) => old.push(text),
            Some(("+", text)) => new.push(text),
            _ => return Err(PatchError::Malformed(number + 1)),
        }
    }
    if hunks.is_empty() {
        return Err(PatchError::NoHunk);
    }
    Ok(hunks
        .into_iter()
        .map(|(old, new)| Hunk {
            old: old.join("\n") + "\n",
            new: new.join("\n") + "\n",
        })
        .collect())
}

/// `reference` with the wrong solution `patch` applied. Each hunk must match the reference at
/// exactly one place, inside the body of a function the piece blanks: a wrong solution is a
/// wrong body, and a reference that moved on makes it fail here, by name.
pub fn apply_wrong(reference: &str, blanks: &[Blank], patch: &str) -> Result<String, PatchError> {
    let bodies = (blanks.iter())
        .map(|blank| locate_body(reference, &blank.function, blank.after.as_deref()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut ranges = Vec::new();
    for (number, hunk) in hunks(patch)?.into_iter().enumerate() {
        let number = number + 1;
        let mut found = reference.match_indices(&hunk.old).map(|(at, _)| at);
        let at = found.next().ok_or(PatchError::NotFound(number))?;
        if found.next().is_some() {
            return Err(PatchError::Ambiguous(number));
        }
        let range = at..at + hunk.old.len();
        // The change itself, not its context, must fall in a blanked body.
        let (kept_before, kept_after) = shared_ends(&hunk.old, &hunk.new);
        let changed = range.start + kept_before..range.end - kept_after;
        let inside =
            (bodies.iter()).any(|body| body.start < changed.start && changed.end <= body.end);
        if !inside {
            return Err(PatchError::OutsideBlanks(number));
        }
        ranges.push((range, hunk.new));
    }
    Ok(replace_ranges(reference, ranges))
}

/// How many bytes `old` and `new` share at their start, and then at their end.
fn shared_ends(old: &str, new: &str) -> (usize, usize) {
    let before = (old.bytes().zip(new.bytes()))
        .take_while(|(a, b)| a == b)
        .count();
    let after = (old.bytes().skip(before).rev())
        .zip(new.bytes().skip(before).rev())
        .take_while(|(a, b)| a == b)
        .count();
    (before, after)
}

fn replace_ranges(source: &str, mut ranges: Vec<(std::ops::Range<usize>, String)>) -> String {
    ranges.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    let mut out = source.to_string();
    for (range, text) in ranges {
        out.replace_range(range, &text);
    }
    out
}

/// The line a blank copy starts with: until the bodies are written, the imports and arguments
/// they use look unused. (Helpers the bodies call are left to the compiler's "never used"
/// warnings, which name them for the student.)
const ALLOW_UNUSED: &str = "// Until the blank bodies are written, what they use looks unused: then delete this.\n\
#![allow(unused_imports, unused_variables, unused_mut)]\n";

/// The correct file as a blank copy's `src/lib.rs`: the mirror header dropped, the lint
/// allowance added after the module documentation, and the bodies blanked.
pub fn blank_lib(source: &str, blanks: &[Blank]) -> Result<String, LocateError> {
    let source = strip_mirror_header(source);
    let blanked = blank_source(&source, blanks)?;
    Ok(insert_after_module_docs(&blanked, ALLOW_UNUSED))
}

/// The correct file as a reference copy's `src/lib.rs`: the mirror header dropped.
pub fn reference_lib(source: &str) -> String {
    strip_mirror_header(source)
}

/// The source without its mirror header and without the book's `// ANCHOR` lines: neither is
/// part of the code a student reads.
fn strip_mirror_header(source: &str) -> String {
    let source = match source.split_once('\n') {
        Some((first, rest)) if first.starts_with("// Mirrored by ") => rest,
        _ => source,
    };
    (source.split_inclusive('\n'))
        .filter(|line| !line.trim_start().starts_with("// ANCHOR"))
        .collect()
}

fn insert_after_module_docs(source: &str, text: &str) -> String {
    let mut out = String::with_capacity(source.len() + text.len());
    let mut inserted = false;
    for line in source.split_inclusive('\n') {
        if !inserted && !line.starts_with("//!") {
            out.push_str(text);
            inserted = true;
        }
        out.push_str(line);
    }
    out
}

/// The manifest of a copy of a piece with its own test program.
fn own_manifest(piece: &Piece, own: &Own, name: &str) -> String {
    let mut out = format!(
        "[package]\nname = \"{}\"\ndescription = \"Exercise: write {} yourself (just \
         check-exercise {name})\"\nversion.workspace = true\nedition.workspace = true\n\
         rust-version.workspace = true\nlicense.workspace = true\npublish.workspace = true\n\n\
         [lib]\nname = \"{}\"\npath = \"src/lib.rs\"\ntest = false\n\n[dependencies]\n",
        super::package_name(name),
        piece.source.display(),
        name.replace('-', "_"),
    );
    for dependency in &own.dependencies {
        out.push_str(&format!("{dependency}.workspace = true\n"));
    }
    out.push_str("\n[dev-dependencies]\n");
    for dependency in &own.dev_dependencies {
        out.push_str(&format!("{dependency}.workspace = true\n"));
    }
    out.push_str(&format!(
        "\n[lints]\nworkspace = true\n\n\
         # The piece this exercise was copied from (`{}` is the reference).\n\
         [package.metadata.exercise]\nblank = \"{}\"\n",
        piece.source.display(),
        piece.name
    ));
    out
}

/// The copy's manifest: the variant's, renamed, with the piece recorded instead of the
/// variant's declared failures.
fn blank_manifest(text: &str, piece: &Piece, variant: &str, name: &str) -> Result<String, String> {
    let old_name = format!("name = \"{variant}\"");
    if !text.lines().any(|line| line.trim() == old_name) {
        return Err(format!("no `{old_name}` line in [package]"));
    }
    let crate_name = name.replace('-', "_");
    let mut out = String::new();
    let (mut in_negative, mut in_lib) = (false, false);
    let mut root = "path = \"src/lib.rs\"".to_string();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_negative = trimmed == "[package.metadata.negative]";
            in_lib = trimmed == "[lib]";
        }
        if in_negative {
            continue;
        }
        if trimmed == old_name {
            out.push_str(&format!("name = \"{}\"\n", super::package_name(name)));
        } else if trimmed.starts_with("description = ") {
            out.push_str(&format!(
                "description = \"Exercise: write {} yourself (just check-exercise {name})\"\n",
                piece.source.display()
            ));
        } else if in_lib {
            if trimmed.starts_with("path = ") {
                root = trimmed.to_string();
            }
        } else {
            out.push_str(&super::rename_bins(line, variant, name));
            out.push('\n');
        }
    }
    // The library is named after the exercise and rooted as the lab's is (a lab's root mounts
    // the copy, `src/lib.rs`); its unit tests are the borrowed program's.
    let lib = format!("[lib]\nname = \"{crate_name}\"\n{root}\ntest = false\n\n");
    let Some(at) = out.find("\n[") else {
        return Err("no table after [package]".to_string());
    };
    out.insert_str(at + 1, &lib);
    // The comment that explained the variant's `[lib]` table went with it.
    out = out.replace(
        "# The variant's checks are its one test program, tests/it; the library has no unit tests.\n",
        "",
    );
    while out.ends_with("\n\n") {
        out.pop();
    }
    out.push_str(&format!(
        "\n# The piece this exercise was copied from (`{}` is the reference).\n\
         [package.metadata.exercise]\nblank = \"{}\"\n",
        piece.source.display(),
        piece.name
    ));
    Ok(out)
}

/// A borrowed test or binary source, made to name the copy: the variant's crate name and the
/// type names it gave its bug become the copy's crate name and the correct names.
fn borrowed_source(text: &str, variant: &str, name: &str, renames: &[(String, String)]) -> String {
    let mut text = super::rename_bins(text, variant, name)
        .replace(&variant.replace('-', "_"), &name.replace('-', "_"))
        .replace(
            &format!("The variant `{variant}` under the shared checks: the ones its Cargo.toml declares must fail."),
            "The exercise under the shared checks: `just check-exercise` runs them in teaching order.",
        )
        .replace(
            &format!("The root of the `{variant}` lab."),
            "The root of this exercise.",
        )
        .replace(": the checks declared in Cargo.toml must fail.", ".")
        .replace(": the checks\n// declared in Cargo.toml must fail.", ".")
        .replace("this variant's", "this copy's")
        .replace("this variant", "this copy");
    for (correct, renamed) in renames {
        text = text.replace(renamed, correct);
    }
    text
}

/// The brief that replaces the variant's README.
pub(crate) fn brief(piece: &Piece, name: &str) -> String {
    let mut text = format!(
        "# Exercise: write {} yourself\n\n{}\n\n\
         `{}` is that file with the bodies below replaced by `todo!(\"…\")`: the \
         signatures, types and doc comments are kept. Write each body, then run the checks; \
         they stop at the first one that fails and say what it expects. Until the bodies are \
         written, the compiler warns that some helpers are never used: those are the ones the \
         bodies are meant to call.\n\n## The bodies to write\n\n",
        piece.source.display(),
        piece.summary,
        match &piece.own {
            Some(own) => format!("src/{}.rs", own.module),
            None => "src/lib.rs".to_string(),
        }
    );
    for blank in &piece.blank {
        text.push_str(&format!("- `fn {}`: {}\n", blank.function, blank.hint));
    }
    text.push_str(
        "\n## Read first\n\nThe bodies call these; read their doc comments and signatures \
         (and the primer sections) before you write:\n\n",
    );
    for read in &piece.reads {
        text.push_str(&format!("- `{read}`\n"));
    }
    text.push_str(&format!(
        "\n## The checks, in the order they run\n\n{} checks; the first that fails is the one to \
         work on.\n\n",
        piece.spec.len()
    ));
    for (number, spec) in piece.spec.iter().enumerate() {
        text.push_str(&format!(
            "{}. `{}`: {}\n",
            number + 1,
            spec.check,
            spec.expects
        ));
    }
    let check = format!("just check-exercise {name}");
    text.push_str(&format!(
        "\n## Commands\n\n```sh\n{check}   # the first failing check, or \"fixed\"\n```\n\n\
         The reference is `{}`; read it when you are done, not before.\n",
        piece.source.display()
    ));
    text
}

/// Where a copy's other files come from.
enum Borrowed {
    /// A variant's folder: manifest, tests, binaries.
    Folder(PathBuf),
    /// A piece's own test program.
    Program(String),
}

/// What a copy's `src/lib.rs` holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bodies<'a> {
    /// The blanks: `todo!("hint")`.
    Blank,
    /// The correct file's own bodies.
    Reference,
    /// The reference changed by this wrong solution (`tests/blanks/<piece>/*.diff`).
    From(&'a str),
}

/// Copies the piece `piece` of the workspace at `workspace` into `<exercises>/<name>`, with
/// `bodies`. Refuses, changing nothing, when the copy exists and `force` is not given.
pub fn create_blank(
    workspace: &Path,
    exercises: &Path,
    piece: &Piece,
    name: &str,
    bodies: Bodies<'_>,
    force: bool,
) -> Result<PathBuf, ExerciseError> {
    if !super::is_name(name) {
        return Err(ExerciseError::BadName(name.to_string()));
    }
    let dest = exercises.join(name);
    if dest.exists() && !force {
        return Err(ExerciseError::Exists(dest));
    }
    let origin = |path: &Path| ExerciseError::Piece {
        path: path.to_path_buf(),
        reason: format!("{}: give either `harness` or `own`", piece.name),
    };
    // The borrowed files (the variant's folder, or the piece's own program), the manifest,
    // and the names the borrowed sources use for what the copy calls otherwise.
    let (borrowed, manifest, stands_for, renames) = match (&piece.harness, &piece.own) {
        (Some(variant), None) => {
            let lab = workspace.join("labs").join(variant);
            let manifest_path = lab.join("Cargo.toml");
            let text = std::fs::read_to_string(&manifest_path).map_err(io(&manifest_path))?;
            let bad = |reason| ExerciseError::Manifest {
                path: manifest_path.clone(),
                reason,
            };
            let parsed = crate::declared::parse_manifest(&text).map_err(bad)?;
            let renames: Vec<(String, String)> = parsed
                .declared
                .map(|declared| declared.renames.into_iter().collect())
                .unwrap_or_default();
            let manifest = blank_manifest(&text, piece, variant, name).map_err(bad)?;
            (Borrowed::Folder(lab), manifest, variant.clone(), renames)
        }
        (None, Some(own)) => {
            let program = workspace.join(&own.program);
            let text = std::fs::read_to_string(&program).map_err(io(&program))?;
            let manifest = own_manifest(piece, own, name);
            (
                Borrowed::Program(text),
                manifest,
                piece.name.clone(),
                Vec::new(),
            )
        }
        _ => return Err(origin(&workspace.join(PIECES_FILE))),
    };
    let source_path = workspace.join(&piece.source);
    let source = std::fs::read_to_string(&source_path).map_err(io(&source_path))?;
    let code = match bodies {
        Bodies::Blank => blank_lib(&source, &piece.blank),
        Bodies::Reference => Ok(reference_lib(&source)),
        Bodies::From(wrong) => apply_wrong(&reference_lib(&source), &piece.blank, wrong)
            .map_err(|error| LocateError::Patch(error.to_string())),
    }
    .map_err(|error| ExerciseError::Piece {
        path: source_path.clone(),
        reason: error.to_string(),
    })?;
    // A piece with its own library root keeps the source as a module of it.
    let mut files = vec![("Cargo.toml".to_string(), manifest)];
    match &piece.own {
        Some(own) => {
            files.push(("src/lib.rs".to_string(), own.lib.clone()));
            files.push((format!("src/{}.rs", own.module), code));
        }
        None => files.push(("src/lib.rs".to_string(), code)),
    }
    let readme = brief(piece, name);

    let staging = set_aside(exercises, name, "partial");
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
    }
    let edit = |text: &str| borrowed_source(text, &stands_for, name, &renames);
    match borrowed {
        Borrowed::Folder(lab) => copy_tree(&lab, &staging, &edit)?,
        Borrowed::Program(text) => files.push(("tests/it/main.rs".to_string(), edit(&text))),
    }
    files.push(("README.md".to_string(), readme));
    for (file, text) in files {
        let path = staging.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    if dest.exists() {
        super::remove(exercises, name)?;
    }
    std::fs::create_dir_all(exercises).map_err(io(exercises))?;
    std::fs::rename(&staging, &dest).map_err(io(&dest))?;
    Ok(dest)
}

/// A piece's wrong solutions: `(file name, text)` of each `tests/blanks/<piece>/*.diff`.
pub fn wrong_solutions(
    workspace: &Path,
    piece: &Piece,
) -> Result<Vec<(String, String)>, ExerciseError> {
    let dir = workspace.join(WRONG_DIR).join(&piece.name);
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(io(&dir))? {
        let path = entry.map_err(io(&dir))?.path();
        if path.extension().is_some_and(|ext| ext == "diff") {
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            let name = path.file_stem().unwrap_or_default().to_string_lossy();
            found.push((name.into_owned(), text));
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r##"//! Docs.

use std::fmt;

impl Thing {
    /// Apply.
    fn apply(&self, s: &str) -> Result<u32, E> {
        let x = "}{ not code";
        let c = '}';
        // } a comment {
        if s.is_empty() { return Err(E) }
        Ok(f::<'static>(x))
    }
}

impl Other for Thing {
    fn apply(&self) -> u32 {
        7
    }
}

fn raw() -> &'static str {
    r#"}"#
}
"##;

    fn blank(function: &str, after: Option<&str>) -> Blank {
        Blank {
            function: function.to_string(),
            after: after.map(str::to_string),
            hint: format!("write {function}"),
        }
    }

    // A name used twice needs the line it follows; with it, the right body is found.
    #[test]
    fn an_ambiguous_name_needs_its_line() {
        assert_eq!(
            locate_body(SOURCE, "apply", None),
            Err(LocateError::Ambiguous("apply".to_string()))
        );
        let range = locate_body(SOURCE, "apply", Some("impl Other for Thing")).unwrap();
        assert_eq!(&SOURCE[range], "{\n        7\n    }");
    }

    // Braces in strings, characters, raw strings and comments are not code.
    #[test]
    fn braces_outside_code_are_skipped() {
        let range = locate_body(SOURCE, "apply", Some("impl Thing {")).unwrap();
        let body = &SOURCE[range];
        assert!(body.starts_with("{\n        let x"), "{body}");
        assert!(body.ends_with("Ok(f::<'static>(x))\n    }"), "{body}");
        let raw = locate_body(SOURCE, "raw", None).unwrap();
        assert_eq!(&SOURCE[raw], "{\n    r#\"}\"#\n}");
    }

    // A blank keeps the signature and the doc comment, and holds the hint.
    #[test]
    fn a_blank_keeps_everything_but_the_body() {
        let out = blank_source(SOURCE, &[blank("apply", Some("impl Other for Thing"))]).unwrap();
        assert!(
            out.contains("    fn apply(&self) -> u32 {\n        todo!(\"write apply\")\n    }\n")
        );
        assert!(out.contains("fn apply(&self, s: &str) -> Result<u32, E> {\n        let x"));
        assert_eq!(out.matches("todo!").count(), 1);
    }

    // A wrong solution changes a blanked body where its hunk matches, and nothing else.
    #[test]
    fn a_wrong_solution_changes_a_blanked_body() {
        let blanks = [blank("apply", Some("impl Other for Thing"))];
        let wrong = "// Refused by x::y: eight.\n@@\n     fn apply(&self) -> u32 {\n-        7\n+        8\n     }\n";
        let out = apply_wrong(SOURCE, &blanks, wrong).unwrap();
        assert_eq!(out, SOURCE.replace("        7\n", "        8\n"));
    }

    // A hunk that misses, matches twice, or changes code outside the blanks is refused.
    #[test]
    fn a_wrong_solution_must_apply_once_inside_a_blank() {
        let blanks = [blank("apply", Some("impl Other for Thing"))];
        assert_eq!(
            apply_wrong(SOURCE, &blanks, "@@\n-        9\n+        8\n").err(),
            Some(PatchError::NotFound(1))
        );
        assert_eq!(
            apply_wrong(SOURCE, &blanks, "@@\n-    }\n+    };\n").err(),
            Some(PatchError::Ambiguous(1))
        );
        assert_eq!(
            apply_wrong(SOURCE, &blanks, "@@\n-use std::fmt;\n+use std::io;\n").err(),
            Some(PatchError::OutsideBlanks(1))
        );
        assert_eq!(
            apply_wrong(SOURCE, &blanks, "// only a header\n").err(),
            Some(PatchError::NoHunk)
        );
        assert_eq!(
            apply_wrong(SOURCE, &blanks, "@@\n*        7\n").err(),
            Some(PatchError::Malformed(2))
        );
    }

    // Names that only start like the function are not it; a missing one is a typed error.
    #[test]
    fn names_are_whole_words() {
        assert_eq!(
            locate_body("fn apply_once() {}\n", "apply", None),
            Err(LocateError::Missing("apply".to_string()))
        );
        assert_eq!(
            locate_body("fn f();\n", "f", None),
            Err(LocateError::NoBody("f".to_string()))
        );
        assert_eq!(
            locate_body("fn f() {}\n", "f", Some("impl X")),
            Err(LocateError::NoAnchor("impl X".to_string()))
        );
    }

    // The lint allowance goes after the module docs, where an inner attribute may stand.
    #[test]
    fn the_allowance_follows_the_module_docs() {
        let out = blank_lib(
            "// Mirrored by labs/x: see labs/README.md.\n//! Docs.\n//! More.\n\nfn f() {\n    1\n}\n",
            &[blank("f", None)],
        )
        .unwrap();
        assert!(out.starts_with("//! Docs.\n//! More.\n// Until"), "{out}");
        assert!(out.contains("#![allow("));
        assert!(out.contains("todo!(\"write f\")"));
    }
}
