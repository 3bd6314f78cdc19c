//! A bad flag value stops the server before it opens anything: one line on stderr, status 2,
//! and no database file.

use std::process::Command;

use crate::support::DbFile;

/// Runs `payments ARGS` (without RETRYKEY_PG_URL) and returns its status code, stdout and stderr.
fn refused(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_payments"))
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .env_remove("RETRYKEY_PG_URL")
        .output()
        .expect("the payments binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Asserts that `args`, given after a valid `--store sqlite:FILE`, is refused with `line`
/// and that the file was never created.
fn assert_refused_on_sqlite(args: &[&str], line: &str) {
    let file = DbFile::new("flags");
    let store = file.store();
    let mut all = vec!["--store", store.as_str()];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = refused(&all);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (Some(2), "", format!("{line}\n").as_str()),
        "{args:?}"
    );
    assert!(!file.exists(), "{args:?} created {}", file.path().display());
}

// An unknown store, `sqlite:` without a path, or `postgres` without its URL is refused.
#[test]
fn bad_stores_are_refused_in_one_line() {
    for (store, line) in [
        (
            "mysql",
            r#"payments: --store: expected memory, sqlite:PATH or postgres, got "mysql""#,
        ),
        (
            "sqlite:",
            "payments: --store: sqlite: needs a file path, as in sqlite:/tmp/keys.sqlite",
        ),
        (
            "postgres",
            "payments: --store: postgres needs RETRYKEY_PG_URL, as in postgres://user:password@127.0.0.1:5432/db",
        ),
    ] {
        let (code, stdout, stderr) = refused(&["--store", store]);
        assert_eq!(
            (code, stdout.as_str(), stderr.as_str()),
            (Some(2), "", format!("{line}\n").as_str()),
            "{store}"
        );
    }
}

// Zero or non-numeric limits are refused, and the store they came with is not created.
#[test]
fn bad_limits_are_refused_before_the_store_is_created() {
    for (flag, value) in [
        ("--max-entries", "0"),
        ("--max-entries", "many"),
        ("--max-entries", "-1"),
        ("--max-bytes", "0"),
        ("--max-bytes", "1.5"),
    ] {
        assert_refused_on_sqlite(
            &[flag, value],
            &format!("payments: {flag}: expected a whole number above zero, got {value:?}"),
        );
    }
}

// Durations need a whole number and a unit (ms, s, m, h), above zero.
#[test]
fn bad_durations_are_refused_before_the_store_is_created() {
    for (flag, value) in [
        ("--retention", "x"),
        ("--retention", "10"),
        ("--lease", "5d"),
        ("--lease", "1.5s"),
    ] {
        assert_refused_on_sqlite(
            &[flag, value],
            &format!(
                "payments: {flag}: expected a duration like 500ms, 30s, 10m or 24h, got {value:?}"
            ),
        );
    }
    assert_refused_on_sqlite(
        &["--lease", "0ms"],
        r#"payments: --lease: expected a duration above zero, like 500ms, 30s, 10m or 24h, got "0ms""#,
    );
}

// A PostgreSQL schema name that is not a plain lower-case identifier is refused.
#[test]
fn bad_schema_names_are_refused() {
    assert_refused_on_sqlite(
        &["--pg-schema", "Class-2"],
        r#"payments: --pg-schema: expected a schema name of lower-case letters, digits and _ (not a digit first, at most 63 bytes), got "Class-2""#,
    );
}

// An unknown pause point is refused; so are an unknown flag and a flag without its value.
#[test]
fn bad_pause_points_and_malformed_flags_are_refused() {
    assert_refused_on_sqlite(
        &["--pause-at", "later"],
        r#"payments: --pause-at: expected reserved, handler, charged or committed, got "later""#,
    );
    assert_refused_on_sqlite(
        &["--colour"],
        "payments: unexpected argument '--colour' found (see --help)",
    );
    assert_refused_on_sqlite(
        &["--max-entries"],
        "payments: a value is required for '--max-entries <N>' but none was supplied (see --help)",
    );
}
