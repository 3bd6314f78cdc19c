//! Tells the PostgreSQL tests whether they can run.
//!
//! Rust's test harness knows three results: passed, failed and ignored. A test that needs a
//! server it does not have must be *ignored*, not passed, so the choice is made here, when the
//! tests are built: without `RETRYKEY_PG_URL` the cfg `retrykey_pg` is unset and the tests made
//! by [`postgres_test!`] and the PostgreSQL suites carry `#[ignore]`, so `cargo test` counts
//! them as ignored and says why. Under CI (`CI` set) the cfg is always set: the tests run, and a
//! missing server fails them. Every package with PostgreSQL tests uses this script
//! (`build = ".../retrykey-durable/build.rs"` in its manifest).
fn main() {
    println!("cargo::rerun-if-env-changed=RETRYKEY_PG_URL");
    println!("cargo::rerun-if-env-changed=CI");
    let set = |name: &str| std::env::var(name).is_ok_and(|value| !value.trim().is_empty());
    if set("RETRYKEY_PG_URL") || set("CI") {
        println!("cargo::rustc-cfg=retrykey_pg");
    }
}
