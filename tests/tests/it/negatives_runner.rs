//! The negatives runner holds each variant to its whole declared suites: a suite, a file or a
//! check that is missing or ignored makes the variant a broken lab, and a PostgreSQL check
//! ignored for want of a server is a skip, never a pass.
//!
//! Most tests feed the runner's decision function (`verdict::judge_run`) recorded output of the
//! real variants and packages, changed the way a variant goes wrong; one builds scratch copies
//! of a real variant with each hole and runs their `cargo test`.

use std::collections::BTreeSet;
use std::path::Path;

use retrykey_tests::cargo_test::cargo_test;
use retrykey_tests::test_output::TestRun;
use retrykey_tests::verdict::{Findings, judge_run, rate_run_problem};
use retrykey_tests::{Declared, declared, workspace_root};

/// `cargo test -p retrykey --tests -- --list`: the package split-critical-section mirrors.
const RETRYKEY_LIST: &str = "\
contract::capacity_rejects_new_operation: test
contract::ceiling_rejects_without_effect: test
contract::changed_job_conflicts: test
contract::changed_units_conflicts: test
contract::concurrent_distinct_keys_lose_no_update: test
contract::concurrent_same_key_one_effect: test
contract::conflict_leaves_state_unchanged: test
contract::exact_ceiling_is_accepted: test
contract::historical_receipt_keeps_original_total: test
contract::invalid_keys_are_rejected: test
contract::invalid_requests_are_rejected: test
contract::lost_reply_then_retry: test
contract::new_key_is_new_operation: test
contract::rejected_operation_leaves_no_record: test
contract::replay_at_capacity_succeeds: test
contract::replay_marks_only_delivery: test
default_limits::default_store_commits_at_most_1_000_000_units: test
default_limits::default_store_holds_64_records: test
model::matches_reference_model: test
story::bad_input_is_refused_before_anything_runs: test
story::changed_retry_units_conflict_and_change_nothing: test
story::default_story_replays_the_original_receipt: test
story::every_path_prints_its_whole_story: test
story::fresh_retry_key_applies_twice: test
story::output_is_identical_on_every_run: test
stress::distinct_keys_64_threads: test
stress::one_key_64_threads: test
values::a_lone_or_trailing_minus_is_not_a_number_but_a_minus_count_is_negative: test
values::errors_are_equal_only_when_kind_and_details_match: test
values::key_keeps_the_text_the_client_sent_and_hides_it_from_debug: test
values::request_keeps_its_job_and_units: test
values::store_reports_its_limits_and_the_request_each_key_was_first_used_with: test
";

/// `cargo test -p split-critical-section`, its test program's lines (the race checks passed).
const SPLIT_CRITICAL_SECTION_RUN: &str = "\
test contract::capacity_rejects_new_operation ... ok
test contract::ceiling_rejects_without_effect ... ok
test contract::changed_job_conflicts ... ok
test contract::changed_units_conflicts ... ok
test contract::concurrent_distinct_keys_lose_no_update ... ok
test contract::concurrent_same_key_one_effect ... ok
test contract::conflict_leaves_state_unchanged ... ok
test contract::exact_ceiling_is_accepted ... ok
test contract::historical_receipt_keeps_original_total ... ok
test contract::invalid_keys_are_rejected ... ok
test contract::invalid_requests_are_rejected ... ok
test contract::lost_reply_then_retry ... ok
test contract::new_key_is_new_operation ... ok
test contract::rejected_operation_leaves_no_record ... ok
test contract::replay_at_capacity_succeeds ... ok
test contract::replay_marks_only_delivery ... ok
test model::matches_reference_model ... ok
test stress::distinct_keys_64_threads ... ok
test stress::one_key_64_threads ... ok
";

/// `cargo test -p retrykey-durable --tests -- --list`, the suites check-then-insert runs and one
/// it does not.
const DURABLE_LIST: &str = "\
connections::connections::backend_terminated_before_commit: test
connections::connections::changed_input_conflicts: test
connections::connections::connection_lost_before_commit: test
connections::connections::reply_lost_after_commit: test
connections::connections::rollback_before_commit: test
connections::connections::two_connections_one_effect: test
contract_pg::contract::capacity_rejects_new_operation: test
contract_pg::contract::ceiling_rejects_without_effect: test
contract_pg::contract::changed_job_conflicts: test
contract_pg::contract::changed_units_conflicts: test
contract_pg::contract::concurrent_distinct_keys_lose_no_update: test
contract_pg::contract::concurrent_same_key_one_effect: test
contract_pg::contract::conflict_leaves_state_unchanged: test
contract_pg::contract::exact_ceiling_is_accepted: test
contract_pg::contract::historical_receipt_keeps_original_total: test
contract_pg::contract::invalid_keys_are_rejected: test
contract_pg::contract::invalid_requests_are_rejected: test
contract_pg::contract::lost_reply_then_retry: test
contract_pg::contract::new_key_is_new_operation: test
contract_pg::contract::rejected_operation_leaves_no_record: test
contract_pg::contract::replay_at_capacity_succeeds: test
contract_pg::contract::replay_marks_only_delivery: test
contract_pg::model::matches_reference_model: test
contract_pg::stress::distinct_keys_64_threads: test
contract_pg::stress::one_key_64_threads: test
retention::postgres_full_ledger_rejects_rather_than_evicts: test
retention::postgres_replays_until_swept: test
retention::postgres_swept_key_is_a_new_operation: test
retention::sqlite_endless_window_keeps_everything: test
retention::sqlite_full_ledger_rejects_rather_than_evicts: test
retention::sqlite_replays_until_swept: test
retention::sqlite_swept_key_is_a_new_operation: test
retention::sweeper_thread_deletes_expired_records: test
";

/// `cargo test -p check-then-insert` without `RETRYKEY_PG_URL`: every check ignored, with why.
const CHECK_THEN_INSERT_RUN: &str = "\
test connections::backend_terminated_before_commit ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test connections::changed_input_conflicts ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test connections::connection_lost_before_commit ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test connections::reply_lost_after_commit ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test connections::rollback_before_commit ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test connections::two_connections_one_effect ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::capacity_rejects_new_operation ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::ceiling_rejects_without_effect ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::changed_job_conflicts ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::changed_units_conflicts ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::concurrent_distinct_keys_lose_no_update ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::concurrent_same_key_one_effect ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::conflict_leaves_state_unchanged ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::exact_ceiling_is_accepted ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::historical_receipt_keeps_original_total ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::invalid_keys_are_rejected ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::invalid_requests_are_rejected ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::lost_reply_then_retry ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::new_key_is_new_operation ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::rejected_operation_leaves_no_record ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::replay_at_capacity_succeeds ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test contract::replay_marks_only_delivery ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test model::matches_reference_model ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test stress::distinct_keys_64_threads ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
test stress::one_key_64_threads ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL
";

fn listed(text: &str) -> BTreeSet<String> {
    TestRun::parse(text).listed
}

/// The judgement on a run of split-critical-section, with PostgreSQL configured or not.
fn split_critical_section(run: &str) -> Findings {
    let declared = declared("split-critical-section").expect("the declaration");
    judge_run(
        &TestRun::parse(run),
        &declared,
        &listed(RETRYKEY_LIST),
        "retrykey",
        false,
    )
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|line| line.to_string()).collect()
}

// The real, untouched variant holds against the real list of the package it mirrors.
#[test]
fn the_untouched_variant_holds() {
    assert_eq!(
        split_critical_section(SPLIT_CRITICAL_SECTION_RUN),
        Findings::default()
    );
}

// Hole 1: `contract_suite!` plus `model_suite!` in place of `ledger_suite!` drops the stress
// suite, and with it a may-fail check.
#[test]
fn a_dropped_suite_breaks_the_variant() {
    let run: String = (SPLIT_CRITICAL_SECTION_RUN.lines())
        .filter(|line| !line.starts_with("test stress::"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(
        split_critical_section(&run).problems,
        strings(&["does not run the suite stress:: (2 checks, which retrykey runs)"])
    );
}

// Hole 2: without the file that holds the checks, no suite runs, and a rate run of a may-fail
// check finds nothing to run instead of reporting "caught 0/10".
#[test]
fn a_deleted_test_file_breaks_the_variant() {
    assert_eq!(
        split_critical_section("").problems,
        strings(&[
            "does not run the suite contract:: (16 checks, which retrykey runs)",
            "does not run the suite model:: (1 check, which retrykey runs)",
            "does not run the suite stress:: (2 checks, which retrykey runs)",
        ])
    );
    let rate_run = TestRun::parse("running 0 tests\n");
    assert_eq!(
        rate_run_problem(&rate_run, "stress::one_key_64_threads"),
        Some("may-fail check stress::one_key_64_threads did not run in its rate run".to_string())
    );
}

// Hole 3: checks marked `#[ignore]`, with or without a reason, break the variant, and an
// ignored may-fail check is no rate run; "needs PostgreSQL" is no excuse for a variant that
// does not need it.
#[test]
fn ignored_checks_break_the_variant() {
    let run = (SPLIT_CRITICAL_SECTION_RUN)
        .replace(
            "contract::concurrent_same_key_one_effect ... ok",
            "contract::concurrent_same_key_one_effect ... ignored",
        )
        .replace(
            "model::matches_reference_model ... ok",
            "model::matches_reference_model ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL",
        );
    assert_eq!(
        split_critical_section(&run).problems,
        strings(&[
            "ignores contract::concurrent_same_key_one_effect",
            "ignores the whole suite model:: (1 check): needs PostgreSQL: set RETRYKEY_PG_URL",
        ])
    );
    let rate_run = TestRun::parse("test stress::one_key_64_threads ... ignored\n");
    assert_eq!(
        rate_run_problem(&rate_run, "stress::one_key_64_threads"),
        Some("may-fail check stress::one_key_64_threads was ignored in its rate run".to_string())
    );
}

/// The judgement on a run of check-then-insert.
fn check_then_insert(run: &str, postgres_skip: bool) -> Findings {
    let declared = declared("check-then-insert").expect("the declaration");
    judge_run(
        &TestRun::parse(run),
        &declared,
        &listed(DURABLE_LIST),
        "retrykey-durable",
        postgres_skip,
    )
}

// Without a server, every PostgreSQL check ignored "needs PostgreSQL" is a skip: all are named,
// none is a pass. Any other ignore, or that one with a server configured, breaks the variant.
#[test]
fn only_checks_that_need_postgresql_are_skipped() {
    let skipped = check_then_insert(CHECK_THEN_INSERT_RUN, true);
    assert_eq!(skipped.problems, Vec::<String>::new());
    assert_eq!(
        skipped.skipped,
        TestRun::parse(CHECK_THEN_INSERT_RUN).ignored
    );
    assert_eq!(skipped.skipped.len(), 25);

    let configured = check_then_insert(CHECK_THEN_INSERT_RUN, false);
    assert_eq!(configured.skipped, BTreeSet::new());
    assert_eq!(
        configured.problems[0],
        "ignores the whole suite connections:: (6 checks): needs PostgreSQL: set RETRYKEY_PG_URL"
    );
    assert_eq!(configured.problems.len(), 4, "{:?}", configured.problems);

    let plain = CHECK_THEN_INSERT_RUN.replace(
        "contract::lost_reply_then_retry ... ignored, needs PostgreSQL: set RETRYKEY_PG_URL",
        "contract::lost_reply_then_retry ... ignored",
    );
    assert_eq!(
        check_then_insert(&plain, true).problems,
        strings(&["ignores contract::lost_reply_then_retry"])
    );
    let without_stress: String = (CHECK_THEN_INSERT_RUN.lines())
        .filter(|line| !line.starts_with("test stress::"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(
        check_then_insert(&without_stress, true).problems,
        strings(&["does not run the suite stress:: (2 checks, which retrykey-durable runs)"])
    );
}

const VARIANT: &str = "split-critical-section";

/// Runs `cargo test` of a package of the scratch workspace, with extra arguments.
fn scratch_test(workspace: &Path, package: &str, args: &[&str], env: &[(&str, &str)]) -> TestRun {
    let manifest = workspace.join("Cargo.toml");
    let mut all = vec!["--manifest-path", manifest.to_str().expect("a UTF-8 path")];
    all.extend(args);
    cargo_test(package, &all, env).expect("cargo runs")
}

/// The runner's judgement on the scratch copy of the variant as its files now stand.
fn judge_scratch(
    workspace: &Path,
    declared: &Declared,
    mirrored: &BTreeSet<String>,
    env: &[(&str, &str)],
) -> Vec<String> {
    let run = scratch_test(workspace, VARIANT, &[], env);
    judge_run(&run, declared, mirrored, "retrykey", false).problems
}

// A scratch copy of the real variant, built and run: untouched it holds; with its stress suite
// dropped, its checks ignored, or its test file deleted it is broken, and a rate run of a
// may-fail check finds nothing to run.
#[test]
fn scratch_copies_with_each_hole_are_broken() {
    let workspace = crate::exercise::workspace_copy("negatives-workspace");
    // The workspace's own target folder, as the exercise checker's test uses: the copy's crates
    // build apart, its third-party crates are reused.
    let target = workspace_root().join("target");
    let target = target.to_string_lossy();
    let env = [
        ("CARGO_TARGET_DIR", target.as_ref()),
        ("CARGO_NET_OFFLINE", "true"),
    ];
    let declared = declared(VARIANT).expect("the declaration");
    let mirrored = scratch_test(&workspace, "retrykey", &["--tests", "--", "--list"], &env);
    assert_eq!(mirrored.diagnostics, Vec::<String>::new());
    let mirrored = mirrored.listed;
    // The suites' sizes as the mirrored package lists them, so a new check changes no line here.
    let size = |suite: &str| {
        let count = mirrored
            .iter()
            .filter(|check| check.starts_with(suite))
            .count();
        match count {
            1 => "1 check".to_string(),
            count => format!("{count} checks"),
        }
    };
    let (contract, model, stress) = (size("contract::"), size("model::"), size("stress::"));

    assert_eq!(
        judge_scratch(&workspace, &declared, &mirrored, &env),
        Vec::<String>::new(),
        "the untouched copy holds"
    );

    let main = workspace
        .join("labs")
        .join(VARIANT)
        .join("tests/it/main.rs");
    let original = std::fs::read_to_string(&main).expect("the variant's test program");
    let whole = "retrykey_contract::ledger_suite!(Store::with_limits);";
    assert!(original.contains(whole), "{original}");
    let with = |replacement: &str| {
        std::fs::write(&main, original.replace(whole, replacement)).expect("the changed copy");
    };

    with(
        "retrykey_contract::contract_suite!(Store::with_limits);\n\
         retrykey_contract::model_suite!(Store::with_limits);",
    );
    assert_eq!(
        judge_scratch(&workspace, &declared, &mirrored, &env),
        vec![format!(
            "does not run the suite stress:: ({stress}, which retrykey runs)"
        )]
    );

    with("retrykey_contract::ledger_suite!(#[ignore] Store::with_limits);");
    assert_eq!(
        judge_scratch(&workspace, &declared, &mirrored, &env),
        vec![
            format!("ignores the whole suite contract:: ({contract})"),
            format!("ignores the whole suite model:: ({model})"),
            format!("ignores the whole suite stress:: ({stress})"),
        ]
    );

    std::fs::remove_dir_all(workspace.join("labs").join(VARIANT).join("tests"))
        .expect("the test file can be deleted");
    assert_eq!(
        judge_scratch(&workspace, &declared, &mirrored, &env),
        vec![
            format!("does not run the suite contract:: ({contract}, which retrykey runs)"),
            format!("does not run the suite model:: ({model}, which retrykey runs)"),
            format!("does not run the suite stress:: ({stress}, which retrykey runs)"),
        ]
    );
    let check = "stress::one_key_64_threads";
    let mut rate_env = env.to_vec();
    rate_env.push(("STRESS_ROUNDS", "1"));
    let rate_run = scratch_test(
        &workspace,
        VARIANT,
        &["--tests", "--", "--exact", check],
        &rate_env,
    );
    assert_eq!(
        rate_run_problem(&rate_run, check),
        Some(format!(
            "may-fail check {check} did not run in its rate run"
        ))
    );
}
