//! Plain `cargo test` confirms, in-process, that each Stage 9 variant still fails exactly its
//! declared foreign checks: a variant fixed by accident, or broken in a new way, turns this red.
//! Each check starts on fresh SQLite files and forces its interleavings with crash hooks,
//! pauses and clocks set ahead, so the failing set is the same on every run.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;

use axum::response::Response;
use retrykey_foreign::checkout::Steps;
use retrykey_foreign::crash::Hooks;
use retrykey_foreign::{BooksError, Checkout, CheckoutParts, Claim, KeyFn, ProviderCall, Purchase};
use retrykey_foreign_checks::{ForeignUnderTest, failing_checks};
use retrykey_http::{Entries, EntryId, Error, Fingerprint, Reservation};
use retrykey_replicas::SqliteEntries;

fn assert_fails_as_declared(variant: &str, subject: ForeignUnderTest) {
    retrykey_tests::assert_fails_as_declared(variant, 9, &["foreign::"], &failing_checks(&subject));
}

// The correct checkout fails no foreign check.
#[test]
fn correct_checkout_fails_nothing() {
    assert_eq!(
        failing_checks(&ForeignUnderTest::correct()),
        BTreeSet::new()
    );
}

/// The correct checkout around fresh-foreign-key's key.
struct FreshForeignKey;

impl Steps for FreshForeignKey {
    fn foreign_key(&self) -> KeyFn {
        fresh_foreign_key::foreign_key
    }
}

#[test]
fn fresh_foreign_key_fails_as_declared() {
    let subject = ForeignUnderTest::correct().with_steps(&FreshForeignKey);
    assert_fails_as_declared("fresh-foreign-key", subject);
}

/// The correct checkout around recovery-point-before-call's phases.
struct RecoveryPointBeforeCall;

impl Steps for RecoveryPointBeforeCall {
    fn resume<'a>(
        &self,
        parts: &'a CheckoutParts,
        fence: Reservation,
        purchase: Purchase,
    ) -> Pin<Box<dyn Future<Output = Response> + Send + 'a>> {
        Box::pin(recovery_point_before_call::resume(parts, fence, purchase))
    }
}

#[test]
fn recovery_point_before_call_fails_as_declared() {
    let subject = ForeignUnderTest::correct().with_steps(&RecoveryPointBeforeCall);
    assert_fails_as_declared("recovery-point-before-call", subject);
}

/// The correct checkout around completer-without-fence's claim.
struct CompleterWithoutFence;

impl Steps for CompleterWithoutFence {
    fn claim<'a>(
        &self,
        entries: &'a dyn Entries,
        operation: &'a EntryId,
        fingerprint: &'a Fingerprint,
    ) -> Pin<Box<dyn Future<Output = Result<Claim, Error>> + Send + 'a>> {
        Box::pin(completer_without_fence::claim(
            entries,
            operation,
            fingerprint,
        ))
    }
}

#[test]
fn completer_without_fence_fails_as_declared() {
    let subject = ForeignUnderTest::correct().with_steps(&CompleterWithoutFence);
    assert_fails_as_declared("completer-without-fence", subject);
}

/// The correct checkout on phase-outside-transaction's books.
fn phase_outside_transaction_books(
    store: SqliteEntries,
    hooks: Hooks,
    call: ProviderCall,
) -> Pin<Box<dyn Future<Output = Result<Checkout, BooksError>> + Send>> {
    Box::pin(async move {
        let books = phase_outside_transaction::SqliteBooks::open(store, hooks.clone()).await?;
        Ok(Checkout::new(books, call).with_hooks(hooks))
    })
}

#[test]
fn phase_outside_transaction_fails_as_declared() {
    let subject = ForeignUnderTest::correct().with_books(phase_outside_transaction_books);
    assert_fails_as_declared("phase-outside-transaction", subject);
}
