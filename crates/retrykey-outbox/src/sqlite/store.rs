//! SQLite as an [`OutboxStore`]: the one blocking adapter. Every call is the file's own
//! (blocking) method, run on a blocking thread so that no runtime worker waits on the file; a
//! caller inside [`wait`](crate::store::wait) is blocked already, and runs it in place.

use std::time::Duration;

use retrykey::{Key, Request};

use crate::sqlite::SqliteOutbox;
use crate::store::{OutboxStore, StoreCall, waiting};
use crate::{Accepted, Acted, ActionError, Claimed, Error, EventRow};

impl SqliteOutbox {
    /// Runs `call` on a clone of this handle, on a blocking thread (in place inside
    /// [`wait`](crate::store::wait)). `what` names the call should its thread end without an
    /// answer.
    fn blocking<T: Send + 'static>(
        &self,
        what: &'static str,
        call: impl FnOnce(&SqliteOutbox) -> Result<T, Error> + Send + 'static,
    ) -> StoreCall<'static, T> {
        let outbox = self.clone();
        Box::pin(async move {
            if waiting() {
                return call(&outbox);
            }
            tokio::task::spawn_blocking(move || call(&outbox))
                .await
                .map_err(|error| Error::Interrupted(format!("{what}: {error}")))?
        })
    }
}

impl OutboxStore for SqliteOutbox {
    fn accept<'a>(&'a self, key: &'a Key, job: &'a Request) -> StoreCall<'a, Accepted> {
        let (key, job) = (key.clone(), job.clone());
        self.blocking("the accept", move |outbox| outbox.accept(&key, &job))
    }

    fn jobs(&self) -> StoreCall<'_, Vec<u64>> {
        self.blocking("the jobs", SqliteOutbox::jobs)
    }

    fn now_ms(&self) -> i64 {
        SqliteOutbox::now_ms(self)
    }

    fn claim<'a>(
        &'a self,
        owner: &'a str,
        lease: Duration,
        limit: usize,
    ) -> StoreCall<'a, Vec<Claimed>> {
        let owner = owner.to_owned();
        self.blocking("the claim", move |outbox| {
            outbox.claim(&owner, lease, limit)
        })
    }

    fn mark_delivered<'a>(
        &'a self,
        claimed: &'a Claimed,
        conversion: Option<u64>,
    ) -> StoreCall<'a, bool> {
        let claimed = claimed.clone();
        self.blocking("an outbox call", move |outbox| {
            outbox.mark_delivered(&claimed, conversion)
        })
    }

    fn postpone<'a>(
        &'a self,
        claimed: &'a Claimed,
        error: &'a str,
        wait: Duration,
    ) -> StoreCall<'a, bool> {
        let (claimed, error) = (claimed.clone(), error.to_owned());
        self.blocking("an outbox call", move |outbox| {
            outbox.postpone(&claimed, &error, wait)
        })
    }

    fn mark_rejected<'a>(&'a self, claimed: &'a Claimed, error: &'a str) -> StoreCall<'a, bool> {
        let (claimed, error) = (claimed.clone(), error.to_owned());
        self.blocking("an outbox call", move |outbox| {
            outbox.mark_rejected(&claimed, &error)
        })
    }

    fn find<'a>(&'a self, id: &'a str) -> StoreCall<'a, Option<EventRow>> {
        let id = id.to_owned();
        self.blocking("an outbox call", move |outbox| outbox.find(&id))
    }

    fn not_delivered(&self, limit: usize) -> StoreCall<'_, Vec<EventRow>> {
        self.blocking("an outbox call", move |outbox| outbox.not_delivered(limit))
    }

    fn events(&self) -> StoreCall<'_, Vec<EventRow>> {
        self.blocking("an outbox call", SqliteOutbox::events)
    }

    fn redrive<'a>(&'a self, id: &'a str) -> StoreCall<'a, Result<Acted, ActionError>> {
        let id = id.to_owned();
        self.blocking("the re-drive", move |outbox| outbox.redrive(&id))
    }

    fn mark_failed<'a>(
        &'a self,
        id: &'a str,
        reason: &'a str,
    ) -> StoreCall<'a, Result<Acted, ActionError>> {
        let (id, reason) = (id.to_owned(), reason.to_owned());
        self.blocking("the mark", move |outbox| outbox.mark_failed(&id, &reason))
    }

    fn sweep(&self, kept: Duration) -> StoreCall<'_, usize> {
        self.blocking("the sweep", move |outbox| outbox.sweep(kept))
    }
}
