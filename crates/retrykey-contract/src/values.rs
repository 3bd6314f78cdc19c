//! The value types against an oracle: what a key may contain, how long it may be, when two keys
//! or two requests are the same, and what a log line may show of a key.
//!
//! The oracle is the rule as written in the docs, coded apart from the types it judges: it
//! measures UTF-8 length from code points and names control characters by their Unicode ranges
//! (category Cc), without `str::len` or `char::is_control`. Each check draws arbitrary Unicode
//! (every scalar value, with control characters, multi-byte characters and lengths around the
//! limits drawn often) from a fixed seed, so every run tries the same inputs, and a failure
//! shrinks to the smallest input that still breaks.

use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use retrykey::{Error, KeyProblem, RequestProblem};

/// Inputs tried per check.
pub const CASES: u32 = 256;

const SEED: [u8; 32] = *b"retrykey lab: keys and requests.";

/// The longest key, in bytes, as the docs state it.
const KEY_BYTES: usize = 255;
/// The longest job name, in bytes, as the docs state it.
const JOB_BYTES: usize = 64;

/// Whether `c` is a control character: Unicode category Cc, U+0000..=U+001F and U+007F..=U+009F.
pub fn oracle_is_control(c: char) -> bool {
    matches!(u32::from(c), 0x00..=0x1F | 0x7F..=0x9F)
}

/// The length of `text` in UTF-8, counted from its code points.
pub fn oracle_utf8_len(text: &str) -> usize {
    text.chars()
        .map(|c| match u32::from(c) {
            0..0x80 => 1,
            0x80..0x800 => 2,
            0x800..0x1_0000 => 3,
            _ => 4,
        })
        .sum()
}

/// What the docs say of `text` as a key: accepted, or the first rule it breaks (empty, then
/// too long, then the first control character by its position in characters).
pub fn oracle_key(text: &str) -> Result<(), KeyProblem> {
    let bytes = oracle_utf8_len(text);
    if bytes == 0 {
        return Err(KeyProblem::Empty);
    }
    if bytes > KEY_BYTES {
        return Err(KeyProblem::TooLong { bytes });
    }
    match text.chars().position(oracle_is_control) {
        Some(at) => Err(KeyProblem::ControlCharacter { at }),
        None => Ok(()),
    }
}

/// What the docs say of a request: a job of 1 to 64 bytes without control characters, and a
/// positive number of units; the job is judged first.
pub fn oracle_request(job: &str, units: u64) -> Result<(), RequestProblem> {
    let bytes = oracle_utf8_len(job);
    if bytes == 0 {
        return Err(RequestProblem::EmptyJob);
    }
    if bytes > JOB_BYTES {
        return Err(RequestProblem::JobTooLong { bytes });
    }
    if job.chars().any(oracle_is_control) {
        return Err(RequestProblem::JobControlCharacter);
    }
    if units == 0 {
        return Err(RequestProblem::ZeroUnits);
    }
    Ok(())
}

/// Any character, with the ones the rules are about drawn often.
fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => any::<char>(),
        2 => proptest::char::range('a', 'z'),
        1 => proptest::char::range('\u{0}', '\u{1F}'),
        1 => proptest::char::range('\u{7F}', '\u{A0}'),
        1 => prop::sample::select(vec![' ', '\u{A0}', '\u{200B}', '\u{FEFF}', 'É', 'é', 'ß', '€']),
        1 => proptest::char::range('\u{1F600}', '\u{1F64F}'),
    ]
}

/// Arbitrary Unicode text of 0 to `max` characters.
fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(any_char(), 0..=max).prop_map(String::from_iter)
}

/// Text around `limit` bytes: a run of one character, `count` times, and a tail.
fn near(limit: usize) -> impl Strategy<Value = String> {
    let width = prop::sample::select(vec!['a', 'é', '€', '😀']);
    (width, 0..=limit / 2 + 2, text(3)).prop_map(move |(c, extra, tail)| {
        let count = (limit / c.len_utf8()).saturating_sub(extra / 4) + extra % 3;
        std::iter::repeat_n(c, count).collect::<String>() + &tail
    })
}

fn key_text() -> impl Strategy<Value = String> {
    prop_oneof![3 => text(12), 1 => text(300), 2 => near(KEY_BYTES)]
}

/// Runs `check` over `strategy`'s inputs from the fixed seed; panics with the smallest input
/// that breaks it.
fn for_all<S: Strategy>(strategy: S, check: impl Fn(S::Value) -> Result<(), String>)
where
    S::Value: fmt::Debug,
{
    let config = Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &SEED));
    if let Err(error) = runner.run(&strategy, |input| check(input).map_err(TestCaseError::fail)) {
        panic!("{error}");
    }
}

fn hash_of(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// A key is accepted exactly when the docs say so, and refused with the rule it breaks.
pub fn key_grammar_matches_the_oracle<K: fmt::Debug>(new: fn(String) -> Result<K, Error>) {
    for_all(key_text(), |text| {
        let got = new(text.clone()).map(|_| ());
        let expected = oracle_key(&text).map_err(Error::InvalidKey);
        if got == expected {
            Ok(())
        } else {
            Err(format!(
                "key {text:?} ({} bytes): got {got:?}, the rules say {expected:?}",
                oracle_utf8_len(&text)
            ))
        }
    });
}

/// An accepted key keeps the client's text exactly: no trimming, no case folding, no
/// normalisation, in `as_str` and in `Display`.
pub fn keys_keep_their_text<K: fmt::Display>(
    new: fn(String) -> Result<K, Error>,
    as_str: fn(&K) -> &str,
) {
    for_all(key_text(), |text| {
        let Ok(key) = new(text.clone()) else {
            return Ok(());
        };
        if as_str(&key) != text || key.to_string() != text {
            return Err(format!(
                "key {text:?} came back as {:?} (Display {:?})",
                as_str(&key),
                key.to_string()
            ));
        }
        Ok(())
    });
}

/// A change that makes a text almost the same: another case, a space before or after, another
/// normal form, reversed, or none at all (so that some pairs are truly equal).
fn near_text() -> impl Strategy<Value = fn(&str) -> String> {
    prop::sample::select(vec![
        |t: &str| t.to_uppercase(),
        |t: &str| t.to_lowercase(),
        |t: &str| format!("{t} "),
        |t: &str| format!(" {t}"),
        |t: &str| t.replace('é', "e\u{301}"),
        |t: &str| t.chars().rev().collect(),
        |t: &str| t.to_string(),
    ] as Vec<fn(&str) -> String>)
}

/// Two keys are the same key exactly when their texts are equal, byte for byte; equal keys hash
/// alike. Near misses (another case, a space, another normal form) are other keys.
pub fn keys_are_equal_only_when_their_text_is<K: Eq + Hash + fmt::Debug>(
    new: fn(String) -> Result<K, Error>,
) {
    let near_miss = near_text();
    let pairs = (key_text(), near_miss, key_text()).prop_map(|(a, change, other)| {
        let b = if other.len() % 2 == 0 {
            change(&a)
        } else {
            other
        };
        (a, b)
    });
    for_all(pairs, |(a, b)| {
        let (Ok(x), Ok(y)) = (new(a.clone()), new(b.clone())) else {
            return Ok(());
        };
        if (x == y) != (a == b) {
            return Err(format!("keys {a:?} and {b:?}: equal is {}", x == y));
        }
        if x == y && hash_of(&x) != hash_of(&y) {
            return Err(format!("equal keys {a:?} hash differently"));
        }
        Ok(())
    });
}

/// A key's `Debug`, what a log line shows of it by accident, is `Key(<N bytes>)`: its length and
/// nothing of its text.
pub fn debug_shows_only_the_length<K: fmt::Debug>(new: fn(String) -> Result<K, Error>) {
    for_all(key_text(), |text| {
        let Ok(key) = new(text.clone()) else {
            return Ok(());
        };
        let shown = format!("{key:?}");
        let expected = format!("Key(<{} bytes>)", oracle_utf8_len(&text));
        if shown == expected {
            Ok(())
        } else {
            Err(format!(
                "key {text:?} is logged as {shown:?}, not {expected:?}"
            ))
        }
    });
}

/// A request is accepted exactly when the docs say so, keeps its job and units, and two
/// requests are equal exactly when both job and units are.
pub fn requests_match_the_oracle<R: Eq + Hash + fmt::Debug>(
    new: fn(String, u64) -> Result<R, Error>,
    parts: fn(&R) -> (&str, u64),
) {
    let units = prop_oneof![Just(0u64), Just(1), Just(u64::MAX), any::<u64>(), 1..10u64];
    let jobs = prop_oneof![3 => text(10), 1 => text(80), 2 => near(JOB_BYTES)];
    let requests = (jobs.clone(), units.clone(), jobs, units, any::<bool>());
    for_all(
        requests,
        |(job, count, other_job, other_count, same_job)| {
            let got = new(job.clone(), count);
            let expected = oracle_request(&job, count).map_err(Error::InvalidRequest);
            if got.as_ref().map(|_| ()) != expected.as_ref().copied() {
                return Err(format!(
                    "request ({job:?}, {count}): got {got:?}, the rules say {expected:?}"
                ));
            }
            let Ok(first) = got else { return Ok(()) };
            if parts(&first) != (job.as_str(), count) {
                return Err(format!("request ({job:?}, {count}) came back as {first:?}"));
            }
            let other_job = if same_job { job.clone() } else { other_job };
            let Ok(second) = new(other_job.clone(), other_count) else {
                return Ok(());
            };
            let same = job == other_job && count == other_count;
            if (first == second) != same || (same && hash_of(&first) != hash_of(&second)) {
                return Err(format!(
                    "requests ({job:?}, {count}) and ({other_job:?}, {other_count}): equal is {}",
                    first == second
                ));
            }
            Ok(())
        },
    );
}

/// Two requests are the same request exactly when their jobs are equal byte for byte and their
/// units are equal; equal requests hash alike. Near misses (another case, a space, another
/// normal form, units equal only modulo a power of two) are other requests.
pub fn requests_are_equal_only_when_job_and_units_are<R: Eq + Hash + fmt::Debug>(
    new: fn(String, u64) -> Result<R, Error>,
) {
    let near_job = near_text();
    let near_units = prop::sample::select(vec![
        |n: u64| n,
        |n: u64| n.wrapping_add(1),
        |n: u64| n.wrapping_add(1 << 8),
        |n: u64| n.wrapping_add(1 << 16),
        |n: u64| n.wrapping_add(1 << 32),
        |n: u64| n ^ (1 << 63),
    ] as Vec<fn(u64) -> u64>);
    let jobs = prop_oneof![3 => text(10), 2 => near(JOB_BYTES)];
    let pairs = (jobs, 1..u64::MAX / 2, near_job, near_units).prop_map(
        |(job, units, change_job, change_units)| {
            (
                (job.clone(), units),
                (change_job(&job), change_units(units)),
            )
        },
    );
    for_all(pairs, |((job, units), (other_job, other_units))| {
        let (Ok(x), Ok(y)) = (new(job.clone(), units), new(other_job.clone(), other_units)) else {
            return Ok(());
        };
        let same = job.as_bytes() == other_job.as_bytes() && units == other_units;
        if (x == y) != same {
            return Err(format!(
                "requests ({job:?}, {units}) and ({other_job:?}, {other_units}): equal is {}",
                x == y
            ));
        }
        if x == y && hash_of(&x) != hash_of(&y) {
            return Err(format!(
                "equal requests ({job:?}, {units}) hash differently"
            ));
        }
        Ok(())
    });
}
