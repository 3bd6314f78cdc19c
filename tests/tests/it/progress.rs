//! `just progress`: with no copies every item is not started; a blank copy (made `--as` another
//! name) counts its passing checks and names its first failing one; the reference bodies make it
//! fixed and move the next step on; the book's copies never count; the copy is never changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use retrykey_tests::class::{Class, load};
use retrykey_tests::exercise::blank::{Bodies, create_blank, reference_lib};
use retrykey_tests::exercise::package_name;
use retrykey_tests::exercise::spec::{build, progress};
use retrykey_tests::progress::{Origin, Status, fingerprint, survey, wait_for_change};
use retrykey_tests::workspace_root;

use crate::exercise::{scratch, workspace_copy};

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

fn status_of<'a>(survey: &'a retrykey_tests::progress::Survey, piece: &str) -> &'a Status {
    let entry = survey
        .entries
        .iter()
        .find(|entry| entry.origin == Origin::Piece(piece.into()));
    &entry.expect("the piece is listed").status
}

// The whole path of a student through the first piece, in one scratch workspace.
#[test]
fn progress_follows_a_piece_from_not_started_to_fixed() {
    let class: Class = load(&workspace_root()).expect("the class reads");
    let workspace = workspace_copy("progress-workspace");
    let exercises = workspace.join("exercises");
    let target = workspace_root().join("target");
    let target = target.to_string_lossy();
    let env = [
        ("CARGO_TARGET_DIR", target.as_ref()),
        ("CARGO_NET_OFFLINE", "true"),
    ];
    let first = class
        .pages
        .iter()
        .flat_map(|page| class.pieces_of(page))
        .next();
    let piece = first.expect("the core has a piece").clone();

    let empty = survey(&workspace, &class, &env).unwrap();
    assert!(
        empty
            .entries
            .iter()
            .all(|entry| entry.status == Status::NotStarted)
    );
    assert_eq!(
        empty.next().unwrap().origin,
        Origin::Piece(piece.name.clone())
    );
    assert!(
        empty
            .render_next()
            .contains(&format!("just exercise --blank {}\n", piece.name))
    );

    // The book's own copy, even a fixed one, and a folder of no origin do not count.
    let book = format!("book-{}", piece.name);
    create_blank(
        &workspace,
        &exercises,
        &piece,
        &book,
        Bodies::Reference,
        false,
    )
    .unwrap();
    // A package of the student's own, with no recorded origin.
    std::fs::create_dir_all(exercises.join("notes/src")).unwrap();
    std::fs::write(exercises.join("notes/src/lib.rs"), "").unwrap();
    let manifest = "[package]\nname = \"notes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    std::fs::write(exercises.join("notes/Cargo.toml"), manifest).unwrap();
    let mine = "my-piece";
    let dir = create_blank(&workspace, &exercises, &piece, mine, Bodies::Blank, false).unwrap();
    let before = snapshot(&dir);
    let started = survey(&workspace, &class, &env).unwrap();
    assert_eq!(
        snapshot(&dir),
        before,
        "the copy is byte for byte unchanged"
    );
    let Status::Counted {
        copy,
        passed,
        total,
        failing,
    } = status_of(&started, &piece.name)
    else {
        panic!("{}", started.render());
    };
    assert_eq!(copy, mine);
    assert_eq!(*total, piece.spec.len(), "{}", started.render());
    assert!(*passed < *total && passed + failing.len() == *total);
    // The first failing check is the one `just check-exercise` stops at.
    let programs = build(&workspace, &[package_name(mine)], &env).unwrap();
    let checked = progress(&piece, &programs[&package_name(mine)], &dir, &dir).unwrap();
    let (stops_at, _) = checked.first_failure().unwrap();
    assert_eq!(&failing[0].check, stops_at);
    let expects = &piece
        .spec
        .iter()
        .find(|spec| &spec.check == stops_at)
        .unwrap()
        .expects;
    let next = started.render_next();
    assert!(
        next.contains(stops_at) && next.contains(expects.as_str()),
        "{next}"
    );
    assert!(started.others.iter().any(|other| other.copy == "notes"));
    assert!(!started.render().contains(&book), "{}", started.render());

    let source = std::fs::read_to_string(workspace.join(&piece.source)).unwrap();
    std::fs::write(dir.join("src/lib.rs"), reference_lib(&source)).unwrap();
    let before = snapshot(&dir);
    let fixed = survey(&workspace, &class, &env).unwrap();
    assert_eq!(
        snapshot(&dir),
        before,
        "the copy is byte for byte unchanged"
    );
    assert!(status_of(&fixed, &piece.name).fixed(), "{}", fixed.render());
    let moved = fixed.next().unwrap();
    assert_ne!(moved.origin, Origin::Piece(piece.name.clone()));
    assert_eq!(
        moved.origin, empty.entries[1].origin,
        "the next item in class order"
    );
    assert!(fixed.render_next().contains(&moved.origin.start_command()));
}

// A save under exercises/ changes what the watch compares; the book's copies do not; and the
// watch sleeps between looks instead of spinning.
#[test]
fn the_watch_sees_saves_and_sleeps_between_looks() {
    let root = scratch("progress-watch");
    let file = root.join("exercises/mine/src/lib.rs");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "fn a() {}\n").unwrap();
    let before = fingerprint(&root);
    std::fs::create_dir_all(root.join("exercises/book-x")).unwrap();
    std::fs::write(root.join("exercises/book-x/a.rs"), "x").unwrap();
    assert_eq!(
        fingerprint(&root),
        before,
        "the book's copies are not watched"
    );

    // The writer raises the flag before it saves: a watch that returns with the flag down saw a
    // change that was not the save. Its pause only gives the watch several looks to take.
    let saving = Arc::new(AtomicBool::new(false));
    let (saved, raised) = (file.clone(), Arc::clone(&saving));
    let start = Instant::now();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(600));
        raised.store(true, Ordering::SeqCst);
        std::fs::write(&saved, "fn a() { 1; }\n").unwrap();
    });
    let looks = wait_for_change(&before, Duration::from_millis(100), || fingerprint(&root));
    let after_the_save = saving.load(Ordering::SeqCst);
    writer.join().unwrap();
    let waited = start.elapsed();
    assert!(after_the_save, "the watch returned before the save");
    assert!(
        looks as u128 <= waited.as_millis() / 100 + 1,
        "{looks} looks in {waited:?}"
    );
}

// `--help` lists the flags and exits 0; an unknown flag is one line and exit 2.
#[test]
fn help_and_bad_flags() {
    let program = env!("CARGO_BIN_EXE_progress");
    let help = Command::new(program).arg("--help").output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("--watch") && text.contains("--help"),
        "{text}"
    );
    let bad = Command::new(program).arg("--bogus").output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let said = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(said.lines().count(), 1, "{said}");
}
