//! The variant `completer-without-fence` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): the shared suite by its own name.

use std::future::Future;
use std::pin::Pin;

use retrykey_foreign::Claim;
use retrykey_foreign::checkout::Steps;
use retrykey_http::{Entries, EntryId, Error, Fingerprint};

/// The correct checkout around this variant's claim.
struct Variant;

impl Steps for Variant {
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

// The Stage 9 checks with this variant's claim in the completer: the checks declared in
// Cargo.toml must fail.
retrykey_foreign_checks::foreign_suite!(
    retrykey_foreign_checks::ForeignUnderTest::correct().with_steps(&Variant)
);
