//! A write transaction whose `BEGIN` shares one round trip with its first statement.
//!
//! `Client::transaction` sends `BEGIN` and waits for its reply before the first statement may
//! go: a round trip that tells the client nothing. [`Transaction::begin_with`] sends both at
//! once. The client pipelines requests whose futures are polled together, in the order they
//! are first polled, and the server answers both in one go.
//!
//! Sending them together has one danger: if `BEGIN` failed, the statement behind it would run
//! on its own and commit at once. So `BEGIN` also sets a transaction-local marker, and a
//! statement sent with it must write only where the marker is set; add this condition to its
//! `WHERE` clause:
//!
//! ```sql
//! current_setting('retrykey.in_transaction', true) = 'yes'
//! ```
//!
//! Outside the transaction the marker is unset, the condition is false, and the statement
//! changes nothing.
//!
//! A `Transaction` cannot roll back from `Drop` (that takes a round trip). Every path that
//! returns ends it with [`Transaction::commit`] or [`Transaction::rollback`]. A path that never
//! returns (a panic, a dropped future) leaves its connection inside the transaction; the pool
//! closes such a connection before anyone uses it again (see
//! [`BlockingPool::run`](super::BlockingPool::run)), and the server rolls back what it left open.

use std::future::Future;

use retrykey::Error;
use tokio_postgres::Client;

use super::storage;

/// Opens the transaction and sets the marker that [`MARKER`] reads.
const BEGIN: &str = "BEGIN; SET LOCAL retrykey.in_transaction = 'yes'";

/// The condition that holds only inside a transaction opened by [`Transaction::begin_with`].
pub const MARKER: &str = "current_setting('retrykey.in_transaction', true) = 'yes'";

/// An open transaction on one connection.
#[derive(Debug)]
pub struct Transaction<'a> {
    client: &'a Client,
}

impl<'a> Transaction<'a> {
    /// Sends `BEGIN` and `first`, a statement on the same `client`, in one round trip, and
    /// waits for both replies. `first` must write only under [`MARKER`]. If either fails, the
    /// transaction is rolled back and the error returned.
    pub async fn begin_with<T>(
        client: &'a Client,
        first: impl Future<Output = Result<T, Error>>,
    ) -> Result<(Self, T), Error> {
        // `biased`: BEGIN is polled first, so it is sent first.
        let (begun, first) = tokio::join!(biased; client.batch_execute(BEGIN), first);
        let transaction = Self { client };
        match (begun.map_err(storage), first) {
            (Ok(()), Ok(value)) => Ok((transaction, value)),
            (Err(error), _) | (Ok(()), Err(error)) => {
                // After a failed BEGIN there may be nothing to roll back; ROLLBACK then only
                // warns.
                transaction.rollback().await?;
                Err(error)
            }
        }
    }

    /// The connection, to run the transaction's statements on.
    pub fn client(&self) -> &'a Client {
        self.client
    }

    /// Commits. An error here means the outcome is unknown: the server may have committed.
    pub async fn commit(self) -> Result<(), Error> {
        self.client.batch_execute("COMMIT").await.map_err(storage)
    }

    /// Rolls back everything the transaction wrote.
    pub async fn rollback(self) -> Result<(), Error> {
        self.client.batch_execute("ROLLBACK").await.map_err(storage)
    }
}
