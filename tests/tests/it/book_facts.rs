//! Figures the book states in prose, held to the code they describe: each fact is the sentence
//! fragment the page must contain, written from the constant, so a changed constant fails here
//! until the page says the new figure.

use retrykey::{MAX_JOB_BYTES, MAX_KEY_BYTES};
use retrykey_client::{
    DEFAULT_BUDGET, DEFAULT_MAX_ATTEMPTS, DEFAULT_QUOTA_CAPACITY, DEFAULT_RETRY_COST,
    DEFAULT_SUCCESS_REFUND, DEFAULT_TIMEOUT_COST,
};
use retrykey_conform::profile::{DEFAULT_GRACE_MS, MAX_EXPIRY_MS, Scale};
use retrykey_conform::{CHECKS, MAX_WITNESS, PAYMENTS_PROFILE, Profile, chaos};
use retrykey_contract::model::CASES;
use retrykey_foreign::{FOREIGN_KEY_PREFIX, ProviderCall, foreign_key};
use retrykey_http::{DEFAULT_WAIT, MemoryEntries};
use retrykey_outbox::dispatcher::{BUSY_POLL_SHARE, MIN_BUSY_POLL};
use retrykey_replicas::Lease;
use retrykey_replicas::pg::SWEEP_EVERY;
use retrykey_tests::conformed::{GRACE, LOOKUP_DELAY, MAX_ENTRIES, RETENTION, WAIT};

/// The page under `docs/src/`, and the fragments it must contain.
fn facts() -> Vec<(&'static str, Vec<String>)> {
    vec![
        (
            "ch02-breaking-it.md",
            vec![format!("the {CASES} random sequences")],
        ),
        (
            "ch03-retries.md",
            vec![
                format!(
                    "a retry costs {DEFAULT_RETRY_COST} tokens, a retry after a timeout \
                     {DEFAULT_TIMEOUT_COST}"
                ),
                format!("success gives {DEFAULT_SUCCESS_REFUND} back"),
                format!("The bucket holds {DEFAULT_QUOTA_CAPACITY}"),
                format!(
                    "at most {} retries",
                    DEFAULT_QUOTA_CAPACITY / DEFAULT_RETRY_COST
                ),
            ],
        ),
        ("conformance-kit.md", kit_facts()),
        ("ch09-foreign.md", foreign_facts()),
        (
            "appendix-performance.md",
            vec![
                format!("its grace of {} second", word(DEFAULT_GRACE_MS / 1000)),
                format!(
                    "the served store's expiry and grace ({} s)",
                    (RETENTION + GRACE).as_secs_f64()
                ),
                format!(
                    "{} claim in {} sweeps a few expired records",
                    capital(word(1)),
                    word(SWEEP_EVERY)
                ),
            ],
        ),
        (
            "appendix-operating.md",
            vec![format!(
                "counted as {} bytes",
                thousands(MemoryEntries::ENTRY_OVERHEAD as u64)
            )],
        ),
        (
            "ch06-replicas.md",
            vec![
                format!(
                    "waits at most {} seconds (the layer's default deadline)",
                    DEFAULT_WAIT.as_secs()
                ),
                format!(
                    "the layer's {}-second wait deadline",
                    DEFAULT_WAIT.as_secs()
                ),
            ],
        ),
        (
            "take-it-home.md",
            vec![
                format!(
                    "once its lease lapses ({} s by default)",
                    Lease::default().duration.as_secs()
                ),
                format!(
                    "default budget ({} s, {} attempts)",
                    DEFAULT_BUDGET.as_secs(),
                    word(u64::from(DEFAULT_MAX_ATTEMPTS))
                ),
            ],
        ),
        (
            "ch07-outbox.md",
            vec![
                format!(
                    "after `--poll` / {BUSY_POLL_SHARE}, at least {} ms",
                    MIN_BUSY_POLL.as_millis()
                ),
                format!(
                    "The checks refuse the {} wrong deliveries kept in `tests/blanks/dispatch-once/`",
                    word(wrong_solutions_of("dispatch-once"))
                ),
            ],
        ),
        (
            "ch01-lost-reply.md",
            vec![
                format!("a key over {MAX_KEY_BYTES} bytes or one with control characters"),
                format!("a job over {MAX_JOB_BYTES} bytes or with a control character"),
                format!(
                    "runs the piece's {} checks one at a time",
                    spec_of("store-apply").len()
                ),
                format!(
                    "{} of its {} checks compare your key",
                    capital(word(key_checks(&spec_of("key-rules")))),
                    word(spec_of("key-rules").len() as u64)
                ),
            ],
        ),
        (
            "ch04-http.md",
            vec![format!("and breaks it {} ways", word(variants_of_stage(4)))],
        ),
        (
            "ch06-replicas.md",
            vec![format!(
                "{} wrong claims are kept in `tests/blanks/fenced-claim/`",
                capital(word(wrong_solutions_of("fenced-claim")))
            )],
        ),
    ]
}

/// How many variants declare `stage`.
fn variants_of_stage(stage: u32) -> u64 {
    let variants = retrykey_tests::variants().expect("the variants are declared");
    variants.iter().filter(|(_, d)| d.stage == stage).count() as u64
}

/// The checks of the piece `name`'s spec, in order.
fn spec_of(name: &str) -> Vec<String> {
    let root = retrykey_tests::workspace_root();
    let piece = retrykey_tests::exercise::blank::piece(&root, name).expect("the piece is declared");
    piece.spec.into_iter().map(|spec| spec.check).collect()
}

/// The checks of `spec` that test the student's key, not the core's `Request`.
fn key_checks(spec: &[String]) -> u64 {
    spec.iter()
        .filter(|check| !check.contains("request"))
        .count() as u64
}

/// How many wrong solutions the piece `name` keeps.
fn wrong_solutions_of(name: &str) -> u64 {
    let root = retrykey_tests::workspace_root();
    let piece = retrykey_tests::exercise::blank::piece(&root, name).expect("the piece is declared");
    retrykey_tests::exercise::blank::wrong_solutions(&root, &piece)
        .expect("its wrong solutions read")
        .len() as u64
}

/// The conformance kit's page: its counts of checks, its limits, the lab's profile's expiry and
/// the harness that serves the variants.
fn kit_facts() -> Vec<String> {
    let checks = CHECKS.len() as u64;
    let lab = Profile::parse(PAYMENTS_PROFILE).expect("the lab's profile");
    let expiry = lab
        .expiry
        .as_ref()
        .expect("the lab's profile declares an expiry");
    let bare =
        Profile::parse("[request]\npath = \"/\"\nbody = \"{n}\"\n").expect("a minimal profile");
    let runs_bare = CHECKS
        .iter()
        .filter(|c| (c.skipped)(&bare).is_none())
        .count() as u64;
    let orders = include_str!("../../../crates/retrykey-conform/profiles/orders-example.toml");
    let orders = Profile::parse(orders).expect("the orders example");
    let skipped = CHECKS
        .iter()
        .filter(|c| (c.skipped)(&orders).is_some())
        .count() as u64;
    let burst = retrykey_tests::conformed::profile()
        .burst
        .expect("a burst")
        .keys;
    let duplicates = Scale::default().duplicates as u64;
    vec![
        format!("{} checks, one function per promise", word(checks)),
        format!("runs the same {} checks", word(checks)),
        format!("the breach names, at most {}.", word(MAX_WITNESS as u64)),
        format!(
            "for {} seconds (`--require-key --retention {}s`)",
            word(expiry.after_ms / 1000),
            expiry.after_ms / 1000
        ),
        format!(
            "about {} seconds: it retries three quarters into the {}-second expiry, then waits out \
             the expiry and {} second of grace",
            word((expiry.after_ms + expiry.grace_ms) / 1000),
            word(expiry.after_ms / 1000),
            word(expiry.grace_ms / 1000)
        ),
        format!(
            "its store holds {MAX_ENTRIES} keys, so the burst grows to {burst}; it keeps them {} s; \
             each lookup takes {} ms",
            RETENTION.as_secs(),
            LOOKUP_DELAY.as_millis()
        ),
        format!("a duplicate waits at most {} s", WAIT.as_secs()),
        format!("`a run of size 1, shrunk from {duplicates}`"),
        format!("shrunk from {} duplicates to one", word(duplicates)),
        format!("{} checks need only `[request]`", capital(word(runs_bare))),
        format!("Each of the other {} needs", word(checks - runs_bare)),
        format!("at most {} seconds together", word(MAX_EXPIRY_MS / 1000)),
        format!(
            "`expiry.grace_ms` ({} second unless stated)",
            word(DEFAULT_GRACE_MS / 1000)
        ),
        format!("{} checks cannot run against it", capital(word(skipped))),
        format!(
            "{} in ten sent as two copies at once",
            word(chaos::COPIES_IN_TEN)
        ),
        format!("at most {} times", word(u64::from(chaos::MAX_ATTEMPTS))),
        format!(
            "after the server gave it ({} in ten), resets the connection before the server sees \
             the request ({} in ten), or holds it back up to {} ms ({} in ten)",
            word(chaos::FAULTS_IN_TEN[0]),
            word(chaos::FAULTS_IN_TEN[1]),
            chaos::MAX_DELAY_MS,
            word(chaos::FAULTS_IN_TEN[2])
        ),
        format!(
            "within {} runs and {} seconds",
            word(chaos::SHRINK_RUNS as u64),
            word(chaos::SHRINK_TIME.as_secs())
        ),
        format!("the other {} checks would run", word(checks - skipped)),
    ]
}

/// Chapter 9's provider call and derived key, from the checkout's own policy and key.
fn foreign_facts() -> Vec<String> {
    let policy = ProviderCall::to("http://127.0.0.1:9").policy;
    let timeout = policy
        .attempt_timeout()
        .expect("the call bounds each attempt");
    let operation = retrykey_http::EntryId::new(
        &retrykey_http::Scope::Anonymous,
        &retrykey_http::IdempotencyKey::parse(b"cart-1").expect("a valid key"),
    );
    let digits = foreign_key(&operation, "charge").as_str().len() - FOREIGN_KEY_PREFIX.len();
    vec![
        format!(
            "{} attempts within {} seconds, each at most {}",
            word(u64::from(policy.max_attempts())),
            word(policy.budget().as_secs()),
            word(timeout.as_secs())
        ),
        format!("cut to {digits} hex digits behind the prefix `{FOREIGN_KEY_PREFIX}`"),
    ]
}

/// Seeds per scenario that `just simulate-ci`, CI's budget, runs: read from its recipe.
fn simulate_ci_seeds() -> std::collections::BTreeMap<String, u64> {
    let justfile = std::fs::read_to_string(retrykey_tests::workspace_root().join("justfile"))
        .expect("the justfile reads");
    let recipe = justfile
        .split("\nsimulate-ci:\n")
        .nth(1)
        .expect("a simulate-ci recipe");
    let mut seeds = std::collections::BTreeMap::new();
    for line in recipe.lines().take_while(|line| line.starts_with("    ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let after = |flag: &str| {
            let at = words.iter().position(|word| *word == flag)?;
            words.get(at + 1).copied()
        };
        let scenario = after("--scenario").unwrap_or("lost-reply");
        let count = after("--seeds").and_then(|n| n.parse().ok());
        seeds.insert(
            scenario.to_owned(),
            count.expect("each run names its seeds"),
        );
    }
    seeds
}

/// Chapters 8 and 9 on CI's simulator budget, from the recipe.
fn simulate_ci_facts() -> Vec<(&'static str, Vec<String>)> {
    let seeds = simulate_ci_seeds();
    let of = |scenario: &str| thousands(seeds[scenario]);
    vec![
        (
            "ch08-simulation.md",
            vec![format!(
                "runs {} seeds of lost-reply, {} of `restart-surviving`, and {} of `foreign`",
                of("lost-reply"),
                of("restart-surviving"),
                of("foreign")
            )],
        ),
        (
            "ch09-foreign.md",
            vec![format!(
                "`just simulate-ci` runs {} of them in CI",
                of("foreign")
            )],
        ),
    ]
}

/// A count as the book writes it in prose.
fn word(n: u64) -> &'static str {
    const WORDS: [&str; 41] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "twenty-one",
        "twenty-two",
        "twenty-three",
        "twenty-four",
        "twenty-five",
        "twenty-six",
        "twenty-seven",
        "twenty-eight",
        "twenty-nine",
        "thirty",
        "thirty-one",
        "thirty-two",
        "thirty-three",
        "thirty-four",
        "thirty-five",
        "thirty-six",
        "thirty-seven",
        "thirty-eight",
        "thirty-nine",
        "forty",
    ];
    WORDS.get(n as usize).copied().unwrap_or("many")
}

/// A figure as the book writes it: thousands set apart with commas.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `word` at the start of a sentence.
fn capital(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// Lines joined with single spaces, so that a fragment may wrap across lines of the page.
fn flowing(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn figures_in_prose_match_the_code() {
    let docs = retrykey_tests::workspace_root().join("docs/src");
    let mut wrong = Vec::new();
    for (page, fragments) in facts().into_iter().chain(simulate_ci_facts()) {
        let text = std::fs::read_to_string(docs.join(page)).expect("the page reads");
        let text = flowing(&text);
        wrong.extend(
            (fragments.iter())
                .filter(|fragment| !text.contains(fragment.as_str()))
                .map(|fragment| format!("docs/src/{page}: does not say {fragment:?}")),
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// The performance appendix is a reference: every section states the date of the run its figures
// come from and the command that reproduces them.
#[test]
fn every_appendix_figure_names_its_run_and_its_command() {
    let page = retrykey_tests::workspace_root().join("docs/src/appendix-performance.md");
    let text = std::fs::read_to_string(page).expect("the appendix reads");
    let mut missing = Vec::new();
    for section in text.split("\n## ").skip(1) {
        let heading = section.lines().next().unwrap_or_default();
        let dated = section.lines().any(|line| {
            line.strip_prefix("*The run of ")
                .and_then(|rest| rest.strip_suffix(".*"))
                .is_some_and(|date| {
                    date.len() == 10
                        && date.char_indices().all(|(at, c)| match at {
                            4 | 7 => c == '-',
                            _ => c.is_ascii_digit(),
                        })
                })
        });
        let commanded = section.contains("`just ") || section.contains("`cargo ");
        if !dated || !commanded {
            missing.push(format!("{heading}: dated {dated}, command {commanded}"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
