//! The write-it-yourself pieces (`tests/blanks.toml`): each blank compiles and fails its first
//! check, the reference bodies pass every check of the program, and every wrong solution kept
//! beside the piece is refused at the check it names.
//!
//! The declarations are checked on every `cargo test`; building and running every copy takes
//! minutes, so that test is ignored there and run by `just check-blanks` (and `just ci`).

use std::collections::BTreeSet;
use std::path::Path;

use retrykey_tests::declared;
use retrykey_tests::exercise::blank::{
    Bodies, Piece, apply_wrong, blank_lib, create_blank, pieces, reference_lib, wrong_solutions,
};
use retrykey_tests::exercise::package_name;
use retrykey_tests::exercise::spec::{Verdict, build, progress, taught_by};
use retrykey_tests::workspace_root;

use crate::exercise::{scratch, workspace_copy};

/// The check a wrong solution names on its first line: `// Refused by <check>: <why>`.
fn refused_by(text: &str) -> Option<&str> {
    let first = text.lines().next()?;
    let rest = first.strip_prefix("// Refused by ")?;
    Some(rest.split_once(": ")?.0)
}

fn all_pieces() -> Vec<Piece> {
    pieces(&workspace_root()).expect("tests/blanks.toml reads")
}

/// What chapters 5 to 8 first explain, as a brief would name it: a piece of the core (chapters
/// 1 to 4) that needs one of these leans on a chapter the class may never reach.
const LATER_ITEMS: [(&str, u32); 10] = [
    ("transaction", 5),
    ("failpoint", 5),
    ("lease", 6),
    ("token", 6),
    ("fence", 6),
    ("fencing", 6),
    ("takeover", 6),
    ("take over", 6),
    ("outbox", 7),
    ("seed", 8),
];

// No piece of the core names, in its summary, its hints or its spec, an item that chapters 5
// to 8 first explain.
#[test]
fn no_core_piece_names_what_a_later_chapter_explains() {
    let mut found = Vec::new();
    for piece in all_pieces().into_iter().filter(|piece| piece.chapter <= 4) {
        let mut text = vec![piece.summary.clone()];
        text.extend(piece.blank.iter().map(|blank| blank.hint.clone()));
        for spec in &piece.spec {
            text.push(spec.check.replace('_', " "));
            text.push(spec.expects.clone());
        }
        let text = text.join("\n").to_lowercase();
        for (item, chapter) in LATER_ITEMS {
            // As a word or the start of one: `release` is not `lease`.
            let named = text.match_indices(item).any(|(at, _)| {
                !text[..at]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric)
            });
            if named {
                found.push(format!(
                    "{} (chapter {}) names `{item}`, first explained in chapter {chapter}",
                    piece.name, piece.chapter
                ));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

// A blank copy speaks of the exercise, never of the variant whose folder it borrows: no "must
// fail", no variant's name in the files the student reads.
#[test]
fn a_blank_copy_carries_none_of_its_harness_variants_words() {
    let workspace = workspace_root();
    let exercises = scratch("blank-words");
    for piece in all_pieces() {
        let Some(variant) = &piece.harness else {
            continue;
        };
        let dir = create_blank(
            &workspace,
            &exercises,
            &piece,
            &piece.name,
            Bodies::Blank,
            true,
        )
        .expect("a blank copy");
        let mut files = vec![dir.join("Cargo.toml"), dir.join("src/lab.rs")];
        files.push(dir.join("tests/it/main.rs"));
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            for told in [
                "must fail".to_string(),
                format!("`{variant}`"),
                "NEGATIVE".to_string(),
            ] {
                assert!(!text.contains(&told), "{}: {told}\n{text}", file.display());
            }
        }
    }
}

// Every chapter has a piece, and every piece is whole: its harness mirrors its source (or its
// own test program is there), each blank is found, its spec names each check once and no check
// of a later chapter, and it keeps at least four wrong solutions, each naming a check of its
// spec and changing a body it blanks.
#[test]
fn every_piece_is_declared_whole() {
    let root = workspace_root();
    let pieces = all_pieces();
    let chapters: BTreeSet<u32> = pieces.iter().map(|piece| piece.chapter).collect();
    assert_eq!(chapters, (1..=9).collect::<BTreeSet<u32>>());
    for piece in &pieces {
        match (&piece.harness, &piece.own) {
            (Some(variant), None) => {
                let harness = declared(variant).expect("the harness is a variant");
                assert_eq!(harness.mirrors, piece.source, "{}", piece.name);
            }
            (None, Some(own)) => assert!(root.join(&own.program).is_file(), "{}", piece.name),
            _ => panic!("{}: a harness or a program of its own", piece.name),
        }
        let source = std::fs::read_to_string(root.join(&piece.source)).unwrap();
        let blank = blank_lib(&source, &piece.blank).expect("every blank is found");
        assert_eq!(
            blank.matches("todo!(").count(),
            piece.blank.len(),
            "{}",
            piece.name
        );
        assert!(!blank.contains("// Mirrored by") && !blank.contains("ANCHOR"));
        let checks: BTreeSet<&str> = piece.spec.iter().map(|spec| spec.check.as_str()).collect();
        assert_eq!(
            checks.len(),
            piece.spec.len(),
            "{}: a check twice",
            piece.name
        );
        for spec in &piece.spec {
            assert!(
                !spec.expects.is_empty() && !spec.expects.contains('\n'),
                "{}: {} needs one line",
                piece.name,
                spec.check
            );
            assert!(
                taught_by(piece.chapter, &spec.check),
                "{}: {} belongs to a later chapter",
                piece.name,
                spec.check
            );
        }
        let wrong = wrong_solutions(&root, piece).unwrap();
        assert!(
            wrong.len() >= 4,
            "{}: {} wrong solutions",
            piece.name,
            wrong.len()
        );
        let reference = reference_lib(&source);
        for (name, text) in &wrong {
            let check = refused_by(text)
                .unwrap_or_else(|| panic!("{}/{name}: no `// Refused by` line", piece.name));
            assert!(checks.contains(check), "{}/{name}: {check}", piece.name);
            let changed = apply_wrong(&reference, &piece.blank, text)
                .unwrap_or_else(|error| panic!("{}/{name}: {error}", piece.name));
            assert_ne!(changed, reference, "{}/{name} changes nothing", piece.name);
        }
    }
}

/// What one copy must do under its spec.
enum Expect {
    /// Fail the first check of the spec, at a `todo!()`.
    Blank,
    /// Pass every check of the program, each named by the spec.
    Fixed,
    /// Fail first at this check.
    RefusedBy(String),
}

// Each blank compiles and fails its first check at a todo!(); with the reference bodies the
// copy passes every check of its program, and the spec names them all; each wrong solution is
// refused, first at the check it names. Every copy is built in one cargo run, in a scratch
// copy of the workspace.
#[test]
#[ignore = "slow: builds and runs about forty copies; run by `just check-blanks` and `just ci`"]
fn blanks_fail_references_pass_and_wrong_solutions_are_refused() {
    let workspace = workspace_copy("blanks-workspace");
    let exercises = workspace.join("exercises");
    let mut copies: Vec<(Piece, String, Expect)> = Vec::new();
    for piece in all_pieces() {
        let blank = format!("{}-blank", piece.name);
        create_blank(&workspace, &exercises, &piece, &blank, Bodies::Blank, true).unwrap();
        copies.push((piece.clone(), blank, Expect::Blank));
        let reference = format!("{}-reference", piece.name);
        create_blank(
            &workspace,
            &exercises,
            &piece,
            &reference,
            Bodies::Reference,
            true,
        )
        .unwrap();
        copies.push((piece.clone(), reference, Expect::Fixed));
        for (wrong, text) in wrong_solutions(&workspace, &piece).unwrap() {
            let name = format!("{}-{wrong}", piece.name);
            let bodies = Bodies::From(&text);
            create_blank(&workspace, &exercises, &piece, &name, bodies, true).unwrap();
            let check = refused_by(&text).expect("checked above").to_string();
            copies.push((piece.clone(), name, Expect::RefusedBy(check)));
        }
    }
    // The workspace's own target folder: the copy's crates live at other paths and build apart,
    // but the third-party crates are reused (cargo takes its lock only while it builds).
    let target = workspace_root().join("target");
    let target = target.to_string_lossy();
    let env = [
        ("CARGO_TARGET_DIR", target.as_ref()),
        ("CARGO_NET_OFFLINE", "true"),
    ];
    let packages: Vec<String> = copies
        .iter()
        .map(|(_, name, _)| package_name(name))
        .collect();
    let programs = build(&workspace, &packages, &env).expect("every copy compiles");

    let mut wrong_answers = Vec::new();
    for (piece, name, expect) in &copies {
        let dir = exercises.join(name);
        let program = &programs[&package_name(name)];
        let report = progress(piece, program, &dir, Path::new(name)).unwrap();
        let first = report.first_failure();
        let ok = match expect {
            Expect::Blank => matches!(
                first,
                Some((check, Verdict::Failed(said)))
                    if *check == piece.spec[0].check && said.contains("not yet implemented")
            ),
            Expect::Fixed => report.fixed() && report.further.is_empty(),
            Expect::RefusedBy(check) => {
                matches!(first, Some((failed, Verdict::Failed(_))) if failed == check)
            }
        };
        if !ok {
            wrong_answers.push(format!("{name}:\n{}", report.render()));
        }
    }
    assert!(wrong_answers.is_empty(), "{}", wrong_answers.join("\n"));
}
