//! The variant `lease-without-fence` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

use retrykey_http::{EntryId, Token};
use retrykey_replicas::FenceSteps;
use retrykey_replicas::record::ResponseColumns;
use rusqlite::Transaction;

/// The correct claim with this variant's fence.
struct LeaseWithoutFence;

impl FenceSteps for LeaseWithoutFence {
    fn holds(&self, tx: &Transaction<'_>, id: &EntryId, token: Token) -> rusqlite::Result<bool> {
        lease_without_fence::holds(tx, id, token)
    }

    fn finish(
        &self,
        tx: &Transaction<'_>,
        id: &EntryId,
        columns: &ResponseColumns,
        expires_at: i64,
    ) -> rusqlite::Result<()> {
        lease_without_fence::finish(tx, id, columns, expires_at)
    }

    fn renew(
        &self,
        tx: &Transaction<'_>,
        id: &EntryId,
        token: Token,
        until: i64,
    ) -> rusqlite::Result<bool> {
        lease_without_fence::renew(tx, id, token, until)
    }
}

// The Stage 5 replica checks with this variant's fence in every replica's store: the checks
// declared in Cargo.toml must fail.
retrykey_replicas_checks::replicas_suite!(
    retrykey_replicas_checks::ReplicasUnderTest::correct().with_steps(super::LeaseWithoutFence)
);
