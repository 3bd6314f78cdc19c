//! A variant's claim or its fence in the replicas' seam, from the functions its copy of one file
//! exports: the one adapter every variant's tests and the workspace's in-process run share.

use retrykey_http::{EntryId, Fingerprint, Reserve, Token};
use retrykey_replicas::record::ResponseColumns;
use retrykey_replicas::{ClaimTerms, FenceSteps};
use rusqlite::Transaction;

/// A variant's claim (its copy of `sqlite/claim.rs`) inside the correct fence.
#[derive(Clone, Copy)]
pub struct VariantClaim(
    /// The copy's `claim`.
    pub fn(&Transaction<'_>, &EntryId, &Fingerprint, &ClaimTerms<'_>) -> rusqlite::Result<Reserve>,
);

impl FenceSteps for VariantClaim {
    fn claim(
        &self,
        tx: &Transaction<'_>,
        id: &EntryId,
        fingerprint: &Fingerprint,
        terms: &ClaimTerms<'_>,
    ) -> rusqlite::Result<Reserve> {
        (self.0)(tx, id, fingerprint, terms)
    }
}

/// A variant's fence (its copy of `sqlite/fence.rs`) around the correct claim.
#[derive(Clone, Copy)]
pub struct VariantFence {
    /// The copy's `holds`.
    pub holds: fn(&Transaction<'_>, &EntryId, Token) -> rusqlite::Result<bool>,
    /// The copy's `finish`.
    pub finish: fn(&Transaction<'_>, &EntryId, &ResponseColumns, i64) -> rusqlite::Result<()>,
    /// The copy's `renew`.
    pub renew: fn(&Transaction<'_>, &EntryId, Token, i64) -> rusqlite::Result<bool>,
}

impl FenceSteps for VariantFence {
    fn holds(&self, tx: &Transaction<'_>, id: &EntryId, token: Token) -> rusqlite::Result<bool> {
        (self.holds)(tx, id, token)
    }

    fn finish(
        &self,
        tx: &Transaction<'_>,
        id: &EntryId,
        columns: &ResponseColumns,
        expires_at: i64,
    ) -> rusqlite::Result<()> {
        (self.finish)(tx, id, columns, expires_at)
    }

    fn renew(
        &self,
        tx: &Transaction<'_>,
        id: &EntryId,
        token: Token,
        until: i64,
    ) -> rusqlite::Result<bool> {
        (self.renew)(tx, id, token, until)
    }
}
