//! Convention 5: every file or folder the book names exists.
//!
//! A page names a path in two ways: in code spans (`` `crates/retrykey/src/store.rs` ``) and as a
//! link target (`[the map](../../ARCHITECTURE.md)`). A code span counts as a path when it starts
//! at a top folder of the workspace (`crates/`, `labs/`, `tests/`, ...) or at a package's own
//! `tests/it/` or `src/`; it must exist from the workspace root or, for the package-relative
//! forms, inside some package. A link that is not a web address must resolve from the page.
//! Spans with a placeholder (`<variant>`, `*`, `{`, `...`, `NN`) name a shape, not a file.

use std::path::{Path, PathBuf};

use super::{Rule, Violation, code_spans, violation};

/// The folders a workspace path starts with (`exercises/` is the student's, made on demand;
/// `examples/shop` is the service outside the workspace, a crate's `examples/` is its own).
const TOP: [&str; 8] = [
    "crates/",
    "labs/",
    "tests/",
    "docs/",
    "benches/",
    ".ci/",
    ".config/",
    "examples/shop",
];

/// Package-relative starts: the path lies in some package of `crates/` or `labs/`.
const IN_PACKAGE: [&str; 3] = ["src/", "tests/it/", "examples/"];

/// Convention 5 on one page.
pub fn paths(root: &Path, file: &Path, text: &str) -> Vec<Violation> {
    let mut found = Vec::new();
    let mut fence = false;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        for span in code_spans(line) {
            if let Some(missing) = missing_span(root, span) {
                let message = format!("names `{span}`, which does not exist ({missing})");
                found.push(violation(file, index + 1, Rule::Paths, message));
            }
        }
        for target in link_targets(line) {
            let page_dir = root.join(file).parent().map(Path::to_path_buf);
            let resolved = page_dir.unwrap_or_default().join(target);
            if !resolved.exists() {
                let message = format!("links to `{target}`, which does not exist");
                found.push(violation(file, index + 1, Rule::Paths, message));
            }
        }
    }
    found
}

/// The relative targets of a line's Markdown links, without their `#fragment`.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find("](") {
        let after = &rest[start + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split('#').next().unwrap_or_default();
        let web = target.contains("://") || target.starts_with("mailto:");
        if !target.is_empty() && !web && !target.contains(' ') {
            targets.push(target);
        }
        rest = &after[end + 1..];
    }
    targets
}

/// Why a code span that names a path does not resolve, or `None` (not a path, or it exists).
fn missing_span(root: &Path, span: &str) -> Option<String> {
    let span = span.trim_end_matches('/');
    let placeholder = ["<", "*", "{", "...", "NN", "$", " "]
        .iter()
        .any(|mark| span.contains(mark));
    if placeholder || !span.contains('/') {
        return None;
    }
    let path = span.split(':').next().unwrap_or(span);
    if TOP.iter().any(|top| path.starts_with(top)) {
        if root.join(path).exists() || in_some_package(root, path) {
            return None;
        }
        return Some("from the workspace root".into());
    }
    if IN_PACKAGE.iter().any(|start| path.starts_with(start)) {
        return (!in_some_package(root, path)).then(|| "in no package".into());
    }
    None
}

/// Whether `path` exists inside some package of the workspace.
fn in_some_package(root: &Path, path: &str) -> bool {
    packages(root)
        .iter()
        .any(|package| package.join(path).exists())
}

fn packages(root: &Path) -> Vec<PathBuf> {
    let mut found = vec![root.join("tests"), root.join("benches")];
    for folder in ["crates", "labs"] {
        let Ok(entries) = std::fs::read_dir(root.join(folder)) else {
            continue;
        };
        found.extend(entries.flatten().map(|entry| entry.path()));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> Vec<String> {
        let root = crate::workspace_root();
        let page = Path::new("docs/src/page.md");
        paths(&root, page, text)
            .into_iter()
            .map(|v| v.message)
            .collect()
    }

    #[test]
    fn paths_that_exist_pass_and_shapes_are_not_paths() {
        let text = "See `crates/retrykey/src/store.rs`, `tests/it/main.rs`, `labs/<variant>/`,\n\
                    `crates/*/tests`, `just run`, `a/b c`, [the map](../../ARCHITECTURE.md),\n\
                    [a page](ch01-lost-reply.md#run) and [the web](https://example.org/x).\n\
                    ```text\n`crates/nowhere.rs` inside a fence is output, not prose\n```\n";
        assert_eq!(said(text), Vec::<String>::new());
    }

    #[test]
    fn a_path_that_moved_is_named() {
        let text = "The file `tests/tests/stage1_negatives.rs` and `src/nowhere.rs`, and\n\
                    [gone](ch99-gone.md).\n";
        let found = said(text);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(
            found[0].contains("tests/tests/stage1_negatives.rs"),
            "{found:?}"
        );
        assert!(found[1].contains("in no package"), "{found:?}");
        assert!(found[2].contains("ch99-gone.md"), "{found:?}");
    }
}
