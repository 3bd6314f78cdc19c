//! Accepting a job on PostgreSQL: the job and its outgoing event in the ledger's one
//! transaction, as on SQLite (`sqlite/accept.rs`).

use retrykey::{Key, Receipt, Request};
use retrykey_durable::{LedgerTx, PgTx, WithRecord};
use tokio_postgres::Client;

use crate::pg::{PgOutbox, events};
use crate::{Accepted, Error, EventId, NewEvent};

/// Accepts `job` under `key`, with its event; a retry with the same key writes nothing and gets
/// the first answer.
pub fn accept(outbox: &PgOutbox, key: &Key, job: &Request) -> Result<Accepted, Error> {
    let event = WithEvent {
        id: EventId::random(),
        scope: outbox.scope(),
        job,
        now: outbox.now_ms(),
    };
    let receipt = outbox.ledger().apply_with(key, job, &event)?;
    outbox.accepted(receipt, event.id)
}

/// The rows a job's transaction writes besides the ledger's: its event.
struct WithEvent<'a> {
    id: EventId,
    scope: &'a str,
    job: &'a Request,
    now: i64,
}

impl WithRecord<PgTx> for WithEvent<'_> {
    fn write<'c>(
        &'c self,
        client: &'c Client,
        receipt: Receipt,
    ) -> <PgTx as LedgerTx>::Written<'c> {
        let new = NewEvent::for_job(&self.id, self.scope, receipt, self.job, self.now);
        Box::pin(async move { events::insert(client, &new).await })
    }
}
