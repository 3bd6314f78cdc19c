//! The Stage 5 checks as named functions, shared by the correct durable ledgers and every
//! negative variant: crash a ledger at each point and retry, and race, roll back and cut real
//! PostgreSQL connections.
//!
//! One table per kind of check names them; one macro turns a table into `#[test]`s
//! ([`crash_suite!`], [`connections_suite!`]) and [`failing_checks`] runs the same checks in
//! this process, so the names (`crash::after_effect`, `connections::two_connections_one_effect`)
//! are the same wherever they print.
//!
//! # Reading order
//!
//! 1. [`crash::scenario`]: what must hold after a crash at a point and a retry with the same key.
//! 2. [`crash::harness`]: how a scenario starts, talks to and kills a ledger, as a real process
//!    or in this one; then [`crash::server`], the process itself.
//! 3. [`connections`]: the PostgreSQL checks, with `retrykey_testkit::proxy` cutting a
//!    connection exactly around its `COMMIT`.
//! 4. This file and `suites.rs`: the tables of names, and how they become tests, on the
//!    scaffold every checks crate shares (`retrykey-checks`).
//!
//! # Example
//!
//! ```
//! // tests/it/main.rs of a crate with a ledger: one #[test] per crash point, here in this process
//! // (a panic at the point); the crash server's ProcessHarness aborts a real process instead.
//! use retrykey_durable_checks::crash::harness::InProcess;
//! use retrykey_durable_checks::crash::server::{Backend, open_correct};
//!
//! retrykey_durable_checks::crash_suite!(InProcess::new(Backend::fresh_sqlite(), open_correct));
//! # fn main() {}
//! ```

pub mod admin;
pub mod connections;
pub mod crash;
mod suites;

use std::collections::BTreeSet;

use retrykey::{Ledger, Limits};

use crate::connections::Open;
use crate::crash::Point;
use crate::crash::harness::InProcess;
use crate::crash::server::{Backend, Opener};

// The scaffold the exported macros expand to, so a caller needs no dependency of its own on it.
#[doc(hidden)]
pub use retrykey_checks as __checks;

/// Builds a fresh, empty ledger with the given limits (the contract and model suites).
pub type Make<'a, L> = &'a (dyn Fn(Limits) -> L + Sync);

/// A durable ledger to check, with what each of its checks needs.
pub enum LedgerUnderTest<'a, L> {
    /// An SQLite ledger: the contract and model suites on `make`, the crash scenarios (in this
    /// process: a panic at the point stands for the abort) on the ledgers `open` opens.
    Sqlite {
        /// A fresh ledger for each contract and model check.
        make: Make<'a, L>,
        /// Opens the ledger on a fresh file for each crash scenario.
        open: Opener,
    },
    /// A PostgreSQL ledger on the server at `url`: the contract and model suites on `make`, the
    /// connection checks on the ledgers `open` opens.
    Postgres {
        /// The server.
        url: &'a str,
        /// A fresh ledger for each contract and model check.
        make: Make<'a, L>,
        /// Opens the ledger in a fresh schema for each connection check.
        open: &'a Open<L>,
    },
}

/// Every crash check, named as `cargo test` prints it (`crash::<point>`), with the point it
/// crashes at, in the order they run.
pub const CRASH_CHECKS: &[(&str, Point)] = &__with_crash_checks!(table {});

/// One connection check: it runs against the server at the URL, on ledgers the opener opens.
pub type ConnectionCheck<L> = fn(&str, &Open<L>);

/// Every connection check, named as `cargo test` prints it (`connections::<check>`), in the
/// order they run.
pub fn connection_checks<L: Ledger>() -> Vec<(&'static str, ConnectionCheck<L>)> {
    __with_connection_checks!(table { L }).to_vec()
}

/// The Stage 5 checks that fail for `subject`, named as `cargo test` prints them
/// (`contract::<check>`, `model::matches_reference_model`, `crash::<point>`,
/// `connections::<check>`).
pub fn failing_checks<L>(subject: LedgerUnderTest<'_, L>) -> BTreeSet<String>
where
    L: Ledger + 'static,
{
    match subject {
        LedgerUnderTest::Sqlite { make, open } => {
            let mut failing = retrykey_contract::failing_checks(make);
            failing.extend(retrykey_checks::failing_checks(CRASH_CHECKS, |point| {
                let harness = InProcess::new(Backend::fresh_sqlite(), open);
                if let Err(problem) = crash::scenario::check(&harness, point) {
                    panic!("{problem}");
                }
            }));
            failing
        }
        LedgerUnderTest::Postgres { url, make, open } => {
            let mut failing = retrykey_contract::failing_checks(make);
            failing.extend(retrykey_checks::failing_checks(
                &connection_checks::<L>(),
                |check| check(url, open),
            ));
            failing
        }
    }
}

/// Runs one connection check against the server at `RETRYKEY_PG_URL` (what
/// [`connections_suite!`] expands to).
#[doc(hidden)]
pub fn __run_connection_check<L: Ledger>(check: ConnectionCheck<L>, open: &Open<L>) {
    check(&admin::url(), open);
}

/// Expands `__crash_checks! { mode { context } test_name Point ... }` with every crash point.
///
/// The one list of crash check names: the `#[test]` generator and [`CRASH_CHECKS`] both read
/// it.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_crash_checks {
    ($mode:ident { $($context:tt)* }) => {
        $crate::__crash_checks! {
            $mode { $($context)* }
            before_effect BeforeEffect
            after_effect AfterEffect
            after_record AfterRecord
            after_commit AfterCommit
        }
    };
}

/// Expands `__connection_checks! { mode { context } check ... }` with every connection check.
///
/// The one list of connection check names: the `#[test]` generator and [`connection_checks`]
/// both read it.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_connection_checks {
    ($mode:ident { $($context:tt)* }) => {
        $crate::__connection_checks! {
            $mode { $($context)* }
            two_connections_one_effect
            changed_input_conflicts
            rollback_before_commit
            backend_terminated_before_commit
            connection_lost_before_commit
            reply_lost_after_commit
        }
    };
}
