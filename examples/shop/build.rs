//! Whether the PostgreSQL tests can run: without `RETRYKEY_PG_URL` they are ignored (counted and
//! named as such), never passed; under CI (`CI` set) they always run, so a missing server fails.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(shop_pg)");
    println!("cargo::rerun-if-env-changed=RETRYKEY_PG_URL");
    println!("cargo::rerun-if-env-changed=CI");
    let set = |name: &str| std::env::var(name).is_ok_and(|value| !value.trim().is_empty());
    if set("RETRYKEY_PG_URL") || set("CI") {
        println!("cargo::rustc-cfg=shop_pg");
    }
}
