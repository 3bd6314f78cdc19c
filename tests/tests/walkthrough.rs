//! Every command shown in README.md and docs/ prints what the text says it prints.
//!
//! Commands in ```` ```console,slow ```` blocks run only with `RETRYKEY_DOCS_SLOW=1`
//! (`just docs-check`, and `just ci`); without it this test says how many it left for that.

use retrykey_tests::walkthrough::{Shown, documents, matches, run, shown_in};

fn all_shown() -> Vec<Shown> {
    let mut shown = Vec::new();
    for file in documents().expect("docs are readable") {
        shown.extend(shown_in(&file).unwrap_or_else(|e| panic!("{e}")));
    }
    shown
}

// Every shown command runs and prints the promised output (slow ones under just docs-check).
#[test]
fn every_shown_command_prints_what_the_docs_say() {
    let with_slow = std::env::var("RETRYKEY_DOCS_SLOW").is_ok_and(|v| v == "1");
    let shown = all_shown();
    let mut failures = Vec::new();
    let (mut ran, mut left) = (0, 0);
    for item in &shown {
        if item.slow && !with_slow {
            left += 1;
            continue;
        }
        let output = run(&item.command);
        ran += 1;
        if output.contains("command not found") || output.ends_with("[exit: 127]\n") {
            failures.push(format!(
                "{}:{}: `{}` could not run:\n{output}",
                item.file.display(),
                item.line,
                item.command
            ));
        } else if !matches(&item.output, &output) {
            failures.push(format!(
                "{}:{}: `{}`\n--- the docs say:\n{}\n--- it printed:\n{output}",
                item.file.display(),
                item.line,
                item.command,
                item.output.join("\n")
            ));
        }
    }
    if left > 0 {
        // Straight to stderr: the test harness hides `eprintln!` output of passing tests.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "walkthrough: skipped {left} slow commands; `just docs-check` runs them too"
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} commands differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

// The walkthrough shows the story's default run and the change-one-input runs.
#[test]
fn the_walkthrough_shows_the_lost_reply_story() {
    let commands: Vec<String> = all_shown().into_iter().map(|s| s.command).collect();
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
