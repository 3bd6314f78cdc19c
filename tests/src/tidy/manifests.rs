//! The workspace's packages as the tidy rules need them: name, folder, dependencies, features.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::{Error, read};

/// Which table a dependency is declared in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `[dependencies]` (or a target's): part of the build of the package itself.
    Normal,
    /// `[build-dependencies]`: part of the build script.
    Build,
    /// `[dev-dependencies]`: tests, examples and benchmarks only.
    Dev,
}

/// One dependency declaration.
#[derive(Clone, Debug)]
pub struct Dependency {
    /// The name the code uses for it: its key in the manifest, `-` read as `_`.
    pub name: String,
    /// The package it names (the `package` key, its own or the workspace's, else the key).
    pub package: String,
    /// Where it is declared.
    pub kind: Kind,
    /// The features it turns on: its own and, for `workspace = true`, the workspace's.
    pub features: Vec<String>,
}

/// One package of the workspace.
#[derive(Clone, Debug)]
pub struct Package {
    /// The package name.
    pub name: String,
    /// Its folder, from the workspace root (`crates/retrykey`, `labs/no-jitter`, `tests`).
    pub dir: PathBuf,
    /// Every dependency declaration.
    pub dependencies: Vec<Dependency>,
    /// Its `[features]` table.
    pub features: BTreeMap<String, Vec<String>>,
}

impl Package {
    /// Its manifest, from the workspace root.
    pub fn manifest(&self) -> PathBuf {
        self.dir.join("Cargo.toml")
    }

    /// Whether it sits under `labs/`.
    pub fn is_lab(&self) -> bool {
        self.dir.starts_with("labs")
    }
}

/// Every package under `crates/` and `labs/`, and `tests/` and `benches/`, sorted by folder.
pub fn packages(root: &Path) -> Result<Vec<Package>, Error> {
    let workspace = table(&root.join("Cargo.toml"))?;
    let shared = workspace
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(Value::as_table)
        .cloned()
        .unwrap_or_default();
    let mut dirs = Vec::new();
    for parent in ["crates", "labs"] {
        let path = root.join(parent);
        let entries = std::fs::read_dir(&path).map_err(|source| Error::Read { path, source })?;
        for entry in entries.flatten() {
            if entry.path().join("Cargo.toml").is_file() {
                dirs.push(PathBuf::from(parent).join(entry.file_name()));
            }
        }
    }
    dirs.push(PathBuf::from("tests"));
    dirs.push(PathBuf::from("benches"));
    dirs.sort();
    dirs.into_iter()
        .map(|dir| package(root, dir, &shared))
        .collect()
}

/// One manifest, parsed.
pub fn table(path: &Path) -> Result<Table, Error> {
    toml::from_str(&read(path)?).map_err(|error| Error::Declaration {
        path: path.to_path_buf(),
        reason: error.message().to_string(),
    })
}

fn package(root: &Path, dir: PathBuf, shared: &Table) -> Result<Package, Error> {
    let path = root.join(&dir).join("Cargo.toml");
    let manifest = table(&path)?;
    let name = manifest
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| Error::Declaration {
            path: path.clone(),
            reason: "no [package] name".to_string(),
        })?
        .to_string();
    let mut dependencies = Vec::new();
    let mut read_tables = |tables: &Table| {
        for (key, kind) in [
            ("dependencies", Kind::Normal),
            ("build-dependencies", Kind::Build),
            ("dev-dependencies", Kind::Dev),
        ] {
            if let Some(entries) = tables.get(key).and_then(Value::as_table) {
                for (key, entry) in entries {
                    dependencies.push(dependency(key, entry, kind, shared));
                }
            }
        }
    };
    read_tables(&manifest);
    if let Some(targets) = manifest.get("target").and_then(Value::as_table) {
        for target in targets.values().filter_map(Value::as_table) {
            read_tables(target);
        }
    }
    let features = manifest
        .get("features")
        .and_then(Value::as_table)
        .map(|features| {
            features
                .iter()
                .map(|(name, list)| (name.clone(), strings(list)))
                .collect()
        })
        .unwrap_or_default();
    Ok(Package {
        name,
        dir,
        dependencies,
        features,
    })
}

fn dependency(key: &str, entry: &Value, kind: Kind, shared: &Table) -> Dependency {
    let inherited = entry
        .get("workspace")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .then(|| shared.get(key))
        .flatten();
    let package = [Some(entry), inherited]
        .into_iter()
        .flatten()
        .find_map(|e| e.get("package").and_then(Value::as_str))
        .unwrap_or(key)
        .to_string();
    let features = [Some(entry), inherited]
        .into_iter()
        .flatten()
        .flat_map(|e| e.get("features").map(strings).unwrap_or_default())
        .collect();
    Dependency {
        name: key.replace('-', "_"),
        package,
        kind,
        features,
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The `[workspace.dependencies]` entries of the root manifest that turn features on, with them.
pub fn shared_features(root: &Path) -> Result<Vec<(String, Vec<String>)>, Error> {
    let workspace = table(&root.join("Cargo.toml"))?;
    let shared = workspace
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(Value::as_table)
        .cloned()
        .unwrap_or_default();
    Ok(shared
        .iter()
        .map(|(name, entry)| {
            (
                name.clone(),
                entry.get("features").map(strings).unwrap_or_default(),
            )
        })
        .filter(|(_, features)| !features.is_empty())
        .collect())
}
