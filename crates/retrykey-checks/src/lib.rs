//! The scaffold every checks crate shares: a table of named checks, run in this process by
//! [`failing_checks`], or turned into `#[test]`s by [`tests!`].
//!
//! A checks crate (`retrykey-contract`, `retrykey-client-checks`, `retrykey-http-checks`,
//! `retrykey-durable-checks`, `retrykey-replicas-checks`, `retrykey-outbox-checks`) owns its
//! vocabulary: which checks exist, in which order, what each one is given. This crate owns only
//! what they all do the same way: how a check is named (`<module>::<check>`, as `cargo test`
//! prints it), how the `#[test]`s are laid out, and how a run in this process tells a failing
//! check from a passing one (it panics).
//!
//! # Reading order
//!
//! 1. [`failing_checks`] and [`run_check`]: a check fails when it panics.
//! 2. [`table!`]: the named table a crate's `failing_checks` runs.
//! 3. [`tests!`]: the module of `#[test]`s a crate's suite macro expands to.
//! 4. The pattern below, which every checks crate follows.
//!
//! # The pattern
//!
//! Each checks crate writes its check names once, in a hidden macro `__with_<kind>_checks!`
//! that hands them to a second one, `__<kind>_checks!`, with a mode: `table` (expanded by the
//! crate's own `CHECKS` or `checks()` and read by its `failing_checks`) or `tests` (expanded by
//! its public suite macro, `http_suite!` and the others). Both modes name the same module, so a
//! check has the same name in a `cargo test` listing and in `failing_checks`.
//!
//! This crate could instead hold one macro that writes each crate's suite macro for it. It does
//! not, because a macro that defines a macro is hard to read: the inner macro's `$` must be
//! passed in as an argument (`$$` is not stable Rust), `$crate` in the generator names this
//! crate rather than the checks crate, and a generated `#[macro_export]` macro cannot be named
//! by a `$crate::` path in the crate that made it. Two small macros and one repeated pattern
//! read in one sitting; the generator would not.
//!
//! # Example
//!
//! ```
//! use std::collections::BTreeSet;
//!
//! /// What the checks are given.
//! pub struct Subject {
//!     answer: u32,
//! }
//!
//! pub fn answers_42(subject: &Subject) {
//!     assert_eq!(subject.answer, 42, "the answer is 42");
//! }
//!
//! pub fn answers_nonzero(subject: &Subject) {
//!     assert_ne!(subject.answer, 0, "the answer is not zero");
//! }
//!
//! const CHECKS: &[(&str, fn(&Subject))] = &retrykey_checks::table!(demo:
//!     answers_42 => answers_42 as fn(&Subject),
//!     answers_nonzero => answers_nonzero as fn(&Subject),
//! );
//!
//! // The same checks as #[test]s in a module `demo` (`demo::answers_42`, ...): in a test file,
//! // `cargo test` runs them.
//! retrykey_checks::tests! {
//!     mod demo;
//!     #[cfg_attr(any(), ignore)]
//!     fn answers_42() { answers_42(&Subject { answer: 42 }); }
//!     fn answers_nonzero() { answers_nonzero(&Subject { answer: 42 }); }
//! }
//!
//! fn main() {
//!     let seven = Subject { answer: 7 };
//!     let failing = retrykey_checks::failing_checks(CHECKS, |check| check(&seven));
//!     assert_eq!(failing, BTreeSet::from(["demo::answers_42".to_string()]));
//! }
//! ```

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The names of the checks in `checks` that fail, each run once, in table order, by `run`.
///
/// A check fails when `run` panics with it; the panic is caught here, so the next check still
/// runs. The panic message is printed as usual (under `cargo test` it is captured with the
/// test's output). `run` says what a check is given: `|check| check(subject)` for a table of
/// functions, or whatever an entry (a crash point, say) needs to become a run.
pub fn failing_checks<C: Copy>(checks: &[(&str, C)], run: impl Fn(C)) -> BTreeSet<String> {
    checks
        .iter()
        .filter(|(_, check)| catch_unwind(AssertUnwindSafe(|| run(*check))).is_err())
        .map(|(name, _)| (*name).to_string())
        .collect()
}

/// Runs one check, turning its panic into an `Err` with the panic message.
pub fn run_check(check: impl FnOnce()) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(check)).map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "the check panicked".to_string())
    })
}

/// A table of named checks: an array of `("<module>::<name>", entry)` pairs, in the order given.
///
/// `table!(module: name => entry, ...)`. The module is the one the crate's suite macro puts
/// its `#[test]`s in ([`tests!`]), so the names are those `cargo test` prints. An entry is any
/// expression: usually the check function cast to the crate's `Check` type.
#[macro_export]
macro_rules! table {
    ($module:ident: $($name:ident => $entry:expr),* $(,)?) => {
        [$( (concat!(stringify!($module), "::", stringify!($name)), $entry) ),*]
    };
}

/// A module of `#[test]`s: `tests! { mod module; #[attribute] fn name() { body } ... }`.
///
/// The module sees its parent's items (`use super::*`), so a suite invoked in a test file can
/// use that file's imports. The attribute goes on every test: a suite that needs a database
/// passes `#[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL")]`, so that without one its
/// tests are counted as ignored, never as passed; a suite that runs everywhere passes
/// `#[cfg_attr(any(), ignore)]`, which is never active (`any()` is false).
#[macro_export]
macro_rules! tests {
    (
        $(#[$module_attr:meta])*
        mod $module:ident;
        #[$attr:meta]
        $(fn $name:ident() $body:block)*
    ) => {
        $(#[$module_attr])*
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[$attr]
                #[test]
                fn $name() $body
            )*
        }
    };
}

#[cfg(test)]
mod unit {
    use std::collections::BTreeSet;

    type Check = fn(&u32);

    fn is_even(n: &u32) {
        assert_eq!(n % 2, 0, "{n} is even");
    }

    fn is_small(n: &u32) {
        assert!(*n < 10, "{n} is small");
    }

    const CHECKS: &[(&str, Check)] = &crate::table!(numbers:
        is_even => is_even as Check,
        is_small => is_small as Check,
    );

    #[test]
    fn names_carry_the_module_in_table_order() {
        let names: Vec<&str> = CHECKS.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["numbers::is_even", "numbers::is_small"]);
    }

    #[test]
    fn only_the_failing_check_is_named() {
        let failing = crate::failing_checks(CHECKS, |check| check(&12));
        assert_eq!(failing, BTreeSet::from(["numbers::is_small".to_string()]));
    }

    #[test]
    fn every_check_runs_after_a_failure() {
        let failing = crate::failing_checks(CHECKS, |check| check(&13));
        assert_eq!(
            failing,
            BTreeSet::from([
                "numbers::is_even".to_string(),
                "numbers::is_small".to_string()
            ])
        );
    }

    #[test]
    fn a_passing_table_names_nothing() {
        assert_eq!(
            crate::failing_checks(CHECKS, |check| check(&4)),
            BTreeSet::new()
        );
    }

    #[test]
    fn run_check_keeps_the_panic_message() {
        assert_eq!(
            crate::run_check(|| is_small(&30)),
            Err("30 is small".to_string())
        );
        assert_eq!(
            crate::run_check(|| panic!("static")),
            Err("static".to_string())
        );
        assert_eq!(crate::run_check(|| is_small(&2)), Ok(()));
    }

    // The generated tests run as part of this crate's own tests: `generated::even_four`, ...
    crate::tests! {
        mod generated;
        #[cfg_attr(any(), ignore)]
        fn even_four() { is_even(&4); }
        fn small_three() { is_small(&3); }
    }
}
