//! What each negative variant declares in `[package.metadata.negative]` of its Cargo.toml.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::{Error, read, workspace_root};

/// A lab's crate root, beside its copy: it mounts `src/lib.rs` as a module and answers the
/// copy's `crate::` paths with the names of the crate it mirrors.
pub const LAB_ROOT: &str = "src/lab.rs";

/// A variant's declaration: the file it mirrors, the suites it runs and the checks it must (or
/// may) fail.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Declared {
    /// The lab stage the variant belongs to.
    pub stage: u32,
    /// The file of the correct code that `src/lib.rs` copies, from the workspace root.
    pub mirrors: PathBuf,
    /// The suites its test program runs (`contract`, `http_suite`, ...), each whole: every check
    /// the mirrored package runs in that suite, none ignored. The runner derives the checks from
    /// the mirrored package's own list, so this short list is all a variant keeps true.
    #[serde(default)]
    pub suites: BTreeSet<String>,
    /// Tests that must fail on every run, named as `cargo test` prints them.
    pub must_fail: BTreeSet<String>,
    /// Tests that catch the bug only by chance (races); their failures are reported, not required.
    #[serde(default)]
    pub may_fail: BTreeSet<String>,
    /// Tests under `--cfg loom` that must fail on every run.
    #[serde(default)]
    pub loom_must_fail: BTreeSet<String>,
    /// Types the copy names after its bug: the mirrored file's name, and the copy's. The located
    /// rule (`tidy::located`) reads a line that differs only by these names as unchanged.
    #[serde(default)]
    pub renames: BTreeMap<String, String>,
    /// Whether the declared checks need a PostgreSQL server (`RETRYKEY_PG_URL`): without one
    /// they cannot run, and the variant is reported as skipped, never as passed.
    #[serde(default)]
    pub needs_postgres: bool,
    /// For a variant whose bug a network can show: the simulator's check, which must catch it
    /// within a number of seeds, by a named rule, and replay the failing seed exactly.
    #[serde(default)]
    pub simulate: Option<Simulated>,
    /// For an HTTP variant: the conformance kit's checks it fails, served behind the payments
    /// handler (`conformed`), exactly; every stage 4 variant declares them.
    #[serde(default)]
    pub conform: Option<BTreeSet<String>>,
}

/// `simulate = { scenario = "lost-reply", within = 40, rule = "..." }` in a variant's manifest.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Simulated {
    /// The scenario it runs (`just simulate --scenario`).
    pub scenario: String,
    /// Seeds 0..within: the first failure must come among them.
    pub within: u64,
    /// The checker's rule that the first failing seed breaks.
    pub rule: String,
}

impl Declared {
    /// What makes the declaration itself unusable (nothing, for a well-made one): a variant that
    /// runs no declared suite, or that no check catches on every run, proves nothing; a check
    /// cannot be both required and left to chance, nor lie outside the suites that run it.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.suites.is_empty() {
            problems.push(
                "declares no suites (suites = [\"contract\", ...]): nothing says which checks \
                 it must run"
                    .to_string(),
            );
        }
        for test in self.must_fail.iter().chain(&self.may_fail) {
            if !self.suites.contains(suite_of(test)) {
                problems.push(format!(
                    "declares {test}, which is in none of its suites ({})",
                    self.suites_list()
                ));
            }
        }
        if self.must_fail.is_empty() && self.loom_must_fail.is_empty() {
            problems.push(
                "declares no check that must fail on every run (must_fail and loom_must_fail \
                 are both empty)"
                    .to_string(),
            );
        }
        for test in self.must_fail.intersection(&self.may_fail) {
            problems.push(format!("declares {test} both as must_fail and as may_fail"));
        }
        if let Some(simulated) = &self.simulate {
            if simulated
                .scenario
                .parse::<crate::scenario::SimulatorScenario>()
                .is_err()
            {
                problems.push(format!(
                    "simulates the scenario {:?}, which the simulator does not have",
                    simulated.scenario
                ));
            }
            if !retrykey_sim::Rule::ALL
                .iter()
                .any(|rule| rule.name() == simulated.rule)
            {
                problems.push(format!(
                    "expects the simulator's rule {:?}, which its checker does not have",
                    simulated.rule
                ));
            }
            if simulated.within == 0 {
                problems.push("simulates within 0 seeds: nothing would run".to_string());
            }
        }
        problems.extend(self.conform_problems());
        problems
    }

    /// An HTTP variant names the kit checks it fails, each one the kit has; no other variant
    /// names any (the kit serves only the HTTP layer's pieces).
    fn conform_problems(&self) -> Vec<String> {
        let http = self.stage == crate::conformed::STAGE;
        match &self.conform {
            None if http => vec![
                "declares no conform = [...]: every HTTP variant names the kit checks it fails"
                    .to_string(),
            ],
            Some(_) if !http => vec![format!(
                "declares conform, but the kit serves only stage {} variants",
                crate::conformed::STAGE
            )],
            Some(checks) => checks
                .iter()
                .filter(|check| {
                    retrykey_conform::CHECKS
                        .iter()
                        .all(|c| c.name != check.as_str())
                })
                .map(|check| {
                    format!("declares the kit check {check:?}, which the kit does not have")
                })
                .collect(),
            None => Vec::new(),
        }
    }

    /// The declared suites as the manifest writes them: `contract, model, stress`.
    pub fn suites_list(&self) -> String {
        let names: Vec<&str> = self.suites.iter().map(String::as_str).collect();
        names.join(", ")
    }
}

/// The suite a check belongs to: its name up to the first `::` (`contract` for
/// `contract::lost_reply_then_retry`).
pub fn suite_of(check: &str) -> &str {
    check.split_once("::").map_or(check, |(suite, _)| suite)
}

/// The package that holds the file a variant mirrors: its suites are the ones the variant's
/// suites must match, name for name.
pub fn mirrored_package(declared: &Declared) -> Result<String, Error> {
    let root = workspace_root();
    let mut dir = root.join(&declared.mirrors);
    while dir.pop() && dir.starts_with(&root) && dir != root {
        let path = dir.join("Cargo.toml");
        if path.is_file() {
            return Ok(manifest(&path)?.name);
        }
    }
    Err(Error::Declaration {
        path: declared.mirrors.clone(),
        reason: "the mirrored file is in no package of the workspace".to_string(),
    })
}

/// Why a variant whose checks need PostgreSQL is skipped, with the command that removes the reason.
pub const NEEDS_POSTGRES: &str = "needs PostgreSQL: eval \"$(just postgres)\"";

/// Whether a PostgreSQL server is configured for this run (`RETRYKEY_PG_URL` is set).
pub fn postgres_configured() -> bool {
    std::env::var("RETRYKEY_PG_URL").is_ok_and(|url| !url.trim().is_empty())
}

/// Whether a skip counts as a failure: under CI (`CI` set) every check must really run.
pub fn skips_are_failures() -> bool {
    std::env::var_os("CI").is_some_and(|value| !value.is_empty())
}

/// What the workspace checks read from a package's `Cargo.toml`: one reader for the labs, the
/// packages they mirror and the exercise copies.
#[derive(Debug)]
pub struct PackageManifest {
    /// The package name.
    pub name: String,
    /// Its `[package.metadata.negative]` table: a lab's, or an exercise copy's.
    pub declared: Option<Declared>,
    /// For an exercise copy, the variant it was copied from (`[package.metadata.exercise]`).
    pub copied_from: Option<String>,
    /// For a write-it-yourself copy, the piece it was made from (`[package.metadata.exercise]`).
    pub blank: Option<String>,
}

#[derive(Deserialize)]
struct Manifest {
    package: Package,
}

#[derive(Deserialize)]
struct Package {
    name: String,
    #[serde(default)]
    metadata: Metadata,
}

#[derive(Default, Deserialize)]
struct Metadata {
    negative: Option<Declared>,
    exercise: Option<Origin>,
}

#[derive(Deserialize)]
struct Origin {
    variant: Option<String>,
    blank: Option<String>,
}

/// Parses a manifest's text; `Err` carries the TOML parser's message.
pub fn parse_manifest(text: &str) -> Result<PackageManifest, String> {
    let manifest: Manifest = toml::from_str(text).map_err(|e| e.message().to_string())?;
    let Package { name, metadata } = manifest.package;
    let (copied_from, blank) = match metadata.exercise {
        Some(origin) => (origin.variant, origin.blank),
        None => (None, None),
    };
    Ok(PackageManifest {
        name,
        declared: metadata.negative,
        copied_from,
        blank,
    })
}

/// Reads and parses the manifest at `path`.
fn manifest(path: &Path) -> Result<PackageManifest, Error> {
    parse_manifest(&read(path)?).map_err(|reason| Error::Declaration {
        path: path.to_path_buf(),
        reason,
    })
}

/// The declaration of the variant in `labs/<variant>`.
pub fn declared(variant: &str) -> Result<Declared, Error> {
    let path = workspace_root()
        .join("labs")
        .join(variant)
        .join("Cargo.toml");
    manifest(&path)?.declared.ok_or_else(|| Error::Declaration {
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
    assert_eq!(
        declared.problems(),
        Vec::<String>::new(),
        "{variant}'s declaration"
    );
    let covered = |name: &String| suites.iter().any(|suite| name.starts_with(suite));
    let must_fail: BTreeSet<String> = declared.must_fail.into_iter().filter(covered).collect();
    let failed: BTreeSet<String> = failing.difference(&declared.may_fail).cloned().collect();
    assert_eq!(
        failed, must_fail,
        "{variant} must fail exactly its declared checks"
    );
}
