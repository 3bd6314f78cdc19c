//! The variant `phase-outside-transaction` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): the shared suite by its own name.

use std::future::Future;
use std::pin::Pin;

use phase_outside_transaction::SqliteBooks;
use retrykey_foreign::crash::Hooks;
use retrykey_foreign::{BooksError, Checkout, ProviderCall};
use retrykey_replicas::SqliteEntries;

/// The correct checkout on this variant's books.
fn books(
    store: SqliteEntries,
    hooks: Hooks,
    call: ProviderCall,
) -> Pin<Box<dyn Future<Output = Result<Checkout, BooksError>> + Send>> {
    Box::pin(async move {
        let books = SqliteBooks::open(store, hooks.clone()).await?;
        Ok(Checkout::new(books, call).with_hooks(hooks))
    })
}

// The Stage 9 checks with this variant's books: the checks declared in Cargo.toml must fail.
retrykey_foreign_checks::foreign_suite!(
    retrykey_foreign_checks::ForeignUnderTest::correct().with_books(books)
);
