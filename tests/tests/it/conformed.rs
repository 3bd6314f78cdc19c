//! The conformance kit's harness for the HTTP variants: the correct layer, served the same way,
//! passes every kit check (so a variant's failures are its own), and the harness serves exactly
//! the variants of the HTTP stage, each declaring the kit checks it fails.

use std::collections::BTreeSet;

use retrykey_conform::profile::ErrorPolicy;
use retrykey_tests::conformed::{STAGE, VARIANTS, kit_on, profile, serve};
use retrykey_tests::variants;

#[test]
fn the_correct_layer_passes_every_kit_check_in_the_harness() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let report = runtime.block_on(kit_on(None)).expect("the correct layer");
    assert_eq!(report.failed(), Vec::<&str>::new(), "{}", report.text());
    assert_eq!(report.skipped(), Vec::<&str>::new(), "{}", report.text());
    assert_eq!(report.passed().len(), retrykey_conform::CHECKS.len());
}

#[test]
fn the_harness_serves_exactly_the_http_variants() {
    let http: BTreeSet<String> = variants()
        .expect("the labs")
        .into_iter()
        .filter(|(_, declared)| declared.stage == STAGE)
        .inspect(|(name, declared)| {
            let checks = declared
                .conform
                .as_ref()
                .unwrap_or_else(|| panic!("{name} declares no conform"));
            assert!(
                !checks.is_empty(),
                "{name}: the kit sees every HTTP variant's bug over the wire"
            );
        })
        .map(|(name, _)| name)
        .collect();
    let served: BTreeSet<String> = VARIANTS.iter().map(|name| name.to_string()).collect();
    assert_eq!(served, http);
}

// Replaying a 5xx is a policy the draft allows: declared in the profile, the variant that does
// it passes the check it fails under the lab's policy, and the kit still sees a replay.
#[test]
fn a_declared_replayed_5xx_is_a_policy_not_a_defect() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let name = "server-error-releases-or-replays";
    let mut replaying = profile();
    if let Some(fail) = replaying.fail_once.as_mut() {
        fail.policy = ErrorPolicy::Replay;
    }
    for (policy, variant, passes) in [
        (&replaying, Some("replay-5xx"), true),
        (&replaying, None, false),
        (&profile(), Some("replay-5xx"), false),
    ] {
        let report = runtime.block_on(async {
            let server = serve(variant).await.expect("a known variant");
            let base = server.url().parse().expect("a loopback URL");
            let report = retrykey_conform::run(policy, &base, &[name.to_owned()]).await;
            server.stop().await;
            report.expect("a known check")
        });
        assert_eq!(
            report.passed() == [name],
            passes,
            "{variant:?}: {}",
            report.text()
        );
    }
}

/// A chaos run of `operations` against `variant` in the harness, with a fixed seed.
fn chaos_on(variant: Option<&str>, operations: usize) -> retrykey_conform::ChaosReport {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let server = serve(variant).await.expect("a known variant");
        let base = server.url().parse().expect("a loopback URL");
        let report = retrykey_conform::chaos(&profile(), &base, operations, 7).await;
        server.stop().await;
        report.expect("a fault proxy on 127.0.0.1")
    })
}

// Chaos is told nothing of what to look for: against the correct layer every rule holds under
// lost answers, resets and delays, and every operation's effect is counted once at most.
#[test]
fn chaos_finds_nothing_in_the_correct_layer() {
    let report = chaos_on(None, 200);
    assert!(report.failure.is_none(), "{}", report.text());
    let [reset, lost, delayed] = report.faults;
    assert!(reset > 0 && lost > 0 && delayed > 0, "{}", report.text());
    assert!(report.effects.is_some_and(|made| made > 0 && made <= 200));
}

// Three bugs the checks find one by one, found by chaos without being named, each cut down to
// a witness of a few exchanges.
#[test]
fn chaos_finds_the_races_and_the_leaks_unnamed() {
    for variant in ["split-check-insert", "no-fingerprint", "unscoped-key"] {
        let report = chaos_on(Some(variant), 200);
        let Some(failure) = &report.failure else {
            panic!("{variant}: chaos found nothing\n{}", report.text());
        };
        assert!(
            failure.operations < 200,
            "{variant}: not cut down\n{}",
            report.text()
        );
        assert!(
            (1..=retrykey_conform::MAX_WITNESS).contains(&failure.witness.len()),
            "{variant}\n{}",
            report.text()
        );
        eprintln!("{variant}\n{}", report.text());
    }
}
