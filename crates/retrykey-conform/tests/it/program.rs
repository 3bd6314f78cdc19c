//! The `conform` program: its list, its refusals (exit 2, nothing sent) and its exit status.

use std::process::Command;

use crate::servers::{Served, bare};

fn conform(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(args)
        .output()
        .expect("conform runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `conform --base <served> ARGS`, run off the runtime that serves.
async fn against(served: &Served, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["--base".to_owned(), served.server.url()];
    all.extend(args.iter().map(|arg| arg.to_string()));
    tokio::task::spawn_blocking(move || {
        conform(&all.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .expect("conform ran")
}

#[test]
fn list_names_every_check_with_its_source() {
    let (code, stdout, _) = conform(&["--list"]);
    assert_eq!(code, 0);
    let names: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    let expected: Vec<&str> = retrykey_conform::CHECKS
        .iter()
        .map(|check| check.name)
        .collect();
    assert_eq!(names, expected);
    assert!(stdout.contains("draft §2.7") && stdout.contains("lab"));
}

#[test]
fn bad_flags_are_refused_in_one_line_before_any_request() {
    for (args, says) in [
        (vec!["--base", "https://127.0.0.1:1"], "not an http:// URL"),
        (
            vec!["--base", "http://127.0.0.1:1", "--check", "nope"],
            "no such check",
        ),
        (
            vec![
                "--base",
                "http://127.0.0.1:1",
                "--profile",
                "/nonexistent.toml",
            ],
            "cannot read the profile",
        ),
    ] {
        let (code, stdout, stderr) = conform(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stdout.is_empty() && stderr.lines().count() == 1 && stderr.contains(says),
            "{stderr}"
        );
    }
}

// Against a server that breaks the key's promises: exit 1, and the table says which failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_check_exits_1_with_its_witness() {
    let served = bare().await;
    let (code, stdout, _) = against(
        &served,
        &[
            "--check",
            "first-request-succeeds",
            "--check",
            "changed-body-is-422",
        ],
    )
    .await;
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("changed-body-is-422 failed:") && stdout.contains("got 201, not 422"),
        "{stdout}"
    );
    assert!(stdout.contains("1 passed, 1 failed, 0 skipped"), "{stdout}");
    served.server.stop().await;
}

// Nothing listening: one line saying so, exit 3 (not tested, rather than failed), and no table
// of identical failures.
#[test]
fn an_unreachable_server_is_one_line() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let (code, stdout, stderr) = conform(&["--base", &format!("http://127.0.0.1:{port}")]);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stdout.is_empty() && stderr.contains("nothing answers at"),
        "{stderr}"
    );
}

// `--json`: the same verdicts, for a program to read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_carries_each_verdict_and_witness() {
    let served = bare().await;
    let (code, stdout, _) = against(
        &served,
        &[
            "--json",
            "--check",
            "first-request-succeeds",
            "--check",
            "missing-key-is-refused",
        ],
    )
    .await;
    assert_eq!(code, 1, "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let checks = report["checks"].as_array().expect("checks");
    assert_eq!(
        (report["passed"].as_u64(), report["failed"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(checks[0]["verdict"], "passed");
    assert_eq!(checks[1]["name"], "missing-key-is-refused");
    assert_eq!(checks[1]["verdict"], "failed");
    let witness = checks[1]["witness"].as_array().expect("a witness");
    assert!(
        witness[0]["got"].as_str().expect("text").starts_with("201"),
        "{stdout}"
    );
    served.server.stop().await;
}

// Without `--profile` the kit assumes the lab's payments, and says so on the report's first line;
// a server that does not answer like them is told so first, in one line, with where to start a
// profile of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_profile_a_server_unlike_the_labs_is_told_first() {
    let served = bare().await;
    // The same handler under another prefix: POST <base>/payments finds no route there.
    let elsewhere = format!("{}/v2", served.server.url());
    let args = ["--base", &elsewhere, "--check", "first-request-succeeds"].map(str::to_owned);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || {
        conform(&args.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .expect("conform ran");
    assert_eq!(code, 1, "{stdout}");
    let said: Vec<&str> = (stderr.lines())
        .filter(|line| line.starts_with("conform:"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains("POST /payments answered 404") && said[0].contains("conform --init"),
        "{stderr}"
    );
    assert!(
        stdout.starts_with("profile: the lab's payments (built in"),
        "{stdout}"
    );
    // The lab's own payments answer as assumed: nothing to say before the report.
    let (code, stdout, stderr) = against(&served, &["--check", "first-request-succeeds"]).await;
    assert_eq!(code, 0, "{stdout}");
    assert!(!stderr.contains("conform:"), "{stderr}");
    served.server.stop().await;
}

// `--init` prints a profile the kit reads, for a server unlike the lab's, and sends nothing.
#[test]
fn init_prints_a_profile_to_start_from() {
    let (code, stdout, _) = conform(&["--init"]);
    assert_eq!(code, 0);
    assert_eq!(stdout, retrykey_conform::EXAMPLE_PROFILE);
    let profile = retrykey_conform::Profile::parse(&stdout).expect("a profile the kit reads");
    assert_ne!(profile.request.path, "/payments", "not the lab's own");
}

// Chaos against the lab's payments: every rule holds under the proxy's faults, and the server
// ran each key's operation once at most.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_holds_against_the_labs_payments() {
    let served = crate::servers::payments_on(retrykey_replicas::StoreChoice::Memory).await;
    let (code, stdout, stderr) = against(&served, &["--chaos", "40", "--seed", "3"]).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("chaos: 40 operations (seed 3), "),
        "{stdout}"
    );
    assert!(
        stdout.contains("answers lost") && stdout.contains("every rule held"),
        "{stdout}"
    );
    let charges = served.payments.charges().await.expect("the charges");
    assert!(
        (1..=40).contains(&charges),
        "{charges} charges for 40 operations"
    );
    served.server.stop().await;
}

// Chaos against a handler with no idempotency: it fails, and the failure is cut down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_fails_a_server_without_keys_with_a_short_witness() {
    let served = bare().await;
    let (code, stdout, _) = against(&served, &["--chaos", "40", "--seed", "3"]).await;
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("\nFAIL\n"), "{stdout}");
    let shrunk = stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("shrunk from 40 operations to "))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("no shrinking line: {stdout}"));
    assert!(shrunk < 40, "{stdout}");
    // More handler runs than operations: retries ran again behind no key.
    assert!(served.payments.attempts() > 40);
    served.server.stop().await;
}

#[test]
fn a_seed_without_chaos_is_refused() {
    let (code, _, stderr) = conform(&["--base", "http://127.0.0.1:1", "--seed", "3"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--chaos"), "{stderr}");
}
