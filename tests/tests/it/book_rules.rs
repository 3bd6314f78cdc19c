//! The book's conventions 1 to 7 hold on every page of `docs/src`.
//!
//! The rules and their messages are in the `retrykey_tests::book_rules` module docs; each test
//! here lists every violation of one convention, as `file:line: convention: what is wrong`.

use retrykey_tests::book_rules::{
    Rule, Violation, answers, check_page, early_answers, glossary_order, pages, wrap_rule,
};
use retrykey_tests::exercise::blank::pieces;
use retrykey_tests::workspace_root;

/// Every violation of `rule` on the book's pages.
fn violations(rule: Rule) -> Vec<Violation> {
    let root = workspace_root();
    let pages = pages(&root).expect("docs/src is readable");
    assert!(pages.len() > 7, "the book has its chapters: {pages:?}");
    pages
        .iter()
        .flat_map(|page| check_page(&root, page).unwrap_or_else(|e| panic!("{e}")))
        .filter(|violation| violation.rule == rule)
        .collect()
}

fn holds(rule: Rule) {
    holds_with(rule, Vec::new());
}

/// Asserts that `rule` holds on every page, and that nothing in `more` went wrong either.
fn holds_with(rule: Rule, more: Vec<String>) {
    let mut lines: Vec<String> = violations(rule).iter().map(ToString::to_string).collect();
    lines.extend(more);
    assert!(
        lines.is_empty(),
        "{} violations of {rule}:\n{}",
        lines.len(),
        lines.join("\n")
    );
}

// Every chapter's headings follow the rhythm: objectives, predict, run, change, break, exercise, summary.
#[test]
fn every_chapter_keeps_the_rhythm() {
    holds(Rule::Rhythm);
}

// Every listing of a chapter has its caption, numbered in order, naming the file it includes.
#[test]
fn every_listing_has_its_numbered_caption() {
    holds(Rule::Listings);
}

// Hand-written lines in fences fit 80 characters, included source 100, and the CSS wraps them.
#[test]
fn every_fence_fits_the_page() {
    let css = wrap_rule(&workspace_root()).err();
    holds_with(Rule::Width, css.into_iter().collect());
}

// Every Rust solution in <details> is included from a file that cargo test compiles.
#[test]
fn every_solution_is_compiled() {
    holds(Rule::Solutions);
}

// Every file or folder a page names, in a code span or a link, exists.
#[test]
fn every_named_path_exists() {
    holds(Rule::Paths);
}

// No chapter shows a piece's blanked body before the exercise that asks for it.
#[test]
fn no_answer_comes_before_its_exercise() {
    let root = workspace_root();
    let pieces = pieces(&root).expect("tests/blanks.toml reads");
    let answers = answers(&root, &pieces).expect("every blank is found");
    assert_eq!(
        answers.len(),
        pieces.iter().map(|p| p.blank.len()).sum::<usize>()
    );
    let mut found = Vec::new();
    for page in pages(&root).expect("docs/src is readable") {
        let text = std::fs::read_to_string(root.join(&page)).expect("readable");
        found.extend(early_answers(&root, &page, &text, &answers));
    }
    let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert!(
        lines.is_empty(),
        "{} answers shown early:\n{}",
        lines.len(),
        lines.join("\n")
    );
}

// The glossary lists its terms in the order the introduction and the chapters first link them.
#[test]
fn the_glossary_is_in_the_order_a_reader_meets_its_terms() {
    let found = glossary_order(&workspace_root()).expect("the book is readable");
    let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert!(lines.is_empty(), "{}", lines.join("\n"));
}
