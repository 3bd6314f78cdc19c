//! The conformance kit's harness for the HTTP variants: the correct layer, served the same way,
//! passes every kit check (so a variant's failures are its own), and the harness serves exactly
//! the variants of the HTTP stage, each declaring the kit checks it fails.

use std::collections::BTreeSet;

use retrykey_tests::conformed::{STAGE, VARIANTS, kit_on};
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
