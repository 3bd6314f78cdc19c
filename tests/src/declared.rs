//! What each negative variant declares in `[package.metadata.negative]` of its Cargo.toml.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Deserialize;

use crate::{Error, read, workspace_root};

/// A variant's declaration: the file it mirrors and the checks it must (or may) fail.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Declared {
    /// The lab stage the variant belongs to.
    pub stage: u32,
    /// The file of the correct code that `src/lib.rs` copies, from the workspace root.
    pub mirrors: PathBuf,
    /// Tests that must fail on every run, named as `cargo test` prints them.
    pub must_fail: BTreeSet<String>,
    /// Tests that catch the bug only by chance (races); their failures are reported, not required.
    #[serde(default)]
    pub may_fail: BTreeSet<String>,
    /// Tests under `--cfg loom` that must fail on every run.
    #[serde(default)]
    pub loom_must_fail: BTreeSet<String>,
}

#[derive(Deserialize)]
struct Manifest {
    package: Package,
}

#[derive(Deserialize)]
struct Package {
    metadata: Option<Metadata>,
}

#[derive(Deserialize)]
struct Metadata {
    negative: Option<Declared>,
}

/// The declaration of the variant in `labs/<variant>`.
pub fn declared(variant: &str) -> Result<Declared, Error> {
    let path = workspace_root()
        .join("labs")
        .join(variant)
        .join("Cargo.toml");
    let text = read(&path)?;
    let manifest: Manifest = toml::from_str(&text).map_err(|e| Error::Declaration {
        path: path.clone(),
        reason: e.message().to_string(),
    })?;
    manifest
        .package
        .metadata
        .and_then(|metadata| metadata.negative)
        .ok_or_else(|| Error::Declaration {
            path,
            reason: "the table is missing".to_string(),
        })
}

/// Every variant under `labs/`, sorted by stage and then by name.
pub fn variants() -> Result<Vec<(String, Declared)>, Error> {
    let labs = workspace_root().join("labs");
    let entries = std::fs::read_dir(&labs).map_err(|source| Error::Read {
        path: labs.clone(),
        source,
    })?;
    let mut found = Vec::new();
    for entry in entries.flatten() {
        if entry.path().join("Cargo.toml").is_file() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let declared = declared(&name)?;
            found.push((name, declared));
        }
    }
    found.sort_by(|a, b| (a.1.stage, &a.0).cmp(&(b.1.stage, &b.0)));
    Ok(found)
}

/// Asserts that an in-process run of `variant` failed exactly the checks it declares, among the
/// suites that run covered (`suites`: name prefixes such as `"contract::"`); checks declared as
/// failing only by chance are left aside.
pub fn assert_fails_as_declared(
    variant: &str,
    stage: u32,
    suites: &[&str],
    failing: &BTreeSet<String>,
) {
    let declared = declared(variant).expect("the variant declares its checks");
    assert_eq!(
        declared.stage, stage,
        "{variant} is a Stage {stage} variant"
    );
    let covered = |name: &String| suites.iter().any(|suite| name.starts_with(suite));
    let must_fail: BTreeSet<String> = declared.must_fail.into_iter().filter(covered).collect();
    let failed: BTreeSet<String> = failing.difference(&declared.may_fail).cloned().collect();
    assert_eq!(
        failed, must_fail,
        "{variant} must fail exactly its declared checks"
    );
}
