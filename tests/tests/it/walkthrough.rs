//! Every command shown in README.md, docs/src and the variants' READMEs prints what the text says.
//!
//! The pages read and the rules their blocks follow are in the `retrykey_tests::walkthrough`
//! module docs. Commands in
//! ```` ```console,slow ```` blocks run only with `RETRYKEY_DOCS_SLOW=1` (`just docs-check`, and
//! `just ci`); without it this test reports them as skipped, with their number, and never counts
//! them as passed. Blocks marked `not-run` are listed with their reasons. With
//! `RETRYKEY_DOCS_PAGES=ch02,ch08` only the pages whose path holds one of those words run; the
//! others are reported as skipped, never as passed.

use std::io::Write;
use std::time::{Duration, Instant};

use std::path::{Path, PathBuf};

use retrykey_tests::cargo_turn;
use retrykey_tests::variants;
use retrykey_tests::walkthrough::{Ran, Walkthrough, documents, read_document, run};

/// The blocks of every page, or every page's first malformed block, one per line.
fn everything() -> Walkthrough {
    let mut all = Walkthrough::default();
    let mut malformed = Vec::new();
    for file in documents().expect("docs are readable") {
        match read_document(&file) {
            Ok(found) => {
                all.shown.extend(found.shown);
                all.not_run.extend(found.not_run);
            }
            Err(error) => malformed.push(error.to_string()),
        }
    }
    assert!(
        malformed.is_empty(),
        "{} pages have blocks the walkthrough cannot read:\n{}",
        malformed.len(),
        malformed.join("\n")
    );
    all
}

// Every variant's README is read with the book's pages, so its commands are checked too.
#[test]
fn the_walkthrough_reads_every_variant_readme() {
    let documents = documents().expect("docs are readable");
    for (variant, _) in variants().expect("the variants are declared") {
        let readme = Path::new("labs").join(&variant).join("README.md");
        assert!(
            documents.contains(&readme),
            "{} is not read",
            readme.display()
        );
    }
    assert!(documents.contains(&PathBuf::from("README.md")));
    assert!(documents.contains(&PathBuf::from("docs/src/SUMMARY.md")));
    // Reading them finds no block the runner cannot read.
    everything();
}

/// Whether `just` answers on this machine's `PATH`.
fn has_just() -> bool {
    std::process::Command::new("just")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Whether a shown command runs `just`: at the start of one of its lines, or after `&&`, `||`,
/// `;` or `|`.
fn needs_just(command: &str) -> bool {
    command.lines().any(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        (words.iter().enumerate()).any(|(at, word)| {
            *word == "just" && (at == 0 || ["&&", "||", ";", "|"].contains(&words[at - 1]))
        })
    })
}

// Every shown command runs and prints the promised output and exit status (slow ones under just docs-check).
//
// One command at a time, in the pages' order: each holds the workspace's cargo turn, which the
// other tests' cargo commands take too.
#[test]
fn every_shown_command_prints_what_the_docs_say() {
    let with_slow = std::env::var("RETRYKEY_DOCS_SLOW").is_ok_and(|v| v == "1");
    let only: Vec<String> = std::env::var("RETRYKEY_DOCS_PAGES")
        .map(|pages| pages.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let chosen = |file: &Path| {
        let file = file.to_string_lossy();
        only.is_empty() || only.iter().any(|word| file.contains(word.as_str()))
    };
    let started = Instant::now();
    let all = everything();
    let skipped = all
        .shown
        .iter()
        .filter(|item| item.slow && !with_slow)
        .count();
    // A machine with only the Rust toolchain has no `just`: its commands are skipped and counted
    // there, never passed. `just docs-check` and CI run with `just`, so there nothing is skipped.
    let has_just = has_just();
    assert!(
        has_just || !with_slow,
        "RETRYKEY_DOCS_SLOW=1 checks every command, and `just` is not installed"
    );
    let other_pages = (all.shown.iter())
        .filter(|item| !chosen(&item.file))
        .count();
    // A command that needs `just`, where `just` is missing, is skipped, and so is every later
    // command of its page: a page is a session, and what follows may stand on what it made.
    let mut without_just = 0;
    let mut unmet: Vec<String> = Vec::new();
    let mut order: Vec<usize> = Vec::new();
    let mut page_lost: Option<&Path> = None;
    for (index, item) in all.shown.iter().enumerate() {
        if (item.slow && !with_slow) || !chosen(&item.file) {
            continue;
        }
        // A session that needs root or a PostgreSQL server's programs the machine lacks is
        // skipped and named, as one without `just` is.
        if let Some(missing) = item.needs.and_then(|need| need.missing()) {
            unmet.push(format!("{}:{} ({missing})", item.file.display(), item.line));
            continue;
        }
        let lost =
            page_lost == Some(item.file.as_path()) || (!has_just && needs_just(&item.command));
        if lost {
            page_lost = Some(item.file.as_path());
            without_just += 1;
            continue;
        }
        order.push(index);
    }
    // One command at a time, each holding the workspace's cargo turn: two cargo commands side
    // by side can fail each other (see `retrykey_tests::CARGO`), and a verdict must not depend
    // on which ran first.
    let mut results: Vec<(usize, Duration, Ran)> = Vec::new();
    for index in order {
        let command = &all.shown[index].command;
        let start = Instant::now();
        let ran = {
            let _turn = cargo_turn();
            run(command)
        };
        results.push((index, start.elapsed(), ran));
    }
    let ran = results.len();
    let mut failures = Vec::new();
    let mut took: Vec<(Duration, String)> = Vec::new();
    for (index, duration, result) in &results {
        let item = &all.shown[*index];
        took.push((*duration, format!("{}:{}", item.file.display(), item.line)));
        if let Err(mismatch) = item.check(result) {
            failures.push(format!(
                "{}:{}: `{}`: {mismatch}\n--- the docs say:\n{}\n--- it printed:\n{result}",
                item.file.display(),
                item.line,
                item.command,
                item.promised(),
            ));
        }
    }
    // Straight to stderr: the test harness hides `eprintln!` output of passing tests.
    let mut report = format!(
        "walkthrough: {} of {ran} commands as shown",
        ran - failures.len()
    );
    if skipped > 0 {
        report.push_str(&format!(
            "; {skipped} slow commands skipped, not checked (RETRYKEY_DOCS_SLOW=1 or `just docs-check` runs them)"
        ));
    }
    if without_just > 0 {
        report.push_str(&format!(
            "; {without_just} commands need `just` (or follow one on their page), which is not \
             installed (`pip install rust-just`): skipped, not checked"
        ));
    }
    if !unmet.is_empty() {
        report.push_str(&format!(
            "; {} commands need what this machine lacks, skipped, not checked: {}",
            unmet.len(),
            unmet.join(", ")
        ));
    }
    if other_pages > 0 {
        report.push_str(&format!(
            "; {other_pages} commands of pages outside RETRYKEY_DOCS_PAGES skipped, not checked"
        ));
    }
    report.push_str(&format!("; {} blocks marked not-run", all.not_run.len()));
    // Where the time went, so a slow docs check can be read rather than guessed at.
    let total: Duration = took.iter().map(|(d, _)| *d).sum();
    took.sort_by_key(|(duration, _)| std::cmp::Reverse(*duration));
    report.push_str(&format!(
        "\n  {:.0} s of commands in {:.0} s; the slowest:",
        total.as_secs_f64(),
        started.elapsed().as_secs_f64()
    ));
    for (duration, place) in took.iter().take(8) {
        report.push_str(&format!("\n  {:>6.1} s  {place}", duration.as_secs_f64()));
    }
    for block in &all.not_run {
        report.push_str(&format!(
            "\n  not run: {}:{}: {}",
            block.file.display(),
            block.line,
            block.reason
        ));
    }
    let _ = writeln!(std::io::stderr(), "{report}");
    assert!(
        failures.is_empty(),
        "{} of {ran} commands differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

// A command runs `just` where a shell would start it, not where the word is an argument.
#[test]
fn a_command_needs_just_only_where_it_runs_it() {
    assert!(needs_just("just run"));
    assert!(needs_just("cd docs && just book"));
    assert!(needs_just("cargo build \\\n  | just fmt"));
    assert!(!needs_just("cargo run -p retrykey"));
    assert!(!needs_just("grep just README.md"));
}

// The walkthrough shows the story's default run and the change-one-input runs.
#[test]
fn the_walkthrough_shows_the_lost_reply_story() {
    let commands: Vec<String> = everything().shown.into_iter().map(|s| s.command).collect();
    for expected in [
        "cargo run -p retrykey",
        "cargo run -p retrykey -- --retry-units 8",
        "cargo run -p retrykey -- --retry-key op-9",
    ] {
        assert!(
            commands.iter().any(|c| c == expected),
            "the docs show `{expected}`"
        );
    }
}
