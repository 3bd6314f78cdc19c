//! Every program of the workspace answers `--help`, and every flag that the book or the
//! justfile passes to a program is one that its help lists.
//!
//! The programs are cargo's own list (`cargo metadata`): every binary and example of every
//! member but the students' copies under `exercises/`, so a new program is checked the day it
//! is added. The commands are those of the book's console blocks and of the justfile's
//! recipes: `just RECIPE ...` reaches the programs that the recipe runs with its parameters,
//! `cargo run ... -- ...` the binary or example it names, and a path such as
//! `target/release/flood` that program. A page's prose counts too (an inline `just ...` or
//! `cargo run ...`), and so does a recipe's one-line description (what `just --list` prints):
//! the flags it names must be in the help of the program that receives the recipe's
//! arguments.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cargo_test::cargo;

/// How long a program may take to print its help (a debug build that loads nothing).
const HELP_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the programs or their help could not be had.
#[derive(Debug, thiserror::Error)]
pub enum HelpError {
    /// Cargo or a program could not be started.
    #[error("cannot run {what}: {source}")]
    Spawn {
        /// The command.
        what: String,
        /// The I/O failure.
        source: std::io::Error,
    },
    /// `cargo metadata` printed something that is not the workspace's description.
    #[error("cargo metadata: {0}")]
    Metadata(String),
    /// A build failed, or did not report a program it was asked for.
    #[error("building {what}: {reason}")]
    Build {
        /// The cargo command's selection.
        what: String,
        /// What went wrong.
        reason: String,
    },
}

/// A binary or an example.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A `[[bin]]`, `src/main.rs` or `src/bin/*.rs`: `cargo run --bin`.
    Bin,
    /// An example: `cargo run --example`.
    Example,
}

/// One program of the workspace.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Program {
    /// The package that builds it.
    pub package: String,
    /// Binary or example.
    pub kind: Kind,
    /// Its target name, which is its file name.
    pub name: String,
    /// Whether its package is a default member, one that a plain `cargo test` builds.
    pub default_member: bool,
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Bin => "--bin",
            Kind::Example => "--example",
        };
        write!(f, "-p {} {kind} {}", self.package, self.name)
    }
}

/// Every binary and example of the workspace at `root`, as cargo lists them, but those of the
/// copies under `exercises/` (each a student's copy of a lab, named as the student likes).
pub fn programs(root: &Path) -> Result<Vec<Program>, HelpError> {
    let turn = crate::cargo_turn();
    let output = Command::new(cargo())
        .current_dir(root)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|source| HelpError::Spawn {
            what: "cargo metadata".to_string(),
            source,
        })?;
    drop(turn);
    if !output.status.success() {
        return Err(HelpError::Metadata(format!(
            "exited with {}",
            output.status
        )));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|error| HelpError::Metadata(error.to_string()))?;
    let packages = metadata["packages"]
        .as_array()
        .ok_or_else(|| HelpError::Metadata("no packages".to_string()))?;
    let defaults: BTreeSet<&str> = metadata["workspace_default_members"]
        .as_array()
        .ok_or_else(|| HelpError::Metadata("no default members".to_string()))?
        .iter()
        .filter_map(|id| id.as_str())
        .collect();
    let exercises = root.join(crate::exercise::EXERCISES_DIR);
    let mut found = Vec::new();
    for package in packages {
        let manifest = Path::new(package["manifest_path"].as_str().unwrap_or_default());
        if manifest.starts_with(&exercises) {
            continue;
        }
        let name = package["name"].as_str().unwrap_or_default();
        let default_member = defaults.contains(package["id"].as_str().unwrap_or_default());
        for target in package["targets"].as_array().into_iter().flatten() {
            let Some(kind) = kind_of(target) else {
                continue;
            };
            found.push(Program {
                package: name.to_string(),
                kind,
                name: target["name"].as_str().unwrap_or_default().to_string(),
                default_member,
            });
        }
    }
    found.sort();
    Ok(found)
}

/// A cargo target's kind, when it is a program.
fn kind_of(target: &serde_json::Value) -> Option<Kind> {
    let kinds = target["kind"].as_array()?;
    match kinds.iter().filter_map(|kind| kind.as_str()).next()? {
        "bin" => Some(Kind::Bin),
        "example" => Some(Kind::Example),
        _ => None,
    }
}

/// Builds `programs` and returns each one's executable as cargo reports it.
///
/// Those of the default members are built by one command over the default members with their
/// tests (`cargo build --bins --examples --tests`): the same selection and features as a plain
/// `cargo test`, so after it nothing is built again. A command per package would build the
/// workspace's crates again with that package's own features. The other members' programs
/// (the benches, the variants) are built by a second command.
pub fn build(root: &Path, programs: &[Program]) -> Result<BTreeMap<Program, PathBuf>, HelpError> {
    let (members, others): (Vec<Program>, Vec<Program>) = programs
        .iter()
        .cloned()
        .partition(|program| program.default_member);
    let mut built = BTreeMap::new();
    if !members.is_empty() {
        built.extend(build_with(root, &["--tests"], &[], &members)?);
    }
    if !others.is_empty() {
        let packages: BTreeSet<&str> = others
            .iter()
            .map(|program| program.package.as_str())
            .collect();
        let packages: Vec<&str> = packages.into_iter().collect();
        built.extend(build_with(root, &[], &packages, &others)?);
    }
    Ok(built)
}

/// One `cargo build --bins --examples` with `extra` arguments, over `packages` (the default
/// members when empty), reporting the executables of `programs`.
fn build_with(
    root: &Path,
    extra: &[&str],
    packages: &[&str],
    programs: &[Program],
) -> Result<BTreeMap<Program, PathBuf>, HelpError> {
    let mut command = Command::new(cargo());
    command
        .current_dir(root)
        .args(["build", "--bins", "--examples"])
        .args(extra);
    for package in packages {
        command.args(["-p", package]);
    }
    let turn = crate::cargo_turn();
    let output = command
        .arg("--message-format=json-render-diagnostics")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|source| HelpError::Spawn {
            what: "cargo build".to_string(),
            source,
        })?;
    drop(turn);
    if !output.status.success() {
        return Err(HelpError::Build {
            what: "the workspace's programs".to_string(),
            reason: format!("cargo exited with {}", output.status),
        });
    }
    let mut built = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(executable), Some(name), Some(id)) = (
            message["executable"].as_str(),
            message["target"]["name"].as_str(),
            message["package_id"].as_str(),
        ) else {
            continue;
        };
        // `--tests` builds a binary's unit tests too: a test harness, not the program.
        if message["profile"]["test"].as_bool() == Some(true) {
            continue;
        }
        let Some(kind) = kind_of(&message["target"]) else {
            continue;
        };
        let wanted = programs.iter().find(|program| {
            program.kind == kind
                && program.name == name
                && crate::exercise::spec::package_id_names(id, &program.package)
        });
        if let Some(program) = wanted {
            built.insert(program.clone(), PathBuf::from(executable));
        }
    }
    if let Some(missing) = programs
        .iter()
        .find(|program| !built.contains_key(*program))
    {
        return Err(HelpError::Build {
            what: missing.to_string(),
            reason: "cargo reported no executable for it".to_string(),
        });
    }
    Ok(built)
}

/// What a program did when asked for its help.
#[derive(Clone, Debug)]
pub struct Answer {
    /// Its exit status, or `None` when it was stopped for taking too long.
    pub status: Option<i32>,
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
}

/// Runs `program` with `args` from `root`, stdin closed, and stops it after 30 seconds (a
/// program that ignores `--help` may start a server).
pub fn ask(root: &Path, program: &Path, args: &[&str]) -> Result<Answer, HelpError> {
    let spawn_error = |source| HelpError::Spawn {
        what: format!("{} {}", program.display(), args.join(" ")),
        source,
    };
    let mut child = Command::new(program)
        .current_dir(root)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(spawn_error)? {
            break status.code();
        }
        if started.elapsed() > HELP_TIMEOUT {
            // Stopped by its own handle, so by its own pid.
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = child.wait_with_output().map_err(spawn_error)?;
    Ok(Answer {
        status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// The subcommands a clap help lists under `Commands:`, but `help`.
pub fn subcommands(help: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.trim_end() == "Commands:" {
            inside = true;
        } else if inside {
            match line.strip_prefix("  ") {
                Some(entry) if !entry.starts_with(' ') => {
                    if let Some(name) = entry.split_whitespace().next()
                        && name != "help"
                    {
                        names.push(name.to_string());
                    }
                }
                // A description that wraps onto the next line.
                Some(_) => {}
                None => inside = false,
            }
        }
    }
    names
}

/// Whether `help` lists `flag`: the flag appears, and the character after it (if any) cannot
/// continue a flag's name, so `--seed` is not found in `--seeds N`.
pub fn lists(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(at, _)| {
        let before = help[..at].chars().next_back();
        let after = help[at + flag.len()..].chars().next();
        !before.is_some_and(continues_flag) && !after.is_some_and(continues_flag)
    })
}

fn continues_flag(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// The flags of `flags` that `help` does not list.
pub fn missing<'a>(help: &str, flags: &'a [String]) -> Vec<&'a str> {
    flags
        .iter()
        .map(String::as_str)
        .filter(|flag| !lists(help, flag))
        .collect()
}

/// The long flags among a program's arguments, each without an `=VALUE`, up to a bare `--`
/// (what follows it is handed on, not read by the program). A flag the prose writes as
/// optional, `[--watch]`, counts too.
pub fn long_flags<'a>(args: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut flags = Vec::new();
    for arg in args {
        if arg == "--" {
            break;
        }
        let name: String = arg
            .trim_start_matches(['[', '('])
            .strip_prefix("--")
            .unwrap_or_default()
            .chars()
            .take_while(|c| continues_flag(*c))
            .collect();
        if name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            flags.push(format!("--{name}"));
        }
    }
    flags
}

/// The commands a page writes in its prose, each with its line: every inline code span
/// outside the fenced blocks that runs `just` or `cargo run`.
pub fn prose_commands(page: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (index, line) in page.lines().enumerate() {
        let trimmed = line.trim_start();
        let run = |c: char| trimmed.chars().take_while(|&d| d == c).count();
        if let Some((c, length)) = fence {
            if run(c) >= length && trimmed.trim_start_matches(c).trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if let Some(c) = ['`', '~'].into_iter().find(|&c| run(c) >= 3) {
            fence = Some((c, run(c)));
            continue;
        }
        for span in crate::book_rules::code_spans(line) {
            let span = span.trim();
            if span == "just" || span.starts_with("just ") || span.starts_with("cargo run") {
                found.push((index + 1, span.to_string()));
            }
        }
    }
    found
}

/// The long flags a recipe's description names: every `--name` in it.
pub fn flags_named_in(text: &str) -> Vec<String> {
    let mut flags = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        let before = rest[..at].chars().next_back();
        let name: String = rest[at + 2..]
            .chars()
            .take_while(|c| continues_flag(*c))
            .collect();
        if !before.is_some_and(continues_flag) && name.starts_with(|c: char| c.is_alphanumeric()) {
            flags.push(format!("--{name}"));
        }
        rest = &rest[at + 2 + name.len()..];
    }
    flags
}

/// Splits a shell command into its simple commands (at `|`, `&&`, `||`, `;`, `&` and line
/// ends), each as its words with the quotes removed; a redirection and its target are left
/// out, and a backslash before a line end joins the lines. Enough of the shell to read the
/// book's commands and the justfile's lines, not a shell.
pub fn simple_commands(command: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut words = Words::default();
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(escaped) => words.push(escaped),
            },
            '\'' => {
                words.started = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    words.push(c);
                }
            }
            '"' => {
                words.started = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$')) => {
                            words.word.extend(chars.next());
                        }
                        _ => words.push(c),
                    }
                }
            }
            // A comment runs to the line's end.
            '#' if !words.started => {
                while chars.peek().is_some_and(|c| *c != '\n') {
                    chars.next();
                }
            }
            // `2>&1`: the `&` belongs to the redirection.
            '&' if words.word.ends_with('>') => words.push(c),
            '|' | ';' | '\n' | '&' => {
                words.end();
                while matches!(chars.peek(), Some('|' | '&')) {
                    chars.next();
                }
                if !words.done.is_empty() {
                    commands.push(std::mem::take(&mut words.done));
                }
            }
            c if c.is_whitespace() => words.end(),
            c => words.push(c),
        }
    }
    words.end();
    if !words.done.is_empty() {
        commands.push(words.done);
    }
    commands
}

/// The words of one simple command, as they are read.
#[derive(Default)]
struct Words {
    /// The words read so far.
    done: Vec<String>,
    /// The word being read.
    word: String,
    /// Whether `word` has begun (an empty quoted string is a word).
    started: bool,
    /// Whether the next word is a redirection's target, to be left out.
    skip_next: bool,
}

impl Words {
    fn push(&mut self, c: char) {
        self.word.push(c);
        self.started = true;
    }

    fn end(&mut self) {
        if !self.started {
            return;
        }
        let text = std::mem::take(&mut self.word);
        self.started = false;
        if self.skip_next {
            self.skip_next = false;
        } else if is_redirection(&text) {
            // `2>&1` and `>file` stand alone; `<<<`, `>`, `2>` take the next word.
            self.skip_next = text
                .trim_start_matches(char::is_numeric)
                .chars()
                .all(|c| c == '<' || c == '>');
        } else {
            self.done.push(text);
        }
    }
}

/// Whether an unquoted word is a redirection (`<`, `<<<`, `>`, `2>&1`, `>file`, ...).
fn is_redirection(word: &str) -> bool {
    word.trim_start_matches(char::is_numeric)
        .starts_with(['<', '>'])
}

/// The words that may stand before the command itself: a variable set for it, or a word that
/// runs the rest (`exec`, `env`, `time`, the justfile's `step`, a loop's `do`).
fn command_words(words: &[String]) -> &[String] {
    let prefixes = ["exec", "env", "time", "step", "do", "then", "else", "!"];
    let at = words
        .iter()
        .position(|word| {
            let assignment = word
                .split_once('=')
                .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(is_name_char));
            !assignment && !prefixes.contains(&word.as_str())
        })
        .unwrap_or(words.len());
    &words[at..]
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// One parameter of a recipe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name, as `{{name}}` uses it.
    pub name: String,
    /// Whether it takes every remaining argument (`*name`, `+name`).
    pub variadic: bool,
}

/// One recipe of the justfile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recipe {
    /// Its name.
    pub name: String,
    /// The line of its header.
    pub line: usize,
    /// Its parameters, in order.
    pub params: Vec<Param>,
    /// The comment above it, which `just --list` prints.
    pub description: String,
    /// The line of that comment (0 when there is none).
    pub description_line: usize,
    /// Its body's commands, each with the line it starts on (a line ending in `\` goes on).
    pub body: Vec<(usize, String)>,
}

/// The recipes of a justfile.
pub fn recipes(justfile: &str) -> Vec<Recipe> {
    let mut recipes: Vec<Recipe> = Vec::new();
    let mut description = (0, String::new());
    let mut in_body = false;
    for (index, line) in justfile.lines().enumerate() {
        let number = index + 1;
        if line.starts_with([' ', '\t']) {
            if !in_body || line.trim().is_empty() {
                continue;
            }
            let text = line.trim().trim_start_matches(['@', '-']);
            let recipe = recipes.last_mut().expect("a body follows a header");
            match recipe.body.last_mut() {
                Some((_, open)) if open.ends_with('\\') => {
                    open.push('\n');
                    open.push_str(text);
                }
                _ => recipe.body.push((number, text.to_string())),
            }
            continue;
        }
        in_body = false;
        if let Some(comment) = line.strip_prefix('#') {
            description = (number, comment.trim().to_string());
            continue;
        }
        if line.trim().is_empty() {
            description = (0, String::new());
            continue;
        }
        if line.starts_with('[') {
            continue;
        }
        if line.contains(":=") || line.starts_with("set ") || line.starts_with("import ") {
            description = (0, String::new());
            continue;
        }
        let Some((header, _dependencies)) = split_header(line) else {
            continue;
        };
        let mut words = header.split_whitespace();
        let Some(name) = words.next() else { continue };
        let params = words
            .map(|word| {
                let word = word.trim_start_matches('$');
                let variadic = word.starts_with(['*', '+']);
                let word = word.trim_start_matches(['*', '+', '$']);
                Param {
                    name: word.split('=').next().unwrap_or(word).to_string(),
                    variadic,
                }
            })
            .collect();
        let (description_line, description) = std::mem::take(&mut description);
        recipes.push(Recipe {
            name: name.to_string(),
            line: number,
            params,
            description,
            description_line,
            body: Vec::new(),
        });
        in_body = true;
    }
    recipes
}

/// A recipe header's name and parameters, and its dependencies: split at the first `:` that is
/// outside quotes.
fn split_header(line: &str) -> Option<(&str, &str)> {
    let mut quote = None;
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(open), c) if c == open => quote = None,
            (None, ':') => return Some((&line[..at], &line[at + 1..])),
            _ => {}
        }
    }
    None
}

/// A program run by one simple command, with its arguments; each argument says whether the
/// command's caller gave it (a recipe's parameter) or the command itself wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    /// The program run.
    pub program: Program,
    /// Its arguments in order, each with `true` when a recipe's caller gave it.
    pub args: Vec<(String, bool)>,
}

impl Invocation {
    /// The long flags it passes, those the caller gave (`true`) or those written in the
    /// command (`false`).
    pub fn flags(&self, from_caller: bool) -> Vec<String> {
        // A bare `--` ends what the program reads, whoever wrote it.
        let end = self
            .args
            .iter()
            .position(|(arg, _)| arg == "--")
            .unwrap_or(self.args.len());
        long_flags(
            self.args[..end]
                .iter()
                .filter(|(_, given)| *given == from_caller)
                .map(|(arg, _)| arg.as_str()),
        )
    }
}

/// What a simple command runs, read from its words: `cargo run [-p P] [--bin X | --example X]
/// [-- ARGS]`, or a path ending in `debug/NAME`, `release/NAME` or `examples/NAME` of a
/// program of `programs`, followed by its arguments. `Ok(None)` when it runs no program of the
/// workspace; an error when it names one that does not exist.
pub fn invocation(words: &[String], programs: &[Program]) -> Result<Option<Invocation>, String> {
    let words = command_words(words);
    if words.first().map(String::as_str) == Some("cargo") {
        return cargo_run(&words[1..], programs);
    }
    for (at, word) in words.iter().enumerate() {
        let mut parts = word.rsplit('/');
        let (Some(name), Some(folder)) = (parts.next(), parts.next()) else {
            continue;
        };
        let kind = match folder {
            "debug" | "release" => Kind::Bin,
            "examples" => Kind::Example,
            _ => continue,
        };
        if let Some(program) = programs
            .iter()
            .find(|program| program.kind == kind && program.name == name)
        {
            return Ok(Some(Invocation {
                program: program.clone(),
                args: words[at + 1..]
                    .iter()
                    .map(|arg| (arg.clone(), false))
                    .collect(),
            }));
        }
    }
    Ok(None)
}

/// A `cargo ...` command's program, when it is `cargo run`.
fn cargo_run(words: &[String], programs: &[Program]) -> Result<Option<Invocation>, String> {
    let mut words = words.iter().skip_while(|word| word.starts_with(['-', '+']));
    if words.next().map(String::as_str) != Some("run") {
        return Ok(None);
    }
    let (mut package, mut target) = (None, None);
    let mut args = Vec::new();
    while let Some(word) = words.next() {
        match word.as_str() {
            "--" => {
                args.extend(words.by_ref().map(|arg| (arg.clone(), false)));
            }
            "-p" | "--package" => package = words.next().cloned(),
            "--bin" => target = words.next().map(|name| (Kind::Bin, name.clone())),
            "--example" => target = words.next().map(|name| (Kind::Example, name.clone())),
            "--features" | "-F" | "--manifest-path" | "--target-dir" | "--profile" | "-j"
            | "--jobs" => {
                words.next();
            }
            _ => {}
        }
    }
    let candidates: Vec<&Program> = programs
        .iter()
        .filter(|program| package.as_ref().is_none_or(|name| &program.package == name))
        .filter(|program| match &target {
            Some((kind, name)) => program.kind == *kind && &program.name == name,
            None => program.kind == Kind::Bin,
        })
        .collect();
    let shown = || {
        let mut shown = String::from("cargo run");
        if let Some(package) = &package {
            shown.push_str(&format!(" -p {package}"));
        }
        if let Some((kind, name)) = &target {
            let kind = if *kind == Kind::Bin { "bin" } else { "example" };
            shown.push_str(&format!(" --{kind} {name}"));
        }
        shown
    };
    match candidates.as_slice() {
        [program] => Ok(Some(Invocation {
            program: (*program).clone(),
            args,
        })),
        [] => Err(format!("`{}` runs no program of the workspace", shown())),
        _ => Err(format!(
            "`{}` does not say which of {} programs it runs",
            shown(),
            candidates.len()
        )),
    }
}

/// The programs a recipe runs when called with `args`, each with the arguments it gets: a
/// body word that is exactly `{{param}}` becomes the value given for that parameter (every
/// remaining argument for a variadic one), marked as the caller's.
pub fn recipe_invocations(
    recipe: &Recipe,
    args: &[String],
    programs: &[Program],
) -> Result<Vec<(usize, Invocation)>, String> {
    let mut values: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut given = args.iter();
    for param in &recipe.params {
        let taken: Vec<String> = if param.variadic {
            given.by_ref().cloned().collect()
        } else {
            given.next().cloned().into_iter().collect()
        };
        values.insert(param.name.as_str(), taken);
    }
    let mut found = Vec::new();
    for (line, command) in &recipe.body {
        for words in simple_commands(command) {
            let Some(mut invocation) = invocation(&words, programs)
                .map_err(|problem| format!("justfile:{line}: {problem}"))?
            else {
                continue;
            };
            invocation.args = invocation
                .args
                .into_iter()
                .flat_map(|(arg, _)| {
                    let param = arg
                        .strip_prefix("{{")
                        .and_then(|rest| rest.strip_suffix("}}"))
                        .map(str::trim);
                    match param.and_then(|name| values.get(name)) {
                        Some(given) => given.iter().map(|value| (value.clone(), true)).collect(),
                        None => vec![(arg, false)],
                    }
                })
                .collect();
            found.push((*line, invocation));
        }
    }
    Ok(found)
}

/// Flags passed to a program somewhere in the docs or the justfile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passed {
    /// Where: `file:line`, and what is shown there.
    pub place: String,
    /// The program that gets them.
    pub program: Program,
    /// The long flags.
    pub flags: Vec<String>,
}

/// The flags a shown command (`$ ...` in a console block, at `place`) passes to the programs
/// of the workspace, directly or through a recipe; an error names a recipe or a program that
/// does not exist.
pub fn passed_by_command(
    place: &str,
    command: &str,
    recipes: &[Recipe],
    programs: &[Program],
) -> Result<Vec<Passed>, String> {
    let mut passed = Vec::new();
    for words in simple_commands(command) {
        let words = command_words(&words);
        if words.first().map(String::as_str) == Some("just") {
            // `just --list` and `just` alone run no recipe of ours.
            let Some(name) = words.get(1).filter(|word| !word.starts_with('-')) else {
                continue;
            };
            let recipe = recipes
                .iter()
                .find(|recipe| &recipe.name == name)
                .ok_or_else(|| format!("{place}: the justfile has no recipe `{name}`"))?;
            for (_, invocation) in recipe_invocations(recipe, &words[2..], programs)? {
                passed.push(Passed {
                    place: format!("{place}: `just {name}`"),
                    flags: invocation.flags(true),
                    program: invocation.program,
                });
            }
        } else if let Some(invocation) =
            invocation(words, programs).map_err(|problem| format!("{place}: {problem}"))?
        {
            passed.push(Passed {
                place: place.to_string(),
                flags: invocation.flags(false),
                program: invocation.program,
            });
        }
    }
    passed.retain(|passed| !passed.flags.is_empty());
    Ok(passed)
}

/// The flags the justfile itself passes: those written in its recipes' bodies, and those a
/// recipe's description names, for the programs that get the recipe's arguments (every
/// program it runs, when it takes none).
pub fn passed_by_justfile(recipes: &[Recipe], programs: &[Program]) -> Result<Vec<Passed>, String> {
    let mut passed = Vec::new();
    for recipe in recipes {
        // A marker for each parameter shows which programs receive the caller's arguments.
        let markers: Vec<String> = recipe.params.iter().map(|_| "argument".into()).collect();
        let invocations = recipe_invocations(recipe, &markers, programs)?;
        for (line, invocation) in &invocations {
            passed.push(Passed {
                place: format!("justfile:{line}: recipe `{}`", recipe.name),
                program: invocation.program.clone(),
                flags: invocation.flags(false),
            });
        }
        let described = flags_named_in(&recipe.description);
        let receiving: Vec<&Invocation> = invocations
            .iter()
            .map(|(_, invocation)| invocation)
            .filter(|invocation| invocation.args.iter().any(|(_, given)| *given))
            .collect();
        let receiving = if receiving.is_empty() {
            invocations
                .iter()
                .map(|(_, invocation)| invocation)
                .collect()
        } else {
            receiving
        };
        for invocation in receiving {
            passed.push(Passed {
                place: format!(
                    "justfile:{}: the description of `{}`",
                    recipe.description_line, recipe.name
                ),
                program: invocation.program.clone(),
                flags: described.clone(),
            });
        }
    }
    passed.retain(|passed| !passed.flags.is_empty());
    Ok(passed)
}
