//! `just exercise` and `just check-exercise`: the copy hides the bug's explanation, never
//! overwrites a student's work, and the checker tells an unfixed copy from a fixed one.
//!
//! Every copy here goes to a folder under cargo's test scratch space, never into `exercises/`.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use retrykey_tests::diff::{Line, diff};
use retrykey_tests::exercise::{ExerciseError, MARKER, check, create, remove};
use retrykey_tests::{declared, workspace_root};

const VARIANT: &str = "no-conflict-check";

/// An empty scratch folder of this test's own.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("exercise-{name}"));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("an old scratch folder can be removed");
    }
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

fn labs() -> PathBuf {
    workspace_root().join("labs")
}

// The copy's src/lib.rs is the lab's without the marker block: only those comment lines differ.
#[test]
fn the_copy_loses_the_marker_block_and_nothing_else() {
    let into = scratch("strip");
    let dir = create(&labs(), &into, VARIANT, VARIANT, false).expect("a copy");
    let lab = std::fs::read_to_string(labs().join(VARIANT).join("src/lib.rs")).unwrap();
    let copy = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    let changes: Vec<Line<'_>> = diff(&lab, &copy)
        .into_iter()
        .filter(|line| !matches!(line, Line::Same(_)))
        .collect();
    assert!(!copy.contains(MARKER));
    assert!(
        matches!(changes.first(), Some(Line::Removed(text)) if text.trim_start().starts_with(MARKER)),
        "{changes:?}"
    );
    assert!(
        changes
            .iter()
            .all(|line| matches!(line, Line::Removed(text) if text.trim_start().starts_with("//"))),
        "only comment lines are removed: {changes:?}"
    );
    // The tests are copied unchanged.
    assert_eq!(
        std::fs::read_to_string(dir.join("tests/it/main.rs")).unwrap(),
        std::fs::read_to_string(labs().join(VARIANT).join("tests/it/main.rs")).unwrap()
    );
}

// The README is replaced by a brief naming the failing checks, without the lab's explanation.
#[test]
fn the_readme_is_a_neutral_brief() {
    let into = scratch("readme");
    let dir = create(&labs(), &into, VARIANT, VARIANT, false).expect("a copy");
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let lab_readme = std::fs::read_to_string(labs().join(VARIANT).join("README.md")).unwrap();
    assert_ne!(readme, lab_readme);
    for told in [
        "## The bug",
        "## What it stands for",
        "never compared",
        "NEGATIVE",
    ] {
        assert!(!readme.contains(told), "the brief gives away `{told}`");
    }
    for check in declared(VARIANT).unwrap().must_fail {
        assert!(readme.contains(&format!("`{check}`")), "{check} is listed");
    }
    assert!(readme.contains(&format!("just check-exercise {VARIANT}")));
    assert!(readme.contains(&format!("just diff {VARIANT}")));
}

// Every variant's brief says what the code is meant to do, from its file's own module docs.
#[test]
fn every_brief_says_what_the_code_is_meant_to_do() {
    let into = scratch("purpose");
    for (variant, _) in retrykey_tests::variants().expect("the variants are declared") {
        let dir = create(&labs(), &into, &variant, &variant, true).expect("a copy");
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        let purpose = readme
            .split("## What the code is meant to do\n")
            .nth(1)
            .and_then(|rest| rest.split("\n## ").next())
            .unwrap_or_default();
        assert!(
            purpose.trim().len() > 20,
            "{variant}: the brief says nothing of what the code is for:\n{readme}"
        );
    }
}

// An existing copy is refused without --force, and left exactly as the student wrote it.
#[test]
fn an_existing_copy_is_never_overwritten() {
    let into = scratch("refuse");
    let dir = create(&labs(), &into, VARIANT, VARIANT, false).expect("a first copy");
    let lib = dir.join("src/lib.rs");
    std::fs::write(&lib, "// the student's work\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "mine\n").unwrap();

    let refused = create(&labs(), &into, VARIANT, VARIANT, false);
    assert!(matches!(refused, Err(ExerciseError::Exists(ref path)) if *path == dir));
    assert_eq!(
        std::fs::read_to_string(&lib).unwrap(),
        "// the student's work\n"
    );
    assert!(dir.join("notes.txt").exists());

    create(&labs(), &into, VARIANT, VARIANT, true).expect("--force replaces the copy");
    assert!(!dir.join("notes.txt").exists());
    assert_ne!(
        std::fs::read_to_string(&lib).unwrap(),
        "// the student's work\n"
    );
}

/// The names in `dir` and beside it, to show that nothing was left set aside.
fn around(dir: &Path) -> Vec<String> {
    let parent = dir.parent().expect("a scratch folder has a parent");
    let prefix = format!(".{}.", dir.file_name().unwrap().to_string_lossy());
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.extend(
        std::fs::read_dir(parent)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(&prefix)),
    );
    names.sort();
    names
}

// A copy appears whole, is replaced whole, and is removed whole: nothing is left set aside.
#[test]
fn copies_appear_and_go_whole() {
    let into = scratch("whole");
    create(&labs(), &into, VARIANT, "first", false).expect("a copy");
    create(&labs(), &into, VARIANT, "second", false).expect("another copy");
    create(&labs(), &into, VARIANT, "second", true).expect("--force replaces it");
    assert_eq!(around(&into), ["first", "second"]);

    let removed = remove(&into, "first").expect("an existing copy is removed");
    assert_eq!(removed, into.join("first"));
    assert_eq!(around(&into), ["second"]);
    assert!(into.join("second/Cargo.toml").is_file());
}

// Removing a copy that is not there, or a path that is not a copy's name, is a typed error
// and changes nothing.
#[test]
fn removing_a_missing_copy_is_refused() {
    let into = scratch("remove-missing");
    create(&labs(), &into, VARIANT, "kept", false).expect("a copy");
    for name in ["absent", "", "../exercise-whole", ".", "kept/src"] {
        let result = remove(&into, name);
        assert!(
            matches!(result, Err(ExerciseError::Missing(_))),
            "{name:?}: {result:?}"
        );
    }
    assert_eq!(around(&into), ["kept"]);
    assert!(into.join("kept/src/lib.rs").is_file());
}

// An unknown variant is a typed error, and nothing is created.
#[test]
fn an_unknown_variant_is_refused() {
    let into = scratch("unknown");
    for name in ["no-such-variant", "../crates", ""] {
        let result = create(&labs(), &into, name, "copy", false);
        assert!(
            matches!(result, Err(ExerciseError::UnknownVariant(ref v)) if v == name),
            "{name}: {result:?}"
        );
    }
    assert_eq!(std::fs::read_dir(&into).unwrap().count(), 0);
}

/// A copy of the workspace's sources (no build output, no exercises), where a copy can be made a
/// member without touching the real workspace. It builds in the workspace's own target folder,
/// reusing its third-party crates, under another version so that no artifact is shared.
pub(crate) fn workspace_copy(name: &str) -> PathBuf {
    /// Copies `from` into `to`, feeding every file's path and bytes to `hash`.
    fn copy(from: &Path, to: &Path, hash: &mut DefaultHasher) {
        std::fs::create_dir_all(to).unwrap();
        let mut entries: Vec<_> = (std::fs::read_dir(from).unwrap())
            .map(|entry| entry.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_owned();
            if name == "target" || name == "node_modules" {
                continue;
            }
            if path.is_dir() {
                copy(&path, &to.join(&name), hash);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                (path.as_os_str(), &bytes).hash(hash);
                std::fs::write(to.join(&name), bytes).unwrap();
            }
        }
    }
    let root = workspace_root();
    let into = scratch(name);
    std::fs::copy(root.join("Cargo.lock"), into.join("Cargo.lock")).unwrap();
    let mut hash = DefaultHasher::new();
    for dir in ["crates", "labs", "tests", "benches"] {
        copy(&root.join(dir), &into.join(dir), &mut hash);
    }
    // Another version for every member: the copy's crates then hash apart from the workspace's
    // own in the shared target folder (the hash of a path package counts its path from the
    // workspace root, which is the same here), and neither build overwrites the other's. The
    // version names the sources too: every scratch copy of the same sources shares one build,
    // and a copy of changed sources never takes another copy's older build for its own (cargo
    // would check the older copy's files, which did not change).
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let (head, tail) = manifest
        .split_once("[workspace.package]\nversion = \"")
        .expect("the workspace sets its members' version");
    let (version, rest) = tail.split_once('"').expect("a quoted version");
    let sources = hash.finish();
    let scratch =
        format!("{head}[workspace.package]\nversion = \"{version}-scratch-{sources:x}\"{rest}");
    std::fs::write(into.join("Cargo.toml"), scratch).unwrap();
    into
}

// The checker names the declared checks while the bug is there, and says "fixed" once the
// mirrored correct code replaces the copy's src/lib.rs.
#[test]
fn the_checker_tells_unfixed_from_fixed() {
    let workspace = workspace_copy("workspace");
    let dir = create(
        &workspace.join("labs"),
        &workspace.join("exercises"),
        VARIANT,
        VARIANT,
        false,
    )
    .expect("a copy in the scratch workspace");
    // The workspace's own target folder: the copy's crates live at other paths and build apart,
    // but the third-party crates are reused (cargo takes its lock only while it builds).
    let target = workspace_root().join("target");
    let target = target.to_string_lossy();
    let env = [
        ("CARGO_TARGET_DIR", target.as_ref()),
        ("CARGO_NET_OFFLINE", "true"),
    ];
    let declared = declared(VARIANT).unwrap();

    let unfixed = check(&workspace, &dir, &env).expect("the checker runs");
    assert!(!unfixed.fixed(), "{}", unfixed.render());
    let still: Vec<String> = declared.must_fail.iter().cloned().collect();
    assert_eq!(unfixed.still_failing, still, "{}", unfixed.render());
    assert!(unfixed.undeclared.is_empty(), "{}", unfixed.render());
    for check in &still {
        assert!(
            unfixed
                .render()
                .contains(&format!("still failing: {check}\n"))
        );
    }

    std::fs::copy(workspace.join(&declared.mirrors), dir.join("src/lib.rs"))
        .expect("the correct code");
    let fixed = check(&workspace, &dir, &env).expect("the checker runs");
    assert!(fixed.fixed(), "{}", fixed.render());
    assert_eq!(
        fixed.render(),
        format!("fixed: all {} declared checks pass\n", still.len())
    );
}
