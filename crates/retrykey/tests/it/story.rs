//! The lost-reply story binary: what it prints about the store, and how it treats bad input.

use std::process::{Command, Output};

fn story(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrykey"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the story binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8")
}

// The default story: the store holds the effect right after the drop, the retry is a replay of
// receipt #1, and the closing check finds two effects with two receipts.
#[test]
fn default_story_replays_the_original_receipt() {
    let output = story(&[]);
    assert!(output.status.success());
    let text = stdout(&output);
    let after_drop = text.split("2. ").nth(1).expect("step 2");
    assert!(after_drop.contains("store: total 7, 1 record\n"));
    assert!(text.contains("   Reply: receipt #1, total 7, replayed\n"));
    assert!(text.ends_with(
        "check: effects applied 2, records held 2, total 14: every effect has its receipt\n"
    ));
}

// Two runs print the same bytes: the walkthrough can show exact output.
#[test]
fn output_is_identical_on_every_run() {
    assert_eq!(story(&[]).stdout, story(&[]).stdout);
}

// Changed units under the same key: a conflict, exit 0, and the store still holds 7 after it.
#[test]
fn changed_retry_units_conflict_and_change_nothing() {
    let output = story(&["--retry-units", "8"]);
    assert!(
        output.status.success(),
        "a conflict is a teaching outcome, not a failure"
    );
    let text = stdout(&output);
    let step_3 = text.split("3. ").nth(1).expect("step 3");
    assert!(step_3.contains("rejected, conflict"));
    assert!(step_3.contains("store: total 7, 1 record\n"));
}

// A fresh key for the retry is a second operation: the total doubles to 14.
#[test]
fn fresh_retry_key_applies_twice() {
    let text = stdout(&story(&["--retry-key", "op-9"]));
    let step_3 = text.split("3. ").nth(1).expect("step 3");
    assert!(step_3.contains("Reply: receipt #2, total 14\n"));
    assert!(step_3.contains("store: total 14, 2 records\n"));
}

// Bad command-line input exits 2 with one line naming the problem, prints no story, and does not
// panic.
#[test]
fn bad_input_is_refused_before_anything_runs() {
    for (args, message) in [
        (&["--units", "0"][..], "not 0"),
        (&["--units", "-7"], "not negative"),
        (&["--units", "seven"], "positive whole number"),
        (&["--units", "99999999999999999999"], "64-bit"),
        (&["--key", ""], "it is empty"),
        (&["--retry-job", ""], "job name is empty"),
    ] {
        let output = story(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}: nothing ran");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with("error: ") && stderr.contains(message),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}");
    }
}

// A flag the story does not have, a flag without its value, and a limit that is not a whole
// number are refused like bad input: exit 2, one line, no story.
#[test]
fn unknown_or_incomplete_flags_are_refused() {
    for (args, message) in [
        (&["--colour", "red"][..], "unexpected argument '--colour'"),
        (&["--retry-key"], "--retry-key: a value is required"),
        (
            &["--max-records", "many"],
            "--max-records: expected a whole number",
        ),
        (&["--max-units=-1"], "--max-units: expected a whole number"),
    ] {
        let output = story(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}: nothing ran");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

// `--help` names every flag the parser reads, and `--flag=value` reads like `--flag value`.
#[test]
fn help_names_every_flag_and_both_spellings_agree() {
    let help = stdout(&story(&["--help"]));
    for flag in [
        "--key",
        "--job",
        "--units",
        "--retry-key",
        "--retry-job",
        "--retry-units",
        "--max-records",
        "--max-units",
    ] {
        assert!(help.contains(&format!("  {flag} ")), "{flag} in:\n{help}");
    }
    assert_eq!(
        story(&["--retry-units=8"]).stdout,
        story(&["--retry-units", "8"]).stdout
    );
    // Each flag reaches its input: the job names the first attempt, and the version is the
    // package's.
    let text = stdout(&story(&["--job", "resize-image"]));
    assert!(
        text.starts_with("1. The client sends op-1 (resize-image, 7 units)."),
        "{text}"
    );
    let version = story(&["--version"]);
    assert!(version.status.success());
    assert_eq!(
        stdout(&version),
        format!("retrykey {}\n", env!("CARGO_PKG_VERSION"))
    );
}

// The whole story, byte for byte, for each path through it: a replay, a conflict, a fresh key, a
// full ledger, the ceiling, and a refused first attempt that leaves the key free. Each file is
// what a class sees for those flags.
#[test]
fn every_path_prints_its_whole_story() {
    for (args, expected) in [
        (&[][..], include_str!("../story/default.txt")),
        (
            &["--retry-units", "8"],
            include_str!("../story/changed-units.txt"),
        ),
        (
            &["--retry-key", "op-9"],
            include_str!("../story/fresh-key.txt"),
        ),
        (
            &["--max-records", "1", "--retry-key", "op-9"],
            include_str!("../story/full-ledger.txt"),
        ),
        (
            &["--units", "600000", "--retry-key", "op-2"],
            include_str!("../story/ceiling.txt"),
        ),
        (
            &["--units", "1000001", "--retry-units", "5"],
            include_str!("../story/first-refused.txt"),
        ),
    ] {
        let output = story(args);
        assert!(output.status.success(), "{args:?}");
        assert_eq!(stdout(&output), expected, "{args:?}");
    }
}
