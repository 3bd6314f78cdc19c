//! The macros that turn the checks into `#[test]` functions, one module per suite, each through
//! the shared scaffold's `tests!` (`retrykey-checks`).
//!
//! Each suite macro takes `make` and, optionally, one attribute put on every test it makes, for
//! a suite that cannot run everywhere: `ledger_suite!(#[cfg_attr(not(retrykey_pg), ignore =
//! "needs PostgreSQL")] make)` makes the PostgreSQL tests *ignored*, never passed, without a
//! server. Without an attribute the suites use `#[cfg_attr(any(), ignore)]`, which is never
//! active (`any()` is false).

/// Every contract check as a `#[test]` in a module `contract`.
///
/// `contract_suite!(make)` or `contract_suite!(#[attribute] make)`, where
/// `make: Fn(Limits) -> L` returns a fresh, empty ledger.
#[macro_export]
macro_rules! contract_suite {
    (#[$attr:meta] $make:expr) => {
        $crate::__with_contract_checks!(tests {
            #[$attr]
            $make
        });
    };
    ($make:expr) => {
        $crate::contract_suite!(
            #[cfg_attr(any(), ignore)]
            $make
        );
    };
}

/// What the check list expands to: the named table, or `#[test]`s in a module `contract`.
#[doc(hidden)]
#[macro_export]
macro_rules! __contract_checks {
    (table { $ledger:ty } $($name:ident)*) => {
        $crate::__checks::table!(contract: $(
            $name => $crate::checks::$name as $crate::Check<$ledger>
        ),*)
    };
    (tests { #[$attr:meta] $make:expr } $($name:ident)*) => {
        $crate::__checks::tests! {
            mod contract;
            #[$attr]
            $( fn $name() { $crate::checks::$name(&$make); } )*
        }
    };
}

/// The property test against the reference model, as `model::matches_reference_model`.
#[macro_export]
macro_rules! model_suite {
    (#[$attr:meta] $make:expr) => {
        $crate::__checks::tests! {
            mod model;
            #[$attr]
            fn matches_reference_model() {
                $crate::model::matches_reference_model(&$make);
            }
        }
    };
    ($make:expr) => {
        $crate::model_suite!(
            #[cfg_attr(any(), ignore)]
            $make
        );
    };
}

/// The repeated 64-thread races, as `stress::one_key_64_threads` and
/// `stress::distinct_keys_64_threads`. Rounds come from `STRESS_ROUNDS` (default 3).
#[macro_export]
macro_rules! stress_suite {
    (#[$attr:meta] $make:expr) => {
        $crate::__checks::tests! {
            mod stress;
            #[$attr]
            fn one_key_64_threads() {
                for _ in 0..$crate::concurrency::stress_rounds() {
                    $crate::concurrency::one_key_burst(&$make, 64);
                }
            }
            fn distinct_keys_64_threads() {
                for _ in 0..$crate::concurrency::stress_rounds() {
                    $crate::concurrency::distinct_keys_burst(&$make, 64);
                }
            }
        }
    };
    ($make:expr) => {
        $crate::stress_suite!(
            #[cfg_attr(any(), ignore)]
            $make
        );
    };
}

/// The contract, model and stress suites together: what a ledger crate's `tests/` instantiates.
#[macro_export]
macro_rules! ledger_suite {
    (#[$attr:meta] $make:expr) => {
        $crate::contract_suite!(
            #[$attr]
            $make
        );
        $crate::model_suite!(
            #[$attr]
            $make
        );
        $crate::stress_suite!(
            #[$attr]
            $make
        );
    };
    ($make:expr) => {
        $crate::ledger_suite!(
            #[cfg_attr(any(), ignore)]
            $make
        );
    };
}

/// The loom models, as `loom::<model>`; only under `--cfg loom`. `make` must be a `fn` item or a
/// closure without captures, since every explored execution builds its own ledger.
#[cfg(loom)]
#[macro_export]
macro_rules! loom_suite {
    ($make:expr) => {
        mod loom {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn two_threads_same_key() {
                $crate::loom_models::same_key(2, $make);
            }
            #[test]
            fn three_threads_same_key() {
                $crate::loom_models::same_key(3, $make);
            }
            #[test]
            fn two_threads_differing_requests() {
                $crate::loom_models::differing_requests($make);
            }
            #[test]
            fn two_threads_distinct_keys() {
                $crate::loom_models::distinct_keys($make);
            }
        }
    };
}

/// The value types against the oracle of `values`, as `value_types::<check>`: a key type with
/// `new(impl Into<String>)`, `as_str`, `Display`, `Debug`, `Eq` and `Hash`, and a request type
/// with `new(job, units)`, `job` and `units`.
#[macro_export]
macro_rules! values_suite {
    (key = $key:ty, request = $request:ty $(,)?) => {
        $crate::__checks::tests! {
            mod value_types;
            #[cfg_attr(any(), ignore)]
            fn key_grammar_matches_the_oracle() {
                $crate::values::key_grammar_matches_the_oracle(|text: String| <$key>::new(text));
            }
            fn keys_keep_their_text() {
                $crate::values::keys_keep_their_text(
                    |text: String| <$key>::new(text),
                    <$key>::as_str,
                );
            }
            fn keys_are_equal_only_when_their_text_is() {
                $crate::values::keys_are_equal_only_when_their_text_is(
                    |text: String| <$key>::new(text),
                );
            }
            fn debug_shows_only_the_length() {
                $crate::values::debug_shows_only_the_length(|text: String| <$key>::new(text));
            }
            fn requests_match_the_oracle() {
                fn parts(request: &$request) -> (&str, u64) {
                    (request.job(), request.units())
                }
                $crate::values::requests_match_the_oracle(
                    |job: String, units: u64| <$request>::new(job, units),
                    parts,
                );
            }
            fn requests_are_equal_only_when_job_and_units_are() {
                $crate::values::requests_are_equal_only_when_job_and_units_are(
                    |job: String, units: u64| <$request>::new(job, units),
                );
            }
        }
    };
}
