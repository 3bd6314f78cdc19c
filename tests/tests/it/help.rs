//! Every program of the workspace answers `--help` and `-h` with its usage, and every flag the
//! book's commands and the justfile pass to a program is in that program's help.
//!
//! The programs come from cargo's list of the workspace's targets, so a new binary or example
//! is checked without a change here; how commands are read is in `retrykey_tests::help`.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::OnceLock;

use retrykey_tests::help::{
    Answer, Kind, Program, ask, build, lists, missing, passed_by_command, passed_by_justfile,
    programs, prose_commands, recipes, simple_commands, subcommands,
};
use retrykey_tests::walkthrough::{documents, read_document};
use retrykey_tests::{read, workspace_root};

/// What one program answered to `--help`, to `-h`, and to `SUBCOMMAND --help` for each
/// subcommand its help lists.
struct Answers {
    help: Answer,
    h: Answer,
    subcommands: Vec<(String, Answer)>,
}

impl Answers {
    /// Its whole help: its own and its subcommands', one after the other.
    fn text(&self) -> String {
        let mut text = self.help.stdout.clone();
        for (_, answer) in &self.subcommands {
            text.push_str(&answer.stdout);
        }
        text
    }
}

/// Every program of the workspace, as cargo lists them.
fn all_programs() -> &'static [Program] {
    static PROGRAMS: OnceLock<Vec<Program>> = OnceLock::new();
    PROGRAMS
        .get_or_init(|| programs(&workspace_root()).expect("cargo lists the workspace's programs"))
}

/// Whether this run checks the programs of the members a plain `cargo test` does not build
/// (the benches, the variants): with `RETRYKEY_DOCS_SLOW=1`, as `just docs-check` and CI run.
fn with_other_members() -> bool {
    std::env::var("RETRYKEY_DOCS_SLOW").is_ok_and(|v| v == "1")
}

/// The programs this run leaves unchecked, by package, said on stderr: a skip is never a pass.
fn report_skipped(what: &str) {
    let mut skipped: BTreeMap<&str, usize> = BTreeMap::new();
    for program in all_programs() {
        if !program.default_member && !with_other_members() {
            *skipped.entry(&program.package).or_default() += 1;
        }
    }
    if !skipped.is_empty() {
        let by_package: Vec<String> = (skipped.iter())
            .map(|(package, count)| format!("{package} ({count})"))
            .collect();
        // Straight to stderr: the test harness hides `eprintln!` output of passing tests.
        let _ = writeln!(
            std::io::stderr(),
            "help, {what}: {} programs of members outside a plain `cargo test` skipped, not \
             checked (RETRYKEY_DOCS_SLOW=1 or `just docs-check` checks them): {}",
            skipped.values().sum::<usize>(),
            by_package.join(", ")
        );
    }
}

/// The programs this run checks with their answers, built and asked once for this module's
/// tests. Each is asked right after the build, before another build can replace it.
fn answers() -> &'static BTreeMap<Program, Answers> {
    static ANSWERS: OnceLock<BTreeMap<Program, Answers>> = OnceLock::new();
    ANSWERS.get_or_init(|| {
        let root = workspace_root();
        let programs: Vec<Program> = (all_programs().iter())
            .filter(|program| program.default_member || with_other_members())
            .cloned()
            .collect();
        let built = build(&root, &programs).expect("every program builds");
        let ask = |path, args: &[&str]| ask(&root, path, args).expect("the program runs");
        built
            .iter()
            .map(|(program, path)| {
                let help = ask(path, &["--help"]);
                let subcommands = subcommands(&help.stdout)
                    .into_iter()
                    .map(|command| {
                        let answer = ask(path, &[&command, "--help"]);
                        (command, answer)
                    })
                    .collect();
                let h = ask(path, &["-h"]);
                let answers = Answers {
                    help,
                    h,
                    subcommands,
                };
                (program.clone(), answers)
            })
            .collect()
    })
}

// Each binary and example prints a usage on stdout and exits 0, whether asked by --help or -h
// (and so does each subcommand by --help).
#[test]
fn every_program_answers_help_with_its_usage() {
    let answers = answers();
    // The simulator is the program that once refused --help: it must be among those found.
    assert!(
        answers
            .keys()
            .any(|program| program.kind == Kind::Bin && program.name == "simulate"),
        "cargo's list lacks the simulator: {:?}",
        answers.keys().collect::<Vec<_>>()
    );
    let mut failures = Vec::new();
    for (program, answers) in answers {
        let mut asked = vec![
            ("--help".to_string(), &answers.help),
            ("-h".to_string(), &answers.h),
        ];
        for (command, answer) in &answers.subcommands {
            asked.push((format!("{command} --help"), answer));
        }
        for (args, answer) in asked {
            let usage = answer.stdout.to_lowercase().contains("usage:");
            if answer.status != Some(0) || !usage {
                failures.push(format!(
                    "{program} -- {args}: exit {:?}, {}; stderr: {}",
                    answer.status,
                    if usage {
                        "a usage"
                    } else {
                        "no usage on stdout"
                    },
                    answer.stderr.lines().next().unwrap_or("")
                ));
            }
        }
    }
    report_skipped("usage");
    assert!(
        failures.is_empty(),
        "{} answers of {} programs are not a usage:\n{}",
        failures.len(),
        answers.len(),
        failures.join("\n")
    );
}

// Each flag that a console block's command, a command in a page's prose or a recipe passes to
// a program is in its help.
#[test]
fn every_flag_the_book_and_the_justfile_pass_is_in_the_programs_help() {
    let root = workspace_root();
    let answers = answers();
    let programs = all_programs();
    let recipes = recipes(&read(root.join("justfile")).expect("the justfile is readable"));
    let mut problems = Vec::new();
    let mut passed = passed_by_justfile(&recipes, programs).unwrap_or_else(|problem| {
        problems.push(problem);
        Vec::new()
    });
    for file in documents().expect("docs are readable") {
        let page = read_document(&file).expect("the walkthrough reads every page");
        let shown = page
            .shown
            .into_iter()
            .map(|shown| (shown.line, shown.command));
        let text = read(root.join(&file)).expect("the page is readable");
        for (line, command) in shown.chain(prose_commands(&text)) {
            let place = format!("{}:{line}", file.display());
            match passed_by_command(&place, &command, &recipes, programs) {
                Ok(found) => passed.extend(found),
                Err(problem) => problems.push(problem),
            }
        }
    }
    let mut unchecked = 0;
    for item in &passed {
        let Some(answer) = answers.get(&item.program) else {
            unchecked += 1;
            continue;
        };
        for flag in missing(&answer.text(), &item.flags) {
            problems.push(format!(
                "{}: passes {flag} to {}, whose --help does not list it",
                item.place, item.program
            ));
        }
    }
    if unchecked > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "help: {unchecked} commands pass flags to programs this run does not build; their \
             flags are not checked"
        );
    }
    report_skipped("flags");
    assert!(
        problems.is_empty(),
        "{} problems among the {} commands that pass flags:\n{}",
        problems.len(),
        passed.len(),
        problems.join("\n")
    );
}

// The check finds a flag in a help only as a whole flag, and refuses one the help lacks.
#[test]
fn the_flag_check_refuses_a_flag_absent_from_the_help() {
    let help = "usage: simulate [--seeds N] [--trace]\n\n  --seeds N   how many seeds\n  \
                --trace     print the timeline\n  -h, --help  print this help\n";
    let flags: Vec<String> = ["--seeds", "--from", "--seed", "--help", "--trace", "--trac"]
        .map(String::from)
        .to_vec();
    assert_eq!(missing(help, &flags), ["--from", "--seed", "--trac"]);
    assert!(lists("[--key=KEY]", "--key"));
    assert!(!lists("--no-trace", "--trace"));
}

// A recipe hands its caller's arguments to the program that gets `{{args}}`; its own flags
// and the ones its description names are checked too.
#[test]
fn a_recipe_passes_its_callers_flags_to_the_program_it_runs() {
    let programs = [
        program("sims", Kind::Bin, "simulate"),
        program("loads", Kind::Bin, "flood"),
        program("loads", Kind::Bin, "payments"),
        program("client", Kind::Example, "lost-reply-tcp"),
    ];
    let justfile = "\
set shell := [\"bash\", \"-c\"]

# Run seeds (`--seeds N`, `--jobs N`).
[no-exit-message]
simulate *args:
    @cargo run -q --release -p sims --bin simulate -- --quiet {{args}}

# The flood.
flood *args:
    cargo build -q --release -p loads --bin flood
    target/release/flood --payments target/release/payments {{args}}
";
    let recipes = recipes(justfile);
    assert_eq!(recipes.len(), 2);
    let shown = "RUST_LOG=x just simulate --from 5 --seeds=9 \\\n    | grep --count FAILED";
    let passed = passed_by_command("ch.md:3", shown, &recipes, &programs).unwrap();
    assert_eq!(passed.len(), 1);
    assert_eq!(passed[0].program.name, "simulate");
    assert_eq!(passed[0].flags, ["--from", "--seeds"]);

    let own = passed_by_justfile(&recipes, &programs).unwrap();
    let found: Vec<(&str, &str, Vec<&str>)> = own
        .iter()
        .map(|item| {
            let flags = item.flags.iter().map(String::as_str).collect();
            (item.place.as_str(), item.program.name.as_str(), flags)
        })
        .collect();
    assert_eq!(
        found,
        [
            ("justfile:6: recipe `simulate`", "simulate", vec!["--quiet"]),
            (
                "justfile:3: the description of `simulate`",
                "simulate",
                vec!["--seeds", "--jobs"]
            ),
            ("justfile:11: recipe `flood`", "flood", vec!["--payments"]),
        ]
    );

    let cargo = "FAILPOINTS=a=return cargo run -p client --example lost-reply-tcp -- \
                 --fresh-key -- --not-its-own <<< 'in --quotes' 2>&1";
    let passed = passed_by_command("ch.md:9", cargo, &recipes, &programs).unwrap();
    assert_eq!(passed[0].program, programs[3]);
    assert_eq!(passed[0].flags, ["--fresh-key"]);

    // A recipe or a program that does not exist is an error, never a command skipped.
    assert!(passed_by_command("ch.md:1", "just simulat --seeds 1", &recipes, &programs).is_err());
    let unknown = "cargo run -p sims --bin simulator -- --seeds 1";
    assert!(passed_by_command("ch.md:1", unknown, &recipes, &programs).is_err());
}

// The shell's words: quotes removed, redirections left out, lines joined, commands split.
#[test]
fn commands_are_split_into_words_as_the_shell_reads_them() {
    let words = simple_commands("a \"b c\" 'd' 2>&1 >out && e <<< \"f g\" # h\ni \\\n  j; k | l");
    assert_eq!(
        words,
        [
            vec!["a", "b c", "d"],
            vec!["e"],
            vec!["i", "j"],
            vec!["k"],
            vec!["l"]
        ]
    );
}

// The prose's commands are its inline code that runs just or cargo run, outside fenced blocks.
#[test]
fn a_page_s_prose_commands_are_its_inline_just_and_cargo_run() {
    let page = "Run `just progress [--watch]` or ``just simulate --seed 3 `x` ``.\n\
                ```console\n$ just simulate --seeds 1\n`just inside --a-fence`\n```\n\
                Then `cargo run -p retrykey -- --units 7`, not `cargo test --x` nor `--y`.\n";
    assert_eq!(
        prose_commands(page),
        [
            (1, "just progress [--watch]".to_string()),
            (1, "just simulate --seed 3 `x`".to_string()),
            (6, "cargo run -p retrykey -- --units 7".to_string()),
        ]
    );
    let programs = [program("retrykey-tests", Kind::Bin, "progress")];
    let recipes =
        recipes("progress *args:\n    cargo run -p retrykey-tests --bin progress -- {{args}}\n");
    let passed = passed_by_command("p.md:1", "just progress [--watch]", &recipes, &programs);
    assert_eq!(passed.unwrap()[0].flags, ["--watch"]);
}

// A clap help's subcommands are read, so their flags are found in their own help.
#[test]
fn a_clap_help_names_its_subcommands() {
    let help = "Usage: documents [OPTIONS] <COMMAND>\n\nCommands:\n  accept  Accept one job\n    \
                that wraps\n  events  Every event\n  help    Print this message\n\nOptions:\n  \
                --db <DB>  Where\n";
    assert_eq!(subcommands(help), ["accept", "events"]);
}

fn program(package: &str, kind: Kind, name: &str) -> Program {
    Program {
        package: package.to_string(),
        kind,
        name: name.to_string(),
        default_member: true,
    }
}
