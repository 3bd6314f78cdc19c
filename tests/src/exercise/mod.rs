//! Exercises in `exercises/`: a negative variant copied without the explanation of its bug (make
//! it green), or a correct piece with the bodies that carry its lesson blanked (write it
//! yourself, [`blank`]), and checkers that say what still fails.
//!
//! The copy is a workspace member (the root manifest's members glob covers `exercises/*`), so it
//! builds against the real crates. Its package is renamed `exercise-<name>` so it can sit next to
//! the lab it came from, while its library keeps the lab's crate name and its tests compile
//! unchanged.

pub mod blank;
mod check;
pub(crate) mod error;
pub mod spec;

use std::path::{Path, PathBuf};

use crate::declared::{Declared, parse_manifest};

pub use check::{Report, check};
pub use error::{BuildError, ExerciseError};

/// The folder, under the workspace root, that holds the students' copies (ignored by git).
pub const EXERCISES_DIR: &str = "exercises";

pub use crate::diff::MARKER;
use crate::tidy::located::END_MARKER;

/// Lowercase letters, digits and dashes: a folder name that makes a package name.
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExerciseError + '_ {
    move |source| ExerciseError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// `source` without its `// NEGATIVE:` comment blocks: the marker line and the `//` lines that
/// continue it, and any `// END NEGATIVE` line. A blank line that the removal would leave
/// doubled goes too, so the copy stays formatted. `None` when there is no marker.
pub fn strip_marker(source: &str) -> Option<String> {
    let lines: Vec<&str> = source.lines().collect();
    let mut kept: Vec<&str> = Vec::with_capacity(lines.len());
    let mut found = false;
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at].trim_start();
        if line.starts_with(END_MARKER) {
            at += 1;
            continue;
        }
        if !line.starts_with(MARKER) {
            kept.push(lines[at]);
            at += 1;
            continue;
        }
        found = true;
        at += 1;
        while at < lines.len() && is_plain_comment(lines[at]) {
            at += 1;
        }
        let blank_before = kept.last().is_none_or(|line| line.trim().is_empty());
        if blank_before && at < lines.len() && lines[at].trim().is_empty() {
            at += 1;
        }
    }
    if !found {
        return None;
    }
    let mut text = kept.join("\n");
    if source.ends_with('\n') {
        text.push('\n');
    }
    Some(text)
}

/// A `//` comment line that is not documentation (`///`, `//!`).
fn is_plain_comment(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("//") && !line.starts_with("///") && !line.starts_with("//!")
}

/// The first paragraph of a file's `//!` documentation: what the component is meant to do.
fn purpose(source: &str) -> String {
    // Past the mirror header (`// Mirrored by labs/…`) and any other plain comment above them.
    source
        .lines()
        .skip_while(|line| line.starts_with("//") && !line.starts_with("//!"))
        .map_while(|line| line.strip_prefix("//!"))
        .map(str::trim)
        .take_while(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A manifest's package name, declared checks and, for a copy, the variant it came from.
pub(super) fn read_manifest(
    path: &Path,
) -> Result<(String, Declared, Option<String>), ExerciseError> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    let manifest = parse_manifest(&text).map_err(|reason| ExerciseError::Manifest {
        path: path.to_path_buf(),
        reason,
    })?;
    let checks = manifest.declared.ok_or_else(|| ExerciseError::Manifest {
        path: path.to_path_buf(),
        reason: "no [package.metadata.negative] table".to_string(),
    })?;
    Ok((manifest.name, checks, manifest.copied_from))
}

/// The package name of the copy called `name`.
pub fn package_name(name: &str) -> String {
    format!("exercise-{name}")
}

/// The lab's manifest, turned into the copy's: the package renamed, the library keeping its
/// crate name, binaries renamed so they do not overwrite the lab's, the origin recorded.
fn copy_manifest(text: &str, variant: &str, name: &str) -> Result<String, String> {
    let package = package_name(name);
    let old_name = format!("name = \"{variant}\"");
    if !text.lines().any(|line| line.trim() == old_name) {
        return Err(format!("no `{old_name}` line in [package]"));
    }
    let mut out = String::new();
    let mut renamed = false;
    let mut lib_added = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if !renamed && trimmed == old_name {
            out.push_str(&format!("name = \"{package}\"\n"));
            renamed = true;
        } else if trimmed.starts_with("description = ") {
            out.push_str(&format!(
                "description = \"Exercise: make the declared checks pass (just check-exercise {name})\"\n"
            ));
        } else if !lib_added && renamed && trimmed == "[lib]" {
            // Tests say `use <lab crate>::...`: the library keeps the lab's crate name.
            out.push_str(&lib_table(variant));
            lib_added = true;
        } else {
            if !lib_added && renamed && trimmed.starts_with('[') && !text.contains("\n[lib]\n") {
                out.push_str(&lib_table(variant));
                out.push_str(&format!("path = \"{}\"\n", crate::declared::LAB_ROOT));
                out.push('\n');
                lib_added = true;
            }
            out.push_str(&rename_bins(line, variant, name));
            out.push('\n');
        }
    }
    if !lib_added {
        return Err("no table after [package]".to_string());
    }
    out.push_str(&format!(
        "\n# The lab this exercise was copied from (`just diff {variant}` is the solution).\n\
         [package.metadata.exercise]\nvariant = \"{variant}\"\n"
    ));
    Ok(out)
}

/// The copy's `[lib]` table head: the library keeps the lab's crate name, whatever the package
/// is called. The lab's own lines (its root's `path`) follow it.
fn lib_table(variant: &str) -> String {
    format!("[lib]\nname = \"{}\"\n", variant.replace('-', "_"))
}

/// Binary names end with the lab's name (`crash-server-<variant>`, which `crash-matrix --variant`
/// looks for); in the copy they end with its package name instead.
fn rename_bins(text: &str, variant: &str, name: &str) -> String {
    text.replace(
        &format!("crash-server-{variant}"),
        &format!("crash-server-{}", package_name(name)),
    )
    .replace(
        &format!("--variant {variant}"),
        &format!("--variant {}", package_name(name)),
    )
}

/// Leaves a later chapter's checks out of `checks` when the class asks for `variant` in an
/// earlier chapter (`docs/src/class.toml` of the workspace at `workspace`): the brief does not
/// name them and the check neither counts nor runs them. Returns the prefixes of the checks left
/// out, for the test run to skip.
pub(crate) fn leave_out_later_chapters(
    workspace: &Path,
    variant: &str,
    checks: &mut Declared,
) -> Vec<&'static str> {
    let class = crate::class::load(workspace).ok();
    let chapter = crate::class::chapter_of_variant(workspace, class.as_ref(), variant);
    let later: Vec<&'static str> = (spec::LATER_CHECKS.iter())
        .filter(|(_, taught_in)| chapter.is_some_and(|chapter| chapter < *taught_in))
        .map(|(prefix, _)| *prefix)
        .collect();
    let taught = |check: &String| !later.iter().any(|prefix| check.starts_with(prefix));
    checks.must_fail.retain(taught);
    checks.may_fail.retain(taught);
    later
}

/// The neutral brief that replaces the lab's README: no word of what the bug is.
fn brief(variant: &str, name: &str, purpose: &str, checks: &Declared) -> String {
    let mut text = format!(
        "# Exercise: {name}\n\n\
         `src/lib.rs` is a copy of `{}` with one bug in it. Find the bug and fix it, so that the \
         checks below pass.\n\n## What the code is meant to do\n\n{purpose}\n\n\
         ## The checks that fail\n\n",
        checks.mirrors.display()
    );
    for check in &checks.must_fail {
        text.push_str(&format!("- `{check}`\n"));
    }
    for check in &checks.loom_must_fail {
        text.push_str(&format!(
            "- `{check}` (a loom model, run under `--cfg loom`)\n"
        ));
    }
    if !checks.may_fail.is_empty() {
        text.push_str("\nThese may fail too, on some runs only:\n\n");
        for check in &checks.may_fail {
            text.push_str(&format!("- `{check}`\n"));
        }
    }
    if checks.needs_postgres {
        text.push_str("\nThe checks need PostgreSQL: run `eval \"$(just postgres)\"` first.\n");
    }
    let check = format!("just check-exercise {name}");
    let diff = format!("just diff {variant}");
    let width = check.len().max(diff.len());
    text.push_str(&format!(
        "\n## Commands\n\n```sh\n\
         {check:<width$}   # which checks still fail, or \"fixed\"\n\
         {diff:<width$}   # the solution: the lab's change, to read backwards\n```\n"
    ));
    text
}

/// The copy's `src/lib.rs` (the variant's file without its marker) and its README (the brief),
/// for the copy `name` of `labs/<variant>`.
pub(crate) fn copy_texts(
    labs: &Path,
    variant: &str,
    name: &str,
) -> Result<(String, String), ExerciseError> {
    let lab = labs.join(variant);
    let (_, mut checks, _) = read_manifest(&lab.join("Cargo.toml"))?;
    if let Some(workspace) = labs.parent() {
        leave_out_later_chapters(workspace, variant, &mut checks);
    }
    let lib_path = lab.join("src/lib.rs");
    let lib = std::fs::read_to_string(&lib_path).map_err(io(&lib_path))?;
    let lib = strip_marker(&lib).ok_or_else(|| ExerciseError::NoMarker(lib_path.clone()))?;
    let readme = brief(variant, name, &purpose(&lib), &checks);
    Ok((lib, readme))
}

/// Copies `labs/<variant>` (from `labs`) into `<exercises>/<name>`, without its explanation.
/// Refuses, changing nothing, when the variant is unknown or the copy exists and `force` is not
/// given. Returns the copy's folder.
pub fn create(
    labs: &Path,
    exercises: &Path,
    variant: &str,
    name: &str,
    force: bool,
) -> Result<PathBuf, ExerciseError> {
    let lab = labs.join(variant);
    if !is_name(variant) || !lab.join("Cargo.toml").is_file() {
        return Err(ExerciseError::UnknownVariant(variant.to_string()));
    }
    if !is_name(name) {
        return Err(ExerciseError::BadName(name.to_string()));
    }
    let dest = exercises.join(name);
    if dest.exists() && !force {
        return Err(ExerciseError::Exists(dest));
    }

    // Everything is prepared before the first write, so a refusal changes nothing.
    let manifest_path = lab.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).map_err(io(&manifest_path))?;
    let manifest =
        copy_manifest(&manifest, variant, name).map_err(|reason| ExerciseError::Manifest {
            path: manifest_path.clone(),
            reason,
        })?;
    let (lib, readme) = copy_texts(labs, variant, name)?;

    // The copy is written outside the members glob and renamed into place whole: a cargo
    // command running meanwhile (another terminal, a test) never reads a member folder without
    // its manifest, or a manifest half written.
    let staging = set_aside(exercises, name, "partial");
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
    }
    copy_tree(&lab, &staging, &|text| rename_bins(text, variant, name))?;
    for (file, text) in [
        ("Cargo.toml", manifest),
        ("src/lib.rs", lib),
        ("README.md", readme),
    ] {
        let path = staging.join(file);
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    if dest.exists() {
        remove(exercises, name)?;
    }
    std::fs::create_dir_all(exercises).map_err(io(exercises))?;
    std::fs::rename(&staging, &dest).map_err(io(&dest))?;
    Ok(dest)
}

/// Deletes `<exercises>/<name>`, first moving it out of the members glob in one rename, so a
/// cargo command running meanwhile sees the member whole or not at all. Returns its folder.
pub fn remove(exercises: &Path, name: &str) -> Result<PathBuf, ExerciseError> {
    let dir = exercises.join(name);
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') || !dir.is_dir() {
        return Err(ExerciseError::Missing(dir));
    }
    let aside = set_aside(exercises, name, "removed");
    if aside.exists() {
        std::fs::remove_dir_all(&aside).map_err(io(&aside))?;
    }
    std::fs::rename(&dir, &aside).map_err(io(&dir))?;
    std::fs::remove_dir_all(&aside).map_err(io(&aside))?;
    Ok(dir)
}

/// A folder beside `exercises/` (so outside the members glob, and on the same file system for
/// the rename) that holds a copy while it is written or removed.
fn set_aside(exercises: &Path, name: &str, why: &str) -> PathBuf {
    let parent = exercises.parent().unwrap_or(Path::new("."));
    let folder = exercises.file_name().unwrap_or_default().to_string_lossy();
    parent.join(format!(".{folder}.{name}.{why}"))
}

/// Copies a folder's files (build output aside), passing the Rust sources through `edit`.
fn copy_tree(from: &Path, to: &Path, edit: &dyn Fn(&str) -> String) -> Result<(), ExerciseError> {
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            if entry.file_name() != "target" {
                copy_tree(&path, &target, edit)?;
            }
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            std::fs::write(&target, edit(&text)).map_err(io(&target))?;
        } else {
            std::fs::copy(&path, &target).map_err(io(&target))?;
        }
    }
    Ok(())
}

/// The copy's folder for `name` in the workspace at `workspace`.
pub fn exercise_dir(workspace: &Path, name: &str) -> PathBuf {
    workspace.join(EXERCISES_DIR).join(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    // no-fingerprint belongs to chapter 4 (its stage's number): its exercise leaves out the
    // simulator's check, the only later one it declares. replay-5xx, asked for in chapter 8, keeps it.
    #[test]
    fn an_earlier_chapters_exercise_leaves_the_simulator_out() {
        let root = crate::workspace_root();
        let mut early = crate::declared("no-fingerprint").unwrap();
        let all = early.must_fail.clone();
        let later = leave_out_later_chapters(&root, "no-fingerprint", &mut early);
        assert!(later.contains(&"sim::"), "{later:?}");
        assert!((later.iter()).all(|prefix| {
            spec::LATER_CHECKS
                .iter()
                .any(|(p, c)| p == prefix && *c > 4)
        }));
        let left: BTreeSet<&String> = all.difference(&early.must_fail).collect();
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left.iter().all(|check| check.starts_with("sim::")));
        assert!(!early.must_fail.is_empty());

        let mut late = crate::declared("replay-5xx").unwrap();
        let all = late.must_fail.clone();
        assert!(leave_out_later_chapters(&root, "replay-5xx", &mut late).is_empty());
        assert_eq!(late.must_fail, all);
        assert!(all.iter().any(|check| check.starts_with("sim::")));
    }

    // Stripping removes the marker line and its continuation lines, and nothing else.
    #[test]
    fn strip_removes_the_marker_block_only() {
        let source = "\
fn f() {
    // The lookup comes first.
    if x {
        // NEGATIVE: the comparison is gone, so a changed
        // request gets the old receipt.
        return y;
    }
    /// Docs stay.
}
";
        let expected = "\
fn f() {
    // The lookup comes first.
    if x {
        return y;
    }
    /// Docs stay.
}
";
        assert_eq!(strip_marker(source).as_deref(), Some(expected));
    }

    // A block between two blank lines leaves one blank line, as rustfmt would.
    #[test]
    fn strip_leaves_no_doubled_blank_line() {
        let source = "a\n\n// NEGATIVE: gone\n// still gone\n\n/// kept\nb\n";
        assert_eq!(strip_marker(source).as_deref(), Some("a\n\n/// kept\nb\n"));
    }

    // A file without a marker is reported, not copied as if it were a lab.
    #[test]
    fn strip_needs_a_marker() {
        assert_eq!(strip_marker("fn f() {}\n"), None);
    }

    // An end marker goes with the block it closes.
    #[test]
    fn strip_removes_the_end_marker() {
        let source = "a\n// NEGATIVE: gone\nb\n\nc\n// END NEGATIVE\n";
        assert_eq!(strip_marker(source).as_deref(), Some("a\nb\n\nc\n"));
    }

    // Every lab's markers strip to a file without them that keeps every line of code.
    #[test]
    fn every_lab_strips_cleanly() {
        let labs = crate::workspace_root().join("labs");
        for entry in std::fs::read_dir(&labs).expect("labs/ is readable") {
            let lib = entry.expect("an entry").path().join("src/lib.rs");
            let Ok(source) = std::fs::read_to_string(&lib) else {
                continue;
            };
            let stripped =
                strip_marker(&source).unwrap_or_else(|| panic!("{} has a marker", lib.display()));
            assert!(!stripped.contains("NEGATIVE"), "{}", lib.display());
            for line in crate::diff::diff(&source, &stripped) {
                match line {
                    crate::diff::Line::Same(_) => {}
                    crate::diff::Line::Removed(text) => assert!(
                        text.trim().is_empty() || is_plain_comment(text),
                        "{} lost code: {text}",
                        lib.display()
                    ),
                    crate::diff::Line::Added(text) => {
                        panic!("{} gained a line: {text}", lib.display())
                    }
                }
            }
            assert!(
                stripped.lines().count() < source.lines().count(),
                "{}",
                lib.display()
            );
        }
    }

    // The copy's manifest renames the package and the crash server, and keeps the crate name.
    #[test]
    fn manifest_is_renamed() {
        let text = "\
[package]
name = \"separate-transactions\"
description = \"Negative variant: two transactions\"

[dependencies]
retrykey.workspace = true

[[bin]]
name = \"crash-server-separate-transactions\"
path = \"src/bin/crash-server.rs\"
";
        let out = copy_manifest(text, "separate-transactions", "st").expect("a lab manifest");
        let parsed: toml::Table = toml::from_str(&out).expect("valid TOML");
        assert_eq!(parsed["package"]["name"].as_str(), Some("exercise-st"));
        assert_eq!(
            parsed["lib"]["name"].as_str(),
            Some("separate_transactions")
        );
        assert_eq!(
            parsed["bin"][0]["name"].as_str(),
            Some("crash-server-exercise-st")
        );
        assert_eq!(
            parsed["package"]["metadata"]["exercise"]["variant"].as_str(),
            Some("separate-transactions")
        );
        assert!(!out.contains("Negative variant"));
    }

    // A lab's own `[lib]` table is kept, once, with the crate name added to it.
    #[test]
    fn a_lib_table_of_the_lab_is_kept_once() {
        let text = "\
[package]
name = \"no-receipt\"
description = \"Negative variant: no receipt\"

[lib]
path = \"src/lab.rs\"
test = false

[dependencies]
retrykey.workspace = true
";
        let out = copy_manifest(text, "no-receipt", "nr").expect("a lab manifest");
        assert_eq!(out.matches("[lib]").count(), 1, "{out}");
        let parsed: toml::Table = toml::from_str(&out).expect("valid TOML");
        assert_eq!(parsed["lib"]["name"].as_str(), Some("no_receipt"));
        assert_eq!(parsed["lib"]["path"].as_str(), Some("src/lab.rs"));
        assert_eq!(parsed["lib"]["test"].as_bool(), Some(false));
    }
}
