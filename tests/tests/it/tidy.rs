//! The architecture's rules (`ARCHITECTURE.md`), each one test over the whole workspace.

use retrykey_tests::Error;
use retrykey_tests::tidy;

/// Fails with every violation on its own line.
fn holds(rule: &str, check: fn() -> Result<Vec<String>, Error>) {
    let violations = check().unwrap_or_else(|error| panic!("{rule}: cannot check: {error}"));
    assert!(
        violations.is_empty(),
        "{rule}: {} violation(s)\n{}",
        violations.len(),
        violations.join("\n")
    );
}

// The layer map names every crate of the workspace, and only those (`(to come)` rows aside).
#[test]
fn the_map_lists_exactly_the_workspace_crates() {
    holds("the map is the workspace", tidy::map_mismatches);
}

// A crate's normal and build dependencies are all ones its row in the map allows.
#[test]
fn dependencies_point_only_where_the_map_allows() {
    holds("dependency direction", tidy::dependency_direction);
}

// No product crate links a checks crate, test support, a lab or the tools.
#[test]
fn no_product_crate_depends_on_test_code() {
    holds("no test code in products", tidy::test_code_in_products);
}

// What a crate's code names from the workspace, resolved through re-exports, its row allows.
#[test]
fn code_imports_only_what_the_map_allows() {
    holds("resolved imports", tidy::crate_imports);
}

// No crate's modules import each other in a circle.
#[test]
fn no_module_import_circle_inside_a_crate() {
    holds("no import circle", tidy::import_cycles);
}

// A type name means one thing: defined once, an `Error` per crate and the listed names aside.
#[test]
fn every_type_name_has_one_meaning() {
    holds("one meaning per name", tidy::repeated_type_names);
}

// No product function runs over 60 lines.
#[test]
fn no_product_function_is_over_60_lines() {
    holds("short functions", tidy::long_functions);
}

// A member that builds tokio or a database client asks for the one shared feature set; a
// std-only member does not.
#[test]
fn every_member_that_builds_tokio_shares_the_feature_set() {
    holds("one feature set", tidy::feature_set_members);
}

// The core ledger builds without tokio or a database.
#[test]
fn the_core_depends_on_nothing_heavy() {
    holds("a light core", tidy::heavy_core_dependencies);
}

// No crate, lab or tool turns failpoints on by default.
#[test]
fn failpoints_are_never_a_default_feature() {
    holds("failpoints opt-in", tidy::default_failpoints);
}

// No product crate turns failpoints on for its dependencies.
#[test]
fn no_product_crate_turns_failpoints_on() {
    holds("failpoints opt-in", tidy::product_failpoints);
}

// Unused code is deleted, or expected with a reason, never silently allowed.
#[test]
fn no_source_allows_dead_code() {
    holds("no allow(dead_code)", tidy::dead_code_allowances);
}

// Every lab's copy differs from its mirrored file only inside its `// NEGATIVE:` blocks.
#[test]
fn every_lab_change_lies_inside_its_negative_blocks() {
    holds("located lab changes", tidy::lab_changes_outside_blocks);
}

// A public item documented as a lab seam stays out of the documented API.
#[test]
fn lab_seams_are_hidden_from_the_documented_api() {
    holds("hidden seams", tidy::unhidden_seams);
}

// Each package links one integration-test program, `tests/it/main.rs`.
#[test]
fn every_package_has_one_integration_test_program() {
    holds("one test program", tidy::extra_test_programs);
}

// README.md, the book and this map show one stages table, true to SUMMARY.md and the map.
#[test]
fn the_stages_table_agrees_everywhere() {
    holds("stages and chapters", tidy::stage_table_mismatches);
}

// A target that links no test harness holds no unit test that would then never run.
#[test]
fn no_unit_test_hides_behind_test_false() {
    holds("unit tests run", tidy::unrun_unit_tests);
}
