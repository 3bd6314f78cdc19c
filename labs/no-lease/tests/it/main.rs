//! The variant `no-lease` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

use retrykey_http::{EntryId, Fingerprint, Reserve};
use retrykey_replicas::{ClaimTerms, FenceSteps};
use rusqlite::Transaction;

/// The correct fence around this variant's claim.
struct NoLease;

impl FenceSteps for NoLease {
    fn claim(
        &self,
        tx: &Transaction<'_>,
        id: &EntryId,
        fingerprint: &Fingerprint,
        terms: &ClaimTerms<'_>,
    ) -> rusqlite::Result<Reserve> {
        no_lease::claim(tx, id, fingerprint, terms)
    }
}

// The Stage 5 replica checks with this variant's claim in every replica's store: the checks
// declared in Cargo.toml must fail.
retrykey_replicas_checks::replicas_suite!(
    retrykey_replicas_checks::ReplicasUnderTest::correct().with_steps(super::NoLease)
);
