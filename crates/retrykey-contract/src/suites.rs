//! The macros that turn the checks into `#[test]` functions, one module per suite.

/// Every contract check as a `#[test]` in a module `contract`.
///
/// `contract_suite!(make)` or `contract_suite!(make, guard = f)`, where `make: Fn(Limits) -> L`
/// returns a fresh, empty ledger and `f: fn() -> bool` may skip the suite (it should say why).
#[macro_export]
macro_rules! contract_suite {
    ($make:expr) => {
        $crate::contract_suite!($make, guard = || true);
    };
    ($make:expr, guard = $guard:expr) => {
        $crate::__with_contract_checks!(tests { $make, $guard });
    };
}

/// What the check list expands to: `#[test]`s, an in-process run, or the names.
#[doc(hidden)]
#[macro_export]
macro_rules! __contract_checks {
    (run { $make:ident } $($name:ident)*) => {
        vec![$( (stringify!($name), $crate::run_check(|| $crate::checks::$name($make))) ),*]
    };
    (names {} $($name:ident)*) => {
        vec![$( stringify!($name) ),*]
    };
    (tests { $make:expr, $guard:expr } $($name:ident)*) => {
        mod contract {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[test]
                fn $name() {
                    if !($guard)() {
                        return;
                    }
                    $crate::checks::$name(&$make);
                }
            )*
        }
    };
}

/// The property test against the reference model, as `model::matches_reference_model`.
#[macro_export]
macro_rules! model_suite {
    ($make:expr) => {
        $crate::model_suite!($make, guard = || true);
    };
    ($make:expr, guard = $guard:expr) => {
        mod model {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn matches_reference_model() {
                if !($guard)() {
                    return;
                }
                $crate::model::matches_reference_model(&$make);
            }
        }
    };
}

/// The repeated 64-thread races, as `stress::one_key_64_threads` and
/// `stress::distinct_keys_64_threads`. Rounds come from `STRESS_ROUNDS` (default 3).
#[macro_export]
macro_rules! stress_suite {
    ($make:expr) => {
        $crate::stress_suite!($make, guard = || true);
    };
    ($make:expr, guard = $guard:expr) => {
        mod stress {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn one_key_64_threads() {
                if !($guard)() {
                    return;
                }
                for _ in 0..$crate::concurrency::stress_rounds() {
                    $crate::concurrency::one_key_burst(&$make, 64);
                }
            }
            #[test]
            fn distinct_keys_64_threads() {
                if !($guard)() {
                    return;
                }
                for _ in 0..$crate::concurrency::stress_rounds() {
                    $crate::concurrency::distinct_keys_burst(&$make, 64);
                }
            }
        }
    };
}

/// The contract, model and stress suites together: what a ledger crate's `tests/` instantiates.
#[macro_export]
macro_rules! ledger_suite {
    ($make:expr) => {
        $crate::ledger_suite!($make, guard = || true);
    };
    ($make:expr, guard = $guard:expr) => {
        $crate::contract_suite!($make, guard = $guard);
        $crate::model_suite!($make, guard = $guard);
        $crate::stress_suite!($make, guard = $guard);
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
