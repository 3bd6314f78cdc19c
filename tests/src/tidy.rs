//! Tidy: the rules of `ARCHITECTURE.md`, checked against the manifests and the sources.
//!
//! Each public function checks one rule over the whole workspace and returns its violations,
//! one line each, naming the file (and the line, where there is one) and what is wrong; an empty
//! list means the rule holds. `tests/tests/it/tidy.rs` turns each into a `#[test]`.
//!
//! The layer rules are not written here: [`map`] reads them from the table in `ARCHITECTURE.md`,
//! so the page and the test cannot disagree.

pub mod items;
pub mod located;
pub mod manifests;
pub mod map;
pub mod modules;
pub mod sources;
pub mod tokens;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::{Error, read, workspace_root};
use manifests::{Kind, Package, packages};
use map::{Layer, Row};
use modules::{Target, Tree};

/// What the core crate may depend on: it must build without tokio or a database.
pub const CORE_DEPENDENCIES: [&str; 4] = ["anyhow", "clap", "thiserror", "loom"];

/// The test knob that must never be on by default.
pub const FAILPOINTS: &str = "failpoints";

/// The three files that show the stages table, from the workspace root.
pub const STAGE_TABLES: [&str; 3] = ["ARCHITECTURE.md", "README.md", "docs/src/introduction.md"];

/// The rows of the layer map in `ARCHITECTURE.md`.
pub fn map_rows() -> Result<Vec<Row>, Error> {
    let path = workspace_root().join(map::MAP_FILE);
    map::parse(&read(&path)?).map_err(|reason| Error::Declaration { path, reason })
}

/// The map row that governs `package`: its own, or the labs' row.
fn row_of<'a>(rows: &'a [Row], package: &Package) -> Option<&'a Row> {
    let name = if package.is_lab() {
        map::LABS_ROW
    } else {
        package.name.as_str()
    };
    rows.iter().find(|row| row.name == name)
}

/// A map row for a crate the map names (the labs' row stands for every lab).
fn target_row<'a>(rows: &'a [Row], packages: &[Package], name: &str) -> Option<&'a Row> {
    match packages.iter().find(|p| p.name == name) {
        Some(package) => row_of(rows, package),
        None => rows.iter().find(|row| row.name == name),
    }
}

fn describe(layer: Layer) -> String {
    match layer {
        Layer::Build => "build support".to_string(),
        Layer::Core => "core".to_string(),
        Layer::Plumbing => "plumbing".to_string(),
        Layer::TestSupport => "test support".to_string(),
        Layer::Stage(n) => format!("stage {n}"),
        Layer::Checks(n) => format!("checks {n}"),
        Layer::Lab => "lab".to_string(),
        Layer::Tools => "tools".to_string(),
    }
}

/// The map lists the workspace: a row for every package under `crates/` (and for `tests/` and
/// the labs), no row for a crate that does not exist, and no `(to come)` row for one that does.
pub fn map_mismatches() -> Result<Vec<String>, Error> {
    let (rows, packages) = (map_rows()?, packages(&workspace_root())?);
    let file = map::MAP_FILE;
    let mut problems = Vec::new();
    for package in &packages {
        match row_of(&rows, package) {
            None => problems.push(format!(
                "{}: {} has no row in the layer map of {file}",
                package.manifest().display(),
                package.name
            )),
            Some(row) if row.to_come => problems.push(format!(
                "{file}: the row of {} says {}, but {} exists: remove the mark",
                package.name,
                map::TO_COME,
                package.dir.display()
            )),
            Some(_) => {}
        }
    }
    let has_labs = packages.iter().any(Package::is_lab);
    for row in &rows {
        let exists = if row.name == map::LABS_ROW {
            has_labs
        } else {
            packages.iter().any(|p| p.name == row.name)
        };
        if !exists && !row.to_come {
            problems.push(format!(
                "{file}: the layer map has a row for {}, which is no package of the workspace \
                 (mark it {} if it is planned)",
                row.name,
                map::TO_COME
            ));
        }
    }
    Ok(problems)
}

/// Every normal or build dependency on a workspace crate is one its map row allows (build
/// support holds no code: every member may import it, and [`feature_set_members`] says who must).
pub fn dependency_direction() -> Result<Vec<String>, Error> {
    let (rows, packages) = (map_rows()?, packages(&workspace_root())?);
    let mut problems = Vec::new();
    for package in &packages {
        let Some(row) = row_of(&rows, package) else {
            continue;
        };
        for dependency in package.dependencies.iter().filter(|d| d.kind != Kind::Dev) {
            let Some(target) = target_row(&rows, &packages, &dependency.package) else {
                continue;
            };
            if target.layer != Layer::Build && row.allowance_for(target).is_none() {
                problems.push(format!(
                    "{}: {} ({}) depends on {} ({}), which its row in {} does not allow",
                    package.manifest().display(),
                    package.name,
                    describe(row.layer),
                    dependency.package,
                    describe(target.layer),
                    map::MAP_FILE
                ));
            }
        }
    }
    Ok(problems)
}

/// No product crate (core, plumbing, stage) has a checks crate, test support, a lab or the
/// workspace tools among its normal or build dependencies.
pub fn test_code_in_products() -> Result<Vec<String>, Error> {
    let (rows, packages) = (map_rows()?, packages(&workspace_root())?);
    let mut problems = Vec::new();
    for package in &packages {
        if !row_of(&rows, package).is_some_and(|row| row.layer.is_product()) {
            continue;
        }
        for dependency in package.dependencies.iter().filter(|d| d.kind != Kind::Dev) {
            let Some(target) = target_row(&rows, &packages, &dependency.package) else {
                continue;
            };
            if !target.layer.is_product() && target.layer != Layer::Build {
                problems.push(format!(
                    "{}: product crate {} has {} ({}) outside [dev-dependencies]",
                    package.manifest().display(),
                    package.name,
                    dependency.package,
                    describe(target.layer)
                ));
            }
        }
    }
    Ok(problems)
}

/// The root of a package's library: `src/lib.rs`, or the `path` its `[lib]` table names (a lab's
/// root mounts its copy, `src/lib.rs`, as a module).
fn library_root(dir: &Path) -> PathBuf {
    let manifest = manifests::table(&dir.join("Cargo.toml")).ok();
    let named = manifest
        .as_ref()
        .and_then(|table| table.get("lib"))
        .and_then(|lib| lib.get("path"))
        .and_then(toml::Value::as_str);
    dir.join(named.unwrap_or("src/lib.rs"))
}

/// The module trees of a package's `src/`: the library and each program, one tree each.
fn source_trees(dir: &Path) -> Vec<Tree> {
    let src = dir.join("src");
    let mut roots = vec![library_root(dir), src.join("main.rs")];
    if let Ok(entries) = std::fs::read_dir(src.join("bin")) {
        let mut programs: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .map(|path| {
                if path.is_dir() {
                    path.join("main.rs")
                } else {
                    path
                }
            })
            .collect();
        programs.sort();
        roots.extend(programs);
    }
    let read = |path: &Path| std::fs::read_to_string(path).ok();
    roots
        .iter()
        .filter(|root| root.is_file())
        .map(|root| Tree::read(root, &read))
        .collect()
}

/// The module import circles of one crate's trees: each as the files that reach each other and
/// one circle among them, in the order they import each other, the first repeated at the end.
/// A path into a module that holds the importer (`crate::Error`, `super::Row`) leads where that
/// module's re-export (`pub use error::Error`) comes from: a parent is the front of its
/// children, and its re-exports belong to the modules they name. A name the parent defines
/// itself is no edge.
pub fn import_cycles_of(trees: &[Tree]) -> Vec<(Vec<PathBuf>, Vec<PathBuf>)> {
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for tree in trees {
        for (index, module) in tree.modules.iter().enumerate() {
            for (path, _) in &module.paths {
                if let Some(Target::Module(to)) = tree.resolve_past_front(index, path) {
                    if tree.holds(to, index) {
                        continue;
                    }
                    let to = &tree.modules[to].file;
                    if *to != module.file {
                        edges
                            .entry(module.file.clone())
                            .or_default()
                            .insert(to.clone());
                    }
                }
            }
        }
    }
    modules::cycles(&edges)
}

/// No package of the workspace has a circle of module imports: resolving each file's `use`
/// declarations and paths (`crate::..`, `super::..`, `self::..`, a child module's name) to the
/// module files they reach, no file reaches itself again.
pub fn import_cycles() -> Result<Vec<String>, Error> {
    let root = workspace_root();
    let mut problems = Vec::new();
    for package in packages(&root)? {
        let dir = root.join(&package.dir);
        for (group, circle) in import_cycles_of(&source_trees(&dir)) {
            let names = |files: &[PathBuf]| {
                let shown: Vec<String> = files.iter().map(|file| shown(&root, file)).collect();
                shown
            };
            problems.push(format!(
                "{}: {} import each other in a circle: {}",
                package.name,
                names(&group).join(", "),
                names(&circle).join(" -> ")
            ));
        }
    }
    Ok(problems)
}

/// The header of the table in `ARCHITECTURE.md` that lists the names defined more than once on
/// purpose, each with why.
pub const NAMES_HEADER: [&str; 3] = ["name", "defined in", "why"];

/// The names that table lists, from the first cell of each row.
pub fn listed_repeats(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|line| map::cells(line).is_none_or(|cells| cells != NAMES_HEADER))
        .skip(2)
        .map_while(map::cells)
        .filter_map(|cells| map::backticked(&cells[0]).into_iter().next())
        .collect()
}

/// The problems with the type names defined in `definitions` (`(name, crate, place)`): a
/// name defined more than once that `listed` does not name (a crate's own `Error` aside, once
/// per crate), and a listed name defined once or not at all.
pub fn repeated_names(definitions: &[(String, String, String)], listed: &[String]) -> Vec<String> {
    let mut by_name: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for (name, krate, place) in definitions {
        by_name
            .entry(name.as_str())
            .or_default()
            .push((krate.as_str(), place.as_str()));
    }
    let mut problems = Vec::new();
    for (name, places) in &by_name {
        let crates: BTreeSet<&str> = places.iter().map(|(krate, _)| *krate).collect();
        let once_per_crate = crates.len() == places.len();
        let fine = (*name == "Error" && once_per_crate) || listed.iter().any(|l| l == name);
        if places.len() > 1 && !fine {
            let shown: Vec<&str> = places.iter().map(|(_, place)| *place).collect();
            problems.push(format!(
                "`{name}` is defined {} times ({}): give each a name for what it is, or list it \
                 with why in the table of {}",
                places.len(),
                shown.join(", "),
                map::MAP_FILE
            ));
        }
    }
    for name in listed {
        if by_name
            .get(name.as_str())
            .is_none_or(|places| places.len() < 2)
        {
            problems.push(format!(
                "{}: `{name}` is listed as a name defined more than once, but it is not: \
                 remove its row",
                map::MAP_FILE
            ));
        }
    }
    problems
}

/// One meaning per name: no pub or pub(crate) struct, enum, trait or type alias name is
/// defined twice across `crates/*/src`, except each crate's own `Error` and the names listed,
/// with why, in the table of `ARCHITECTURE.md`; and every listed name is still repeated.
pub fn repeated_type_names() -> Result<Vec<String>, Error> {
    let root = workspace_root();
    let mut definitions = Vec::new();
    for package in packages(&root)?
        .iter()
        .filter(|p| p.dir.starts_with("crates"))
    {
        for file in sources::rust_files(&root.join(&package.dir).join("src"))? {
            for (name, line) in items::shared_type_names(&tokens::tokens(&read(&file)?)) {
                let place = format!("{}:{line}", shown(&root, &file));
                definitions.push((name, package.name.clone(), place));
            }
        }
    }
    let listed = listed_repeats(&read(root.join(map::MAP_FILE))?);
    Ok(repeated_names(&definitions, &listed))
}

/// No product function (in `crates/*/src`, checks crates and programs included) is longer than
/// [`items::LONGEST_FUNCTION`] lines, from its `fn` line to its closing brace.
pub fn long_functions() -> Result<Vec<String>, Error> {
    let root = workspace_root();
    let mut problems = Vec::new();
    for package in packages(&root)?
        .iter()
        .filter(|p| p.dir.starts_with("crates"))
    {
        for file in sources::rust_files(&root.join(&package.dir).join("src"))? {
            let tokens = tokens::tokens(&read(&file)?);
            for (line, name, lines) in items::long_functions(&tokens, items::LONGEST_FUNCTION) {
                problems.push(format!(
                    "{}:{line}: `{name}` is {lines} lines long (at most {}): split it where a \
                     reader would want a name",
                    shown(&root, &file),
                    items::LONGEST_FUNCTION
                ));
            }
        }
    }
    Ok(problems)
}

/// The workspace crates that `trees` (one package's `src/`) reach, as `(crate, how, line,
/// file)`: by a path that names a crate (`idents` maps the names code uses to packages), and
/// through what that crate re-exports from another (`libraries` holds each package's library).
pub fn crates_reached(
    trees: &[Tree],
    idents: &BTreeMap<String, String>,
    libraries: &BTreeMap<String, Tree>,
) -> Vec<(String, String, usize, PathBuf)> {
    let mut found = Vec::new();
    for tree in trees {
        for (index, module) in tree.modules.iter().enumerate() {
            for (path, line) in &module.paths {
                let Some(Target::Crate(ident, rest)) = tree.resolve(index, path, true) else {
                    continue;
                };
                let Some(package) = idents.get(&ident) else {
                    continue;
                };
                found.push((package.clone(), ident.clone(), *line, module.file.clone()));
                let mut seen = BTreeSet::from([package.clone()]);
                let (mut package, mut rest, mut how) = (package.clone(), rest, ident.clone());
                while let Some(library) = libraries.get(&package) {
                    let Some(Target::Crate(next, tail)) = library.resolve(0, &rest, true) else {
                        break;
                    };
                    let Some(next_package) = idents.get(&next) else {
                        break;
                    };
                    if !seen.insert(next_package.clone()) {
                        break;
                    }
                    how = format!("{how}::{} (re-exported from {next})", rest[0]);
                    found.push((
                        next_package.clone(),
                        how.clone(),
                        *line,
                        module.file.clone(),
                    ));
                    (package, rest) = (next_package.clone(), tail);
                }
            }
        }
    }
    found
}

/// What a crate's code imports from the workspace is what its map row allows, resolved, not
/// matched as words: every workspace crate its `src/` names, directly or through what another
/// crate re-exports (`pub use other_crate as x`), is allowed by its row in the map, and is a
/// normal dependency of its manifest unless reached only through a re-export.
pub fn crate_imports() -> Result<Vec<String>, Error> {
    let root = workspace_root();
    let (rows, packages) = (map_rows()?, packages(&root)?);
    let idents: BTreeMap<String, String> = packages
        .iter()
        .map(|p| (p.name.replace('-', "_"), p.name.clone()))
        .collect();
    let read_file = |path: &Path| std::fs::read_to_string(path).ok();
    let libraries: BTreeMap<String, Tree> = packages
        .iter()
        .map(|p| {
            let lib = library_root(&root.join(&p.dir));
            (p.name.clone(), Tree::read(&lib, &read_file))
        })
        .collect();
    let mut problems = Vec::new();
    for package in &packages {
        let Some(row) = row_of(&rows, package) else {
            continue;
        };
        let trees = source_trees(&root.join(&package.dir));
        let mut reported = BTreeSet::new();
        for (target, how, line, file) in crates_reached(&trees, &idents, &libraries) {
            if target == package.name {
                continue;
            }
            let Some(target_row) = target_row(&rows, &packages, &target) else {
                continue;
            };
            let allowed =
                target_row.layer == Layer::Build || row.allowance_for(target_row).is_some();
            if !allowed && reported.insert((target.clone(), file.clone())) {
                problems.push(format!(
                    "{}:{line}: {} ({}) uses {target} ({}) by `{how}`, which its row in {} \
                     does not allow",
                    shown(&root, &file),
                    package.name,
                    describe(row.layer),
                    describe(target_row.layer),
                    map::MAP_FILE
                ));
            }
        }
    }
    Ok(problems)
}

fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The third-party crates that are slow to build and that members ask for with different
/// features: a package whose build reaches one of them needs the shared feature set.
pub const HEAVY: [&str; 6] = [
    "tokio",
    "hyper",
    "hyper-util",
    "reqwest",
    "rusqlite",
    "tokio-postgres",
];

/// Whether building `name` (with its tests and examples when `with_dev`) builds a crate of
/// [`HEAVY`], directly or through another member; the build-support crates in `builds` are
/// not followed, since they are what the answer decides.
fn reaches_heavy(packages: &[Package], builds: &[&str], name: &str, with_dev: bool) -> bool {
    let Some(package) = packages.iter().find(|p| p.name == name) else {
        return false;
    };
    package
        .dependencies
        .iter()
        .filter(|d| with_dev || d.kind != Kind::Dev)
        .filter(|d| !builds.contains(&d.package.as_str()))
        .any(|d| {
            HEAVY.contains(&d.package.as_str())
                || (d.package != package.name && reaches_heavy(packages, builds, &d.package, false))
        })
}

/// A member whose build or tests reach tokio, hyper, reqwest or a database client depends on
/// the build-support crate, so that whichever packages a command selects, those crates are
/// built once with one feature set: a product crate (core, plumbing, stage) as a
/// dev-dependency, so that every test build shares the set (a crate a service depends on keeps
/// it out of its normal dependencies, or makes it optional for its programs: the shop's tests
/// hold that); every other member as a normal dependency.
/// A std-only member (the core, its contract and checks scaffold, the stage 1 labs) does not
/// depend on it: it would then build all of them for nothing, and under `--cfg loom`, where
/// tokio does not compile, fail.
pub fn feature_set_members() -> Result<Vec<String>, Error> {
    let (rows, packages) = (map_rows()?, packages(&workspace_root())?);
    let builds: Vec<&str> = rows
        .iter()
        .filter(|row| row.layer == Layer::Build && !row.to_come)
        .map(|row| row.name.as_str())
        .collect();
    let mut problems = Vec::new();
    for package in &packages {
        if row_of(&rows, package).is_none_or(|row| row.layer == Layer::Build) {
            continue;
        }
        let heavy = reaches_heavy(&packages, &builds, &package.name, true);
        let product = row_of(&rows, package).is_some_and(|row| row.layer.is_product());
        let wanted = if product { Kind::Dev } else { Kind::Normal };
        for build in &builds {
            let has = package.dependencies.iter().any(|d| d.package == *build);
            let normal = package
                .dependencies
                .iter()
                .any(|d| d.kind == wanted && d.package == *build);
            if heavy && !normal {
                problems.push(format!(
                    "{}: {} builds tokio or a database client but does not depend on {build} \
                     as a {} dependency",
                    package.manifest().display(),
                    package.name,
                    if product { "dev" } else { "normal" }
                ));
            } else if !heavy && has {
                problems.push(format!(
                    "{}: {} is std-only but depends on {build}, which would build tokio and \
                     the database clients for it",
                    package.manifest().display(),
                    package.name
                ));
            }
        }
    }
    Ok(problems)
}

/// The core crate depends on std, anyhow, clap and thiserror only (and loom under `cfg(loom)`).
pub fn heavy_core_dependencies() -> Result<Vec<String>, Error> {
    let (rows, packages) = (map_rows()?, packages(&workspace_root())?);
    let mut problems = Vec::new();
    for row in rows.iter().filter(|row| row.layer == Layer::Core) {
        let Some(package) = packages.iter().find(|p| p.name == row.name) else {
            continue;
        };
        for dependency in package.dependencies.iter().filter(|d| d.kind != Kind::Dev) {
            if !CORE_DEPENDENCIES.contains(&dependency.package.as_str()) {
                problems.push(format!(
                    "{}: the core crate depends on {} (allowed: {})",
                    package.manifest().display(),
                    dependency.package,
                    CORE_DEPENDENCIES.join(", ")
                ));
            }
        }
    }
    Ok(problems)
}

/// The test knob a labs' manifest may turn on by default: its copy keeps the throwaway
/// constructors of the file it mirrors.
pub const TEST_SUPPORT: &str = "test-support";

/// Whether a feature list entry turns `knob` on (`knob`, `dep/knob`, `dep?/knob`).
fn turns_on(entry: &str, knob: &str) -> bool {
    entry == knob || entry.rsplit('/').next() == Some(knob) && entry.contains('/')
}

/// Whether a feature list entry turns failpoints on (`failpoints`, `dep/failpoints`,
/// `dep?/failpoints`).
fn is_failpoints(entry: &str) -> bool {
    turns_on(entry, FAILPOINTS)
}

/// The test knob that builds the loopback client, which sends header values raw.
pub const LOOPBACK: &str = "loopback";

/// Whether a feature list entry turns on a test knob: failpoints, the throwaway stores or the
/// loopback client.
fn is_knob(entry: &str) -> bool {
    is_failpoints(entry) || turns_on(entry, TEST_SUPPORT) || turns_on(entry, LOOPBACK)
}

/// The entries that `feature` of `features` turns on, followed through the package's own
/// features, that `matches`.
fn knobs_via(
    features: &BTreeMap<String, Vec<String>>,
    feature: &str,
    matches: fn(&str) -> bool,
) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut pending = vec![feature.to_string()];
    let mut found = Vec::new();
    while let Some(next) = pending.pop() {
        if !seen.insert(next.clone()) {
            continue;
        }
        for entry in features.get(&next).into_iter().flatten() {
            if matches(entry) {
                found.push(entry.clone());
            } else if features.contains_key(entry) {
                pending.push(entry.clone());
            }
        }
    }
    found
}

/// No package turns a test knob on in its `default` features (a lab may keep `test-support`).
pub fn default_failpoints() -> Result<Vec<String>, Error> {
    let mut problems = Vec::new();
    for package in packages(&workspace_root())? {
        // A lab keeps its copy's throwaway constructors on; failpoints stay opt-in everywhere.
        let matches = if package.is_lab() {
            is_failpoints
        } else {
            is_knob
        };
        for entry in knobs_via(&package.features, "default", matches) {
            problems.push(format!(
                "{}: the default features of {} turn on `{entry}`: test knobs are opt-in",
                package.manifest().display(),
                package.name
            ));
        }
    }
    Ok(problems)
}

/// No product crate turns failpoints on for a normal dependency, and no shared
/// `[workspace.dependencies]` entry turns them on for every crate that inherits it.
pub fn product_failpoints() -> Result<Vec<String>, Error> {
    let root = workspace_root();
    let (rows, packages) = (map_rows()?, packages(&root)?);
    let mut problems = Vec::new();
    for (name, features) in manifests::shared_features(&root)? {
        if features.iter().any(|f| is_knob(f)) {
            problems.push(format!(
                "Cargo.toml: [workspace.dependencies] {name} turns on a test knob for every \
                 crate that inherits it"
            ));
        }
    }
    for package in &packages {
        if !row_of(&rows, package).is_some_and(|row| row.layer.is_product()) {
            continue;
        }
        for dependency in package.dependencies.iter().filter(|d| d.kind != Kind::Dev) {
            if dependency.features.iter().any(|f| is_knob(f)) {
                problems.push(format!(
                    "{}: product crate {} turns on a test knob of {}",
                    package.manifest().display(),
                    package.name,
                    dependency.package
                ));
            }
        }
    }
    Ok(problems)
}

/// The folders whose sources the source rules read: every crate, lab, `tests/` and `benches/`.
fn source_roots(root: &Path) -> [PathBuf; 4] {
    [
        root.join("crates"),
        root.join("labs"),
        root.join("tests"),
        root.join("benches"),
    ]
}

/// No `allow(dead_code)`, in any spelling, and no `expect(dead_code)` without a reason, in any
/// source of `crates/`, `labs/` or `tests/`.
pub fn dead_code_allowances() -> Result<Vec<String>, Error> {
    let root = workspace_root();
    let mut problems = Vec::new();
    for dir in source_roots(&root) {
        for file in sources::rust_files(&dir)? {
            for (line, attribute) in sources::dead_code_allowances(&read(&file)?) {
                problems.push(format!(
                    "{}:{line}: `{attribute}`: delete the unused code, or use \
                     #[expect(dead_code, reason = \"...\")]",
                    shown(&root, &file)
                ));
            }
        }
    }
    Ok(problems)
}

/// Every lab's copy differs from the file it mirrors only inside its `// NEGATIVE:` blocks
/// (see [`located`]), with the same first line.
pub fn lab_changes_outside_blocks() -> Result<Vec<String>, Error> {
    let mut problems = Vec::new();
    for (name, declared) in crate::variants()? {
        problems.extend(crate::tidy::located::change_problems(&name, &declared)?);
    }
    Ok(problems)
}

/// Every public item of a product crate whose doc comment calls it a lab seam (it points at
/// `labs/` or says "seam") is `#[doc(hidden)]` or behind a `lab` feature.
pub fn unhidden_seams() -> Result<Vec<String>, Error> {
    let root = workspace_root();
    let (rows, packages) = (map_rows()?, packages(&root)?);
    let mut problems = Vec::new();
    for package in &packages {
        if !row_of(&rows, package).is_some_and(|row| row.layer.is_product()) {
            continue;
        }
        for file in sources::rust_files(&root.join(&package.dir).join("src"))? {
            for (line, item) in sources::unhidden_seams(&read(&file)?) {
                problems.push(format!(
                    "{}:{line}: `{item}` is documented as a lab seam but not #[doc(hidden)]",
                    shown(&root, &file)
                ));
            }
        }
    }
    Ok(problems)
}

/// Every package's integration tests (the labs' and `tests/`'s too) are one program,
/// `tests/it/main.rs`, whose loom models build only under `--cfg loom`: no other file directly
/// in `tests/`, and no other folder there with a `main.rs`.
pub fn extra_test_programs() -> Result<Vec<String>, Error> {
    let root = workspace_root();
    let mut problems = Vec::new();
    for package in packages(&root)? {
        let tests = root.join(&package.dir).join("tests");
        let Ok(entries) = std::fs::read_dir(&tests) else {
            continue;
        };
        let mut extra: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter_map(|path| {
                if path.is_file() && path.extension().is_some_and(|ext| ext == "rs") {
                    Some(path)
                } else if path.is_dir() && !path.ends_with("it") && path.join("main.rs").is_file() {
                    Some(path.join("main.rs"))
                } else {
                    None
                }
            })
            .collect();
        extra.sort();
        for path in extra {
            problems.push(format!(
                "{}: a test program of its own: make it a module of tests/it/main.rs",
                shown(&root, &path)
            ));
        }
    }
    Ok(problems)
}

/// A library or binary whose manifest says `test = false` links no test harness, so a unit
/// test in its sources would never run: no `#[cfg(test)]` there.
pub fn unrun_unit_tests() -> Result<Vec<String>, Error> {
    let root = workspace_root();
    let mut problems = Vec::new();
    for package in packages(&root)? {
        let dir = root.join(&package.dir);
        let manifest = manifests::table(&dir.join("Cargo.toml"))?;
        let off =
            |target: &toml::Value| target.get("test").and_then(toml::Value::as_bool) == Some(false);
        let mut silent: Vec<PathBuf> = Vec::new();
        if manifest.get("lib").is_some_and(off) {
            // The library is every source but the binaries'.
            silent.extend(
                sources::rust_files(&dir.join("src"))?
                    .into_iter()
                    .filter(|file| {
                        !file.starts_with(dir.join("src/bin")) && !file.ends_with("src/main.rs")
                    }),
            );
        }
        for bin in manifest
            .get("bin")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
        {
            if !off(bin) {
                continue;
            }
            let name = bin
                .get("name")
                .and_then(toml::Value::as_str)
                .unwrap_or_default();
            let path = match bin.get("path").and_then(toml::Value::as_str) {
                Some(path) => dir.join(path),
                None if name == package.name => dir.join("src/main.rs"),
                None => dir.join("src/bin").join(format!("{name}.rs")),
            };
            silent.push(path);
        }
        for file in silent {
            if read(&file)?
                .lines()
                .any(|line| line.trim() == "#[cfg(test)]")
            {
                problems.push(format!(
                    "{}: has unit tests, but its target says `test = false` in {}",
                    shown(&root, &file),
                    package.manifest().display()
                ));
            }
        }
    }
    Ok(problems)
}

/// One row of a stages table, as read: one chapter, and the stage of the same number with its
/// crates, or the reason the chapter has no stage crate of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
struct StageRow {
    /// The row as text, without link targets: what must read the same in every copy.
    text: String,
    /// The stage number; `None` for a chapter without a stage crate (`—` in the stage cell).
    stage: Option<u32>,
    crates: Vec<String>,
    /// Why the chapter has no stage crate (`none: ...` in the crates cell).
    reason: Option<String>,
    /// `(number, title, link target)` of the chapter the row links.
    chapter: Option<(u32, String, String)>,
}

/// What the stage cell says for a chapter without a stage crate.
const NO_STAGE: &str = "—";

/// What opens the crates cell of a chapter without a stage crate, before the reason.
const NO_CRATE: &str = "none:";

fn stage_table(text: &str) -> Vec<StageRow> {
    text.lines()
        .skip_while(|line| {
            map::cells(line).is_none_or(|cells| cells != ["Stage", "Crates", "Chapter"])
        })
        .skip(2)
        .map_while(map::cells)
        .map(|cells| {
            let cell = |i: usize| cells.get(i).map_or("", String::as_str);
            let stage = cell(0)
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok());
            let (crates, reason) = match cell(1).strip_prefix(NO_CRATE) {
                Some(reason) => (Vec::new(), Some(reason.trim().to_string())),
                None => (map::backticked(cell(1)), None),
            };
            StageRow {
                text: without_link_targets(&cells.join(" | ")),
                stage,
                crates,
                reason,
                chapter: chapter_link(cell(2)),
            }
        })
        .collect()
}

/// What makes a stages table untrue: a stage numbered otherwise than its chapter, a chapter in
/// two rows, a stage that names no crate, or a row without a stage that gives no reason.
fn stage_table_rules(table: &[StageRow]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for row in table {
        let Some((chapter, _, _)) = &row.chapter else {
            problems.push(format!(
                "`{}`: the chapter cell is not one `N [Title](target)`",
                row.text
            ));
            continue;
        };
        if !seen.insert(*chapter) {
            problems.push(format!("chapter {chapter} has a second row"));
        }
        match (row.stage, &row.reason) {
            (Some(stage), _) if stage != *chapter => problems.push(format!(
                "stage {stage} is in the row of chapter {chapter}: a stage is numbered by its \
                 chapter"
            )),
            (Some(_), None) if !row.crates.is_empty() => {}
            (Some(stage), _) => problems.push(format!(
                "stage {stage} names no crate: list its crates in backticks"
            )),
            (None, Some(reason)) if !reason.is_empty() && row.text.starts_with(NO_STAGE) => {}
            (None, _) => problems.push(format!(
                "chapter {chapter} has no stage number: give it its chapter's number, or \
                 `{NO_STAGE}` with `{NO_CRATE} <why>` in the crates cell"
            )),
        }
    }
    problems
}

/// `N [Title](target)` as its parts.
fn chapter_link(entry: &str) -> Option<(u32, String, String)> {
    let (number, rest) = entry.split_once(' ')?;
    let (title, target) = rest.strip_prefix('[')?.split_once("](")?;
    Some((
        number.parse().ok()?,
        title.to_string(),
        target.strip_suffix(')')?.to_string(),
    ))
}

fn without_link_targets(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        out.push_str(&rest[..=at]);
        rest = rest[at..].split_once(')').map_or("", |(_, after)| after);
    }
    out.push_str(rest);
    out
}

/// The chapter of `stage` in the stages table of `text` (a page holding one): a stage is
/// numbered by its chapter, so this is `stage` itself when the table has its row.
pub fn first_chapter_of_stage(text: &str, stage: u32) -> Option<u32> {
    (stage_table(text).into_iter())
        .filter(|row| row.stage == Some(stage))
        .filter_map(|row| row.chapter.map(|(number, _, _)| number))
        .min()
}

/// The chapters of the book, in order: `(title, file)` from `docs/src/SUMMARY.md`. Only the
/// top-level items are chapters: a page nested under one is a section of it (mdBook numbers it
/// 4.1), so it takes no chapter's number and needs no row of its own.
fn chapters(summary: &str) -> Vec<(String, String)> {
    summary
        .lines()
        .filter_map(|line| line.strip_prefix("- ["))
        .filter_map(|rest| rest.split_once("]("))
        .map(|(title, file)| (title.to_string(), file.trim_end_matches(')').to_string()))
        .collect()
}

/// The stages table reads the same in `ARCHITECTURE.md`, README.md and the book's
/// introduction and keeps its rules (`stage_table_rules`): one row per chapter of
/// `docs/src/SUMMARY.md`, numbered in its order, each stage numbered by its chapter; and its
/// crates per stage are those of the layer map.
pub fn stage_table_mismatches() -> Result<Vec<String>, Error> {
    let root = workspace_root();
    let summary = chapters(&read(root.join("docs/src/SUMMARY.md"))?);
    let mut problems = Vec::new();
    let mut tables = Vec::new();
    for file in STAGE_TABLES {
        let table = stage_table(&read(root.join(file))?);
        if table.is_empty() {
            problems.push(format!(
                "{file}: no stages table (`| Stage | Crates | Chapter |`)"
            ));
        }
        problems.extend(
            stage_table_rules(&table)
                .into_iter()
                .map(|problem| format!("{file}: {problem}")),
        );
        for (number, title, target) in table.iter().filter_map(|row| row.chapter.as_ref()) {
            let index = usize::try_from(*number).unwrap_or(usize::MAX);
            match index.checked_sub(1).and_then(|i| summary.get(i)) {
                Some((real, chapter)) if real == title && target.ends_with(chapter.as_str()) => {}
                Some((real, chapter)) => problems.push(format!(
                    "{file}: chapter {number} is \"{real}\" ({chapter}) in SUMMARY.md, \
                     not \"{title}\" ({target})"
                )),
                None => problems.push(format!(
                    "{file}: chapter {number} \"{title}\" is not in docs/src/SUMMARY.md"
                )),
            }
        }
        tables.push((file, table));
    }
    let (first, reference) = &tables[0];
    for (number, (title, chapter)) in (1u32..).zip(&summary) {
        let listed = reference
            .iter()
            .any(|row| row.chapter.as_ref().is_some_and(|(n, _, _)| *n == number));
        if chapter.starts_with("ch") && !listed {
            problems.push(format!(
                "{first}: chapter {number} \"{title}\" has no row in the stages table"
            ));
        }
    }
    for (file, table) in &tables[1..] {
        let texts = |t: &[StageRow]| t.iter().map(|r| r.text.clone()).collect::<Vec<_>>();
        if texts(table) != texts(reference) {
            problems.push(format!(
                "{file}: the stages table differs from the one in {first}"
            ));
        }
    }
    let rows = map_rows()?;
    let mut by_stage: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    for row in reference {
        if let Some(stage) = row.stage {
            by_stage
                .entry(stage)
                .or_default()
                .extend(row.crates.iter().cloned());
        }
    }
    let mut mapped: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    for row in &rows {
        let stage = match row.layer {
            Layer::Core => 1,
            Layer::Stage(n) => n,
            _ => continue,
        };
        mapped.entry(stage).or_default().insert(row.name.clone());
    }
    for row in &rows {
        if let Layer::Checks(n) = row.layer
            && !mapped.contains_key(&n)
        {
            problems.push(format!(
                "{}: {} is in checks {n}, but no stage {n} is in the layer map",
                map::MAP_FILE,
                row.name
            ));
        }
    }
    if by_stage != mapped {
        problems.push(format!(
            "{first}: the stages table's crates per stage ({by_stage:?}) are not the layer \
             map's ({mapped:?})"
        ));
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Failpoints are found directly, through a dependency's feature, and through another
    // feature of the same package.
    #[test]
    fn failpoints_are_found_through_features() {
        let features = BTreeMap::from([
            ("default".to_string(), vec!["crash".to_string()]),
            (
                "crash".to_string(),
                vec!["fail/failpoints".to_string(), "x".to_string()],
            ),
            ("failpoints".to_string(), vec![]),
        ]);
        assert_eq!(
            knobs_via(&features, "default", is_failpoints),
            vec!["fail/failpoints"]
        );
        assert!(is_knob("retrykey-replicas/test-support"));
        assert!(!is_failpoints("retrykey-replicas/test-support"));
        assert!(is_failpoints("failpoints"));
        assert!(is_failpoints("retrykey-durable?/failpoints"));
        assert!(!is_failpoints("failpoints-extra"));
    }

    // A stages table row keeps its text without link targets, and its parts.
    #[test]
    fn a_stage_row_reads_as_parts() {
        let table = "| Stage | Crates | Chapter |\n|---|---|---|\n\
            | 7 outbox | `a`, `b` | 7 [Work](docs/src/ch07.md) |\n\
            | — | none: it breaks `a` | 8 [Break](docs/src/ch08.md) |\n";
        let rows = stage_table(table);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].stage, Some(7));
        assert_eq!(rows[0].crates, vec!["a", "b"]);
        assert_eq!(
            rows[0].chapter,
            Some((7, "Work".to_string(), "docs/src/ch07.md".to_string()))
        );
        assert_eq!(rows[0].text, "7 outbox | `a`, `b` | 7 [Work]");
        assert_eq!(rows[1].stage, None);
        assert_eq!(rows[1].crates, Vec::<String>::new());
        assert_eq!(rows[1].reason.as_deref(), Some("it breaks `a`"));
        assert_eq!(stage_table_rules(&rows), Vec::<String>::new());
        assert_eq!(first_chapter_of_stage(table, 7), Some(7));
        assert_eq!(first_chapter_of_stage(table, 8), None);
    }

    // A page nested under a chapter is a section of it: the chapters after it keep their numbers.
    #[test]
    fn a_nested_page_is_no_chapter() {
        let summary = "# Summary\n\n[Intro](intro.md)\n\n- [One](ch01.md)\n  - [Aside](aside.md)\n\
                       - [Two](ch02.md)\n";
        let found = chapters(summary);
        let files: Vec<&str> = found.iter().map(|(_, file)| file.as_str()).collect();
        assert_eq!(files, ["ch01.md", "ch02.md"]);
    }

    const HEADER: &str = "| Stage | Crates | Chapter |\n|---|---|---|\n";

    // A stage numbered otherwise than its chapter is refused, naming both numbers.
    #[test]
    fn a_stage_numbered_otherwise_than_its_chapter_is_refused() {
        let table = format!(
            "{HEADER}| 1 ledger | `a` | 1 [One](ch01.md) |\n| 2 retries | `b` | 3 [Three](ch03.md) |\n"
        );
        assert_eq!(
            stage_table_rules(&stage_table(&table)),
            vec![
                "stage 2 is in the row of chapter 3: a stage is numbered by its chapter"
                    .to_string()
            ]
        );
    }

    // A chapter appears once, and a row without a stage crate says why.
    #[test]
    fn a_second_row_or_a_missing_reason_is_refused() {
        let table = format!(
            "{HEADER}| 1 ledger | `a` | 1 [One](ch01.md) |\n| 1 more | `b` | 1 [One](ch01.md) |\n\
             | — | `c` | 2 [Two](ch02.md) |\n| — | none: | 3 [Three](ch03.md) |\n"
        );
        assert_eq!(
            stage_table_rules(&stage_table(&table)),
            vec![
                "chapter 1 has a second row".to_string(),
                "chapter 2 has no stage number: give it its chapter's number, or `—` with \
                 `none: <why>` in the crates cell"
                    .to_string(),
                "chapter 3 has no stage number: give it its chapter's number, or `—` with \
                 `none: <why>` in the crates cell"
                    .to_string(),
            ]
        );
    }

    fn in_memory(files: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> {
        let files: BTreeMap<PathBuf, String> = files
            .iter()
            .map(|(path, text)| (PathBuf::from(path), text.to_string()))
            .collect();
        move |path: &Path| files.get(path).cloned()
    }

    // Three modules that import each other by `use`, a path in code and `super::` are one
    // circle, named by their files; a child reading its parent is none.
    #[test]
    fn an_import_circle_is_refused_with_its_files() {
        let read = in_memory(&[
            (
                "src/lib.rs",
                "mod a;\nmod b;\nmod c;\nmod d;\npub use a::Y;\n",
            ),
            ("src/a.rs", "use crate::b::X;\npub struct Y;\n"),
            ("src/b.rs", "pub struct X;\npub fn f() { crate::c::g() }\n"),
            (
                "src/c.rs",
                "// use crate::d::Z;\npub fn g() { let _ = super::a::Y; }\n",
            ),
            ("src/d.rs", "mod e;\npub struct Z;\n"),
            ("src/d/e.rs", "use super::Z;\nuse crate::Y;\n"),
        ]);
        let tree = Tree::read(Path::new("src/lib.rs"), &read);
        let files = |names: &[&str]| names.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            import_cycles_of(&[tree]),
            vec![(
                files(&["src/a.rs", "src/b.rs", "src/c.rs"]),
                files(&["src/a.rs", "src/b.rs", "src/c.rs", "src/a.rs"])
            )]
        );
    }

    // Two siblings that name each other's items through the root's re-exports (`crate::X`) are
    // a circle through the crate's root; a name the root defines itself is no edge.
    #[test]
    fn an_import_circle_through_the_root_is_refused() {
        let read = in_memory(&[
            (
                "src/lib.rs",
                "mod a;\nmod b;\npub use a::Y;\npub use b::X;\npub struct Front;\n",
            ),
            ("src/a.rs", "use crate::{Front, X};\npub struct Y;\n"),
            (
                "src/b.rs",
                "pub struct X;\npub fn f() { let _ = crate::Y; }\n",
            ),
        ]);
        let tree = Tree::read(Path::new("src/lib.rs"), &read);
        let files = |names: &[&str]| names.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            import_cycles_of(&[tree]),
            vec![(
                files(&["src/a.rs", "src/b.rs"]),
                files(&["src/a.rs", "src/b.rs", "src/a.rs"])
            )]
        );
        let apart = in_memory(&[
            (
                "src/lib.rs",
                "mod a;\nmod b;\npub use a::Y;\npub struct X;\n",
            ),
            ("src/a.rs", "use crate::X;\npub struct Y;\n"),
            ("src/b.rs", "pub fn f() { let _ = crate::Y; }\n"),
        ]);
        let tree = Tree::read(Path::new("src/lib.rs"), &apart);
        assert_eq!(import_cycles_of(&[tree]), Vec::new());
    }

    // A lab's root mounts its copy by `#[path]`: the copy is read as that module, and its
    // `crate::` paths lead to the root.
    #[test]
    fn a_module_named_by_a_path_attribute_is_read() {
        let read = in_memory(&[
            (
                "lab/src/lab.rs",
                "use a::*;\n\n#[path = \"lib.rs\"]\npub(crate) mod store;\n",
            ),
            ("lab/src/lib.rs", "use crate::Key;\npub struct Store;\n"),
        ]);
        let tree = Tree::read(Path::new("lab/src/lab.rs"), &read);
        let files: Vec<&Path> = tree.modules.iter().map(|m| m.file.as_path()).collect();
        assert_eq!(
            files,
            [Path::new("lab/src/lab.rs"), Path::new("lab/src/lib.rs")]
        );
        assert_eq!(tree.modules[0].children.get("store"), Some(&1));
        assert_eq!(import_cycles_of(&[tree]), Vec::new());
    }

    // A name defined twice is refused unless it is a crate's own `Error` or listed; a listed
    // name that is defined once is refused too.
    #[test]
    fn a_repeated_name_is_refused_unless_listed() {
        let defined = |name: &str, krate: &str| {
            (
                name.to_string(),
                krate.to_string(),
                format!("{krate}/src/lib.rs:1"),
            )
        };
        let definitions = [
            defined("Error", "a"),
            defined("Error", "b"),
            defined("Fault", "a"),
            defined("Fault", "b"),
            defined("Check", "a"),
            defined("Check", "b"),
            defined("Hooks", "a"),
        ];
        let listed = ["Check".to_string(), "Hooks".to_string()];
        let problems = repeated_names(&definitions, &listed);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].starts_with("`Fault` is defined 2 times (a/src/lib.rs:1, b/src/lib.rs:1)")
        );
        assert!(problems[1].contains("`Hooks` is listed"));
        let table = "| name | defined in | why |\n|---|---|---|\n| `Check` | every checks crate | one shape |\n";
        assert_eq!(listed_repeats(table), vec!["Check"]);
    }

    // A crate re-exported under another name (`pub use other as x`) is still reached by whoever
    // names it through the re-export.
    #[test]
    fn a_re_export_does_not_hide_the_crate_it_exports() {
        let read = in_memory(&[
            (
                "x/src/lib.rs",
                "use b::conv::Thing;\nfn f() { let _ = std::mem::size_of::<u8>(); }\n",
            ),
            ("b/src/lib.rs", "pub use c as conv;\n"),
        ]);
        let tree = Tree::read(Path::new("x/src/lib.rs"), &read);
        let idents = BTreeMap::from([
            ("b".to_string(), "b".to_string()),
            ("c".to_string(), "c".to_string()),
        ]);
        let libraries = BTreeMap::from([(
            "b".to_string(),
            Tree::read(Path::new("b/src/lib.rs"), &read),
        )]);
        let reached: Vec<(String, String)> = crates_reached(&[tree], &idents, &libraries)
            .into_iter()
            .map(|(krate, how, _, _)| (krate, how))
            .collect();
        assert_eq!(
            reached,
            vec![
                ("b".to_string(), "b".to_string()),
                ("c".to_string(), "b::conv (re-exported from c)".to_string())
            ]
        );
    }
}
