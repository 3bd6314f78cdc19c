//! The Stage 4 checks as named functions, shared by the correct durable ledgers and every
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
//! 4. This file and `suites.rs`: the tables of names, and how they become tests.
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
use crate::crash::harness::InProcess;
use crate::crash::server::{Backend, Opener};

/// Builds a fresh, empty ledger with the given limits (the contract and model suites).
pub type Make<'a, L> = &'a (dyn Fn(Limits) -> L + Sync);

/// A durable ledger to check, with what each of its checks needs.
pub enum Subject<'a, L> {
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

/// The Stage 4 checks that fail for `subject`, named as `cargo test` prints them
/// (`contract::<check>`, `model::matches_reference_model`, `crash::<point>`,
/// `connections::<check>`).
pub fn failing_checks<L>(subject: Subject<'_, L>) -> BTreeSet<String>
where
    L: Ledger + 'static,
{
    let (mut failing, results) = match subject {
        Subject::Sqlite { make, open } => {
            let fresh = || InProcess::new(Backend::fresh_sqlite(), open);
            (
                retrykey_contract::failing_checks(make),
                __with_crash_checks!(run { fresh }),
            )
        }
        Subject::Postgres { url, make, open } => (
            retrykey_contract::failing_checks(make),
            __with_connection_checks!(run { url open }),
        ),
    };
    failing.extend(
        results
            .into_iter()
            .filter(|(_, result)| result.is_err())
            .map(|(name, _)| name.to_owned()),
    );
    failing
}

/// Expands `__crash_checks! { mode { context } test_name Point ... }` with every crash point.
///
/// The one list of crash check names: the `#[test]` generator and [`failing_checks`] both read
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
/// The one list of connection check names: the `#[test]` generator and [`failing_checks`] both
/// read it.
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
