//! Figures the book states in prose, held to the code they describe: each fact is the sentence
//! fragment the page must contain, written from the constant, so a changed constant fails here
//! until the page says the new figure.

use retrykey_client::{
    DEFAULT_QUOTA_CAPACITY, DEFAULT_RETRY_COST, DEFAULT_SUCCESS_REFUND, DEFAULT_TIMEOUT_COST,
};
use retrykey_contract::model::CASES;
use retrykey_outbox::dispatcher::{BUSY_POLL_SHARE, MIN_BUSY_POLL};

/// The page under `docs/src/`, and the fragments it must contain.
fn facts() -> Vec<(&'static str, Vec<String>)> {
    vec![
        (
            "ch02-breaking-it.md",
            vec![format!("the {CASES} random sequences")],
        ),
        (
            "ch03-retries.md",
            vec![
                format!(
                    "a retry costs {DEFAULT_RETRY_COST} tokens, a retry after a timeout \
                     {DEFAULT_TIMEOUT_COST}"
                ),
                format!("success gives {DEFAULT_SUCCESS_REFUND} back"),
                format!("The bucket holds {DEFAULT_QUOTA_CAPACITY}"),
                format!(
                    "at most {} retries",
                    DEFAULT_QUOTA_CAPACITY / DEFAULT_RETRY_COST
                ),
            ],
        ),
        (
            "ch07-outbox.md",
            vec![format!(
                "after `--poll` / {BUSY_POLL_SHARE}, at least {} ms",
                MIN_BUSY_POLL.as_millis()
            )],
        ),
    ]
}

/// Lines joined with single spaces, so that a fragment may wrap across lines of the page.
fn flowing(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn figures_in_prose_match_the_code() {
    let docs = retrykey_tests::workspace_root().join("docs/src");
    let mut wrong = Vec::new();
    for (page, fragments) in facts() {
        let text = std::fs::read_to_string(docs.join(page)).expect("the page reads");
        let text = flowing(&text);
        wrong.extend(
            (fragments.iter())
                .filter(|fragment| !text.contains(fragment.as_str()))
                .map(|fragment| format!("docs/src/{page}: does not say {fragment:?}")),
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
