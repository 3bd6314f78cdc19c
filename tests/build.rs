//! Tells the workspace checks whether the PostgreSQL ones can run.
//!
//! Rust's test harness knows three results: passed, failed and ignored. A check that needs a
//! server it does not have must be *ignored*, not passed, so the choice is made here, when the
//! tests are built: without `RETRYKEY_PG_URL` they carry `#[ignore]` and `cargo test` counts them
//! as ignored, with the reason. Under CI (`CI` set) they are never ignored: they run, and a
//! missing server fails them.
fn main() {
    println!("cargo::rerun-if-env-changed=RETRYKEY_PG_URL");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rustc-check-cfg=cfg(retrykey_pg)");
    let set = |name: &str| std::env::var(name).is_ok_and(|value| !value.trim().is_empty());
    if set("RETRYKEY_PG_URL") || set("CI") {
        println!("cargo::rustc-cfg=retrykey_pg");
    }
}
