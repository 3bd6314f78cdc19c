//! A crate's modules as files, and what each file imports: its `use` declarations and the paths
//! in its code (`crate::a::f()`, `super::b::C`, `trace::timeline(..)`), resolved to the module
//! files they reach, or to the other crate they name.
//!
//! The tree is read from the `mod` declarations, from each root (`src/lib.rs`, `src/main.rs`,
//! each `src/bin/` program); an inline `mod x { .. }` belongs to its file. Inside a crate a path
//! leads by module names: `crate::Event`, re-exported by `lib.rs`, reaches the root, the
//! crate's front; for an import circle the front's re-export is followed on to the module that
//! defines `Event` ([`Tree::resolve_past_front`]). Across crates a re-export is followed:
//! `b::conv::X` reaches the crate that `b` re-exports as `conv`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::tokens::{Kind, Token, tokens};

/// One module of a tree.
#[derive(Clone, Debug)]
pub struct Module {
    /// The file it is written in.
    pub file: PathBuf,
    /// Its parent, `None` for the root.
    pub parent: Option<usize>,
    /// Its child modules by name.
    pub children: BTreeMap<String, usize>,
    /// The names it imports, each with the path it comes from (`use a::b as c` maps `c` to
    /// `a::b`), and whether it re-exports them (`pub use`).
    pub imports: BTreeMap<String, (Vec<String>, bool)>,
    /// Every path its code names: the `use` paths and the paths of expressions and types,
    /// with the line.
    pub paths: Vec<(Vec<String>, usize)>,
}

/// A tree of modules: one crate target. Index 0 is the root.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    /// The modules.
    pub modules: Vec<Module>,
}

/// Where a path leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A module of the same tree.
    Module(usize),
    /// Another crate, by the name the code uses (`retrykey_server`), and the rest of the path.
    Crate(String, Vec<String>),
}

impl Tree {
    /// The tree rooted at `root`, reading files with `read` (so tests can hold them in memory).
    pub fn read(root: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Tree {
        let mut tree = Tree::default();
        let Some(source) = read(root) else {
            return tree;
        };
        let children_dir = root.parent().unwrap_or(Path::new("")).to_path_buf();
        tree.add(root, &tokens(&source), None, &children_dir, read);
        tree
    }

    fn add(
        &mut self,
        file: &Path,
        tokens: &[Token],
        parent: Option<usize>,
        children_dir: &Path,
        read: &dyn Fn(&Path) -> Option<String>,
    ) -> usize {
        let index = self.modules.len();
        self.modules.push(Module {
            file: file.to_path_buf(),
            parent,
            children: BTreeMap::new(),
            imports: BTreeMap::new(),
            paths: Vec::new(),
        });
        let mut at = 0;
        let mut depth = 0usize;
        while at < tokens.len() {
            let token = &tokens[at];
            if token.punct('{') {
                depth += 1;
            } else if token.punct('}') {
                depth = depth.saturating_sub(1);
            }
            if depth == 0
                && token.is("mod")
                && !preceded_by_path(tokens, at)
                && let Some(name) = tokens.get(at + 1).and_then(Token::word)
                && let Some(next) = self.child(index, file, tokens, at, name, children_dir, read)
            {
                at = next;
                continue;
            }
            if token.is("use") && !preceded_by_path(tokens, at) {
                let public = at > 0 && is_visibility_end(tokens, at);
                let end = (at..tokens.len())
                    .find(|&i| tokens[i].punct(';'))
                    .unwrap_or(tokens.len());
                let line = token.line;
                for (path, alias) in use_tree(&tokens[at + 1..end]) {
                    if let Some(alias) = alias.filter(|a| a != "_") {
                        self.modules[index]
                            .imports
                            .insert(alias, (path.clone(), public));
                    }
                    self.modules[index].paths.push((path, line));
                }
                at = end + 1;
                continue;
            }
            if let Some(path) = code_path(tokens, at) {
                let len = path.len() * 2 - 1;
                self.modules[index].paths.push((path, token.line));
                at += len;
                continue;
            }
            at += 1;
        }
        index
    }

    /// Reads the module `name` declared at `at` in module `index` (inline, or in its own file
    /// under `children_dir`), and returns the index of the token after its declaration; `None`
    /// for a `mod` that declares no module (`mod` in a macro's text).
    #[expect(
        clippy::too_many_arguments,
        reason = "one reader's state, passed down the tree"
    )]
    fn child(
        &mut self,
        index: usize,
        file: &Path,
        tokens: &[Token],
        at: usize,
        name: &str,
        children_dir: &Path,
        read: &dyn Fn(&Path) -> Option<String>,
    ) -> Option<usize> {
        let dir = children_dir.join(name);
        let (child, next) = match tokens.get(at + 2) {
            Some(t) if t.punct('{') => {
                let end = closing(tokens, at + 2);
                let child = self.add(file, &tokens[at + 3..end], Some(index), &dir, read);
                (Some(child), end + 1)
            }
            Some(t) if t.punct(';') => {
                // `#[path = "lib.rs"] mod store;` (a lab's root mounting its copy) names the
                // file beside the declaring one; that file's children sit beside it.
                let attributed = path_attribute(tokens, at)
                    .map(|named| file.parent().unwrap_or(Path::new("")).join(named));
                let dir = match &attributed {
                    Some(path) => path.parent().unwrap_or(Path::new("")).to_path_buf(),
                    None => dir,
                };
                let flat = children_dir.join(format!("{name}.rs"));
                let nested = dir.join("mod.rs");
                let candidates = match attributed {
                    Some(path) => vec![path],
                    None => vec![flat, nested],
                };
                let found = (candidates.into_iter())
                    .find_map(|path| read(&path).map(|source| (path, source)));
                let child = found.map(|(path, source)| {
                    let tokens = super::tokens::tokens(&source);
                    self.add(&path, &tokens, Some(index), &dir, read)
                });
                (child, at + 3)
            }
            _ => return None,
        };
        if let Some(child) = child {
            self.modules[index].children.insert(name.to_string(), child);
        }
        Some(next)
    }

    /// Where `path`, named in module `from`, leads: the module it reaches by module names
    /// (after the names `from` itself imports), another crate, or nothing (a local item, a
    /// name from the prelude). With `through`, a name that a module on the way re-exports
    /// (`pub use`) is followed too, so a re-export leads to where it comes from.
    pub fn resolve(&self, from: usize, path: &[String], through: bool) -> Option<Target> {
        self.resolve_within(from, path, through, 0)
    }

    fn resolve_within(
        &self,
        from: usize,
        path: &[String],
        through: bool,
        hops: usize,
    ) -> Option<Target> {
        if hops > 16 || path.is_empty() {
            return None;
        }
        let (mut here, mut rest) = match path[0].as_str() {
            "crate" => (0, &path[1..]),
            "self" => (from, &path[1..]),
            "super" => {
                let mut here = from;
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    here = self.modules[here].parent?;
                    rest = &rest[1..];
                }
                (here, rest)
            }
            "" => return Some(Target::Crate(path.get(1)?.clone(), path[2..].to_vec())),
            first => {
                if self.modules[from].children.contains_key(first) {
                    (from, path)
                } else if let Some((source, _)) = self.modules[from].imports.get(first) {
                    let mut joined = source.clone();
                    joined.extend_from_slice(&path[1..]);
                    if source.as_slice() == [first.to_string()] {
                        return Some(Target::Crate(first.to_string(), path[1..].to_vec()));
                    }
                    return self.resolve_within(from, &joined, through, hops + 1);
                } else if is_crate_name(first) {
                    return Some(Target::Crate(first.to_string(), path[1..].to_vec()));
                } else {
                    return None;
                }
            }
        };
        while let Some(next) = rest.first() {
            if let Some(&child) = self.modules[here].children.get(next) {
                here = child;
                rest = &rest[1..];
            } else if let Some((source, _)) =
                (self.modules[here].imports.get(next)).filter(|(_, public)| through && *public)
            {
                if source.as_slice() == [next.clone()] {
                    return Some(Target::Crate(next.clone(), rest[1..].to_vec()));
                }
                let mut joined = source.clone();
                joined.extend_from_slice(&rest[1..]);
                return self
                    .resolve_within(here, &joined, through, hops + 1)
                    .or(Some(Target::Module(here)));
            } else {
                break;
            }
        }
        Some(Target::Module(here))
    }

    /// Where `path`, named in module `from`, leads for an import circle: as [`Tree::resolve`]
    /// without following re-exports, except into a module that holds `from` (`crate::Error`,
    /// `super::Row`): that front's re-exports are followed to the module that defines the name,
    /// so a child that names its sibling's item through the root reaches the sibling.
    pub fn resolve_past_front(&self, from: usize, path: &[String]) -> Option<Target> {
        match self.resolve(from, path, false) {
            Some(Target::Module(to)) if self.holds(to, from) => self.resolve(from, path, true),
            found => found,
        }
    }

    /// Whether `ancestor` holds `module`, at any depth (or is it).
    pub fn holds(&self, ancestor: usize, module: usize) -> bool {
        let mut at = Some(module);
        while let Some(here) = at {
            if here == ancestor {
                return true;
            }
            at = self.modules[here].parent;
        }
        false
    }
}

/// Whether a first path segment may name another crate rather than a local item: a lower-case
/// word (`std`, `retrykey_server`, also a local function's name); the caller keeps only the
/// crates it knows.
fn is_crate_name(word: &str) -> bool {
    word.chars().next().is_some_and(|c| c.is_ascii_lowercase())
}

/// The file a `#[path = "..."]` attribute names for the `mod` at `at` (its visibility between
/// them), as written.
fn path_attribute(tokens: &[Token], at: usize) -> Option<&str> {
    let mut end = at;
    if end > 0 && tokens[end - 1].punct(')') {
        end = (0..end).rev().find(|&i| tokens[i].punct('('))?;
    }
    if end > 0 && tokens[end - 1].is("pub") {
        end -= 1;
    }
    let attribute = tokens.get(end.checked_sub(6)?..end)?;
    let shaped = attribute[0].punct('#')
        && attribute[1].punct('[')
        && attribute[2].is("path")
        && attribute[3].punct('=')
        && attribute[5].punct(']');
    match &attribute[4].kind {
        Kind::Str(named) if shaped => Some(named),
        _ => None,
    }
}

/// Whether the token before `at` is `::` (so `at` is inside a path, not starting an item).
fn preceded_by_path(tokens: &[Token], at: usize) -> bool {
    at > 0 && tokens[at - 1].kind == Kind::Path
}

/// Whether the `use` at `at` is re-exported: `pub use`, `pub(crate) use`, `pub(super) use`.
fn is_visibility_end(tokens: &[Token], at: usize) -> bool {
    if tokens[at - 1].is("pub") {
        return true;
    }
    tokens[at - 1].punct(')')
        && (1..at)
            .rev()
            .find(|&i| tokens[i].punct('('))
            .is_some_and(|open| open > 0 && tokens[open - 1].is("pub"))
}

/// The index of the `}` that closes the `{` at `open`.
pub fn closing(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate().skip(open) {
        if token.punct('{') {
            depth += 1;
        } else if token.punct('}') {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
    }
    tokens.len().saturating_sub(1)
}

/// The leaves of a use tree (the tokens after `use`, before `;`), each a path and the name it
/// binds (`None` for a glob).
pub fn use_tree(tokens: &[Token]) -> Vec<(Vec<String>, Option<String>)> {
    let mut found = Vec::new();
    let mut at = 0;
    use_group(tokens, &mut at, &[], &mut found);
    found
}

fn use_group(
    tokens: &[Token],
    at: &mut usize,
    prefix: &[String],
    found: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let mut path = prefix.to_vec();
    let mut itself = false;
    if *at < tokens.len() && tokens[*at].kind == Kind::Path {
        path.push(String::new());
        *at += 1;
    }
    while *at < tokens.len() {
        let token = &tokens[*at];
        *at += 1;
        match &token.kind {
            Kind::Word(word) if word == "as" => {
                let alias = tokens.get(*at).and_then(Token::word).map(str::to_string);
                *at += 1;
                found.push((path.clone(), alias));
                return;
            }
            Kind::Word(word) if word == "self" && !prefix.is_empty() && path == prefix => {
                // `a::{self, b}`: the module itself, bound by its own name.
                itself = true;
            }
            Kind::Word(word) => path.push(word.clone()),
            Kind::Path => {}
            Kind::Punct('*') => {
                found.push((path.clone(), None));
                return;
            }
            Kind::Punct('{') => {
                loop {
                    use_group(tokens, at, &path, found);
                    match tokens.get(*at) {
                        Some(t) if t.punct(',') => *at += 1,
                        Some(t) if t.punct('}') => {
                            *at += 1;
                            break;
                        }
                        _ => break,
                    }
                    if tokens.get(*at).is_some_and(|t| t.punct('}')) {
                        *at += 1;
                        break;
                    }
                }
                return;
            }
            Kind::Punct(',' | '}') => {
                *at -= 1;
                break;
            }
            _ => {}
        }
    }
    if path.len() > prefix.len() || itself {
        let name = path.last().cloned();
        found.push((path, name));
    }
}

/// The path that starts at `at` in code (not a `use`): `crate::..`, `super::..`, `self::..`,
/// or `word::word..` not itself preceded by `::`, as its segments.
fn code_path(tokens: &[Token], at: usize) -> Option<Vec<String>> {
    let first = tokens[at].word()?;
    if preceded_by_path(tokens, at) || tokens.get(at + 1)?.kind != Kind::Path {
        return None;
    }
    // `x.y::<T>()` and `<T as a::B>` start no module path.
    if at > 0 && (tokens[at - 1].punct('.')) {
        return None;
    }
    let mut path = vec![first.to_string()];
    let mut i = at + 1;
    while tokens.get(i).is_some_and(|t| t.kind == Kind::Path) {
        match tokens.get(i + 1).and_then(Token::word) {
            Some(word) => path.push(word.to_string()),
            None => break,
        }
        i += 2;
    }
    (path.len() > 1).then_some(path)
}

/// The circles of a directed graph: each group of more than one node that reach each other,
/// sorted, with one shortest circle through its first node (the first repeated at the end).
pub fn cycles<N: Ord + Clone>(edges: &BTreeMap<N, BTreeSet<N>>) -> Vec<(Vec<N>, Vec<N>)> {
    let nodes: Vec<N> = edges
        .iter()
        .flat_map(|(from, to)| std::iter::once(from.clone()).chain(to.iter().cloned()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut found = Vec::new();
    let mut done: BTreeSet<N> = BTreeSet::new();
    for start in &nodes {
        if done.contains(start) {
            continue;
        }
        let group: BTreeSet<N> = reach(edges, start)
            .into_iter()
            .filter(|n| reach(edges, n).contains(start))
            .collect();
        done.extend(group.iter().cloned());
        if group.len() > 1 {
            let circle = cycle_through(edges, start, &group);
            found.push((group.into_iter().collect(), circle));
        }
    }
    found
}

fn reach<N: Ord + Clone>(edges: &BTreeMap<N, BTreeSet<N>>, start: &N) -> BTreeSet<N> {
    let mut seen = BTreeSet::new();
    let mut pending = vec![start.clone()];
    while let Some(next) = pending.pop() {
        for to in edges.get(&next).into_iter().flatten() {
            if seen.insert(to.clone()) {
                pending.push(to.clone());
            }
        }
    }
    seen
}

/// A shortest way from `start` back to itself inside `group`.
fn cycle_through<N: Ord + Clone>(
    edges: &BTreeMap<N, BTreeSet<N>>,
    start: &N,
    group: &BTreeSet<N>,
) -> Vec<N> {
    let mut came_from: BTreeMap<N, N> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    while let Some(next) = queue.pop_front() {
        for to in edges.get(&next).into_iter().flatten() {
            if !group.contains(to) {
                continue;
            }
            if to == start {
                let mut way = vec![next.clone()];
                let mut at = next.clone();
                while at != *start {
                    at = came_from[&at].clone();
                    way.push(at.clone());
                }
                way.reverse();
                way.push(start.clone());
                return way;
            }
            if !came_from.contains_key(to) {
                came_from.insert(to.clone(), next.clone());
                queue.push_back(to.clone());
            }
        }
    }
    vec![start.clone()]
}
