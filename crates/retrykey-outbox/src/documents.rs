//! The document service's database, whichever backend holds it: what the accepting side, the
//! dispatcher and the operator ask of it.
//!
//! Every call of the trait blocks the calling thread (SQLite works in place; PostgreSQL drives
//! its connection on a small runtime of its own): from async code, call it in
//! `tokio::task::spawn_blocking`. The dispatcher's own calls go through the async functions at
//! the end of this file instead: PostgreSQL awaits them on the caller's runtime, and only a
//! backend whose calls block takes a blocking thread.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use retrykey::{Key, Request};
use retrykey_program::flags::Database;

use crate::pg::{PgDocuments, events as pg_events};
use crate::sqlite::{SqliteDocuments, events as sqlite_events};
use crate::{Accepted, Acted, ActionError, Claimed, DocumentsOptions, Error, EventRow, action};

/// What every part of the document service does with its database.
pub trait Documents: Debug + Send + Sync {
    /// Accepts `job` under `key`: the job and its outgoing event commit together; a retry with
    /// the same key answers from the ledger's record and writes nothing.
    fn accept(&self, key: &Key, job: &Request) -> Result<Accepted, Error>;

    /// The jobs the ledger has accepted (and not yet swept), by number.
    fn jobs(&self) -> Result<Vec<u64>, Error>;

    /// The database's clock, in ms since the Unix epoch.
    fn now_ms(&self) -> i64;

    /// Claims up to `limit` due events for `owner`, each for `lease`, with a new token.
    fn claim(&self, owner: &str, lease: Duration, limit: usize) -> Result<Vec<Claimed>, Error>;

    /// Marks a claimed event delivered, if the claim is still current; false if it was not.
    fn mark_delivered(&self, claimed: &Claimed, conversion: Option<u64>) -> Result<bool, Error>;

    /// Lets a claim go, the event due again after `wait`; false if the claim was not current.
    fn postpone(&self, claimed: &Claimed, error: &str, wait: Duration) -> Result<bool, Error>;

    /// Settles a claimed event as rejected by the consumer; false if the claim was not current.
    fn mark_rejected(&self, claimed: &Claimed, error: &str) -> Result<bool, Error>;

    /// The event `id`, as stored.
    fn find(&self, id: &str) -> Result<Option<EventRow>, Error>;

    /// Events the consumer has not acknowledged (pending, rejected or failed), oldest first, at
    /// most `limit`.
    fn not_delivered(&self, limit: usize) -> Result<Vec<EventRow>, Error>;

    /// Every event, by job.
    fn events(&self) -> Result<Vec<EventRow>, Error>;

    /// The operator's re-drive of event `id`: due now. The inner result is the answer; the
    /// outer one says whether the database could be asked.
    fn redrive(&self, id: &str) -> Result<Result<Acted, ActionError>, Error>;

    /// The operator's decision that event `id` failed, for `reason`.
    fn mark_failed(&self, id: &str, reason: &str) -> Result<Result<Acted, ActionError>, Error>;

    /// The retention sweep: deletes the ledger's records past their retention window, then the
    /// delivered and failed events settled more than `kept` ago whose job's record is gone;
    /// returns how many events.
    fn sweep(&self, kept: Duration) -> Result<usize, Error>;

    /// The PostgreSQL backend, which async callers await instead of blocking a thread on it;
    /// `None` for a backend whose calls block.
    fn postgres(&self) -> Option<&PgDocuments> {
        None
    }
}

/// Opens the document service's database `db` names.
pub fn open(db: &Database, options: DocumentsOptions) -> Result<Box<dyn Documents>, Error> {
    Ok(match db {
        Database::Sqlite(path) => Box::new(SqliteDocuments::open(path, options)?),
        Database::Postgres(url) => Box::new(PgDocuments::connect(url, options)?),
    })
}

/// A duration in milliseconds, as the tables store times.
pub(crate) fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl Documents for SqliteDocuments {
    fn accept(&self, key: &Key, job: &Request) -> Result<Accepted, Error> {
        SqliteDocuments::accept(self, key, job)
    }

    fn jobs(&self) -> Result<Vec<u64>, Error> {
        let scope = self.scope().to_owned();
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT operation FROM operations WHERE scope = ?1 ORDER BY operation",
            )?
            .query_map([scope], |row| Ok(row.get::<_, i64>(0)?.cast_unsigned()))?
            .collect()
        })
    }

    fn now_ms(&self) -> i64 {
        SqliteDocuments::now_ms(self)
    }

    fn claim(&self, owner: &str, lease: Duration, limit: usize) -> Result<Vec<Claimed>, Error> {
        let now = self.now_ms();
        // A look takes no lock: only one that finds due events takes the file's write lock,
        // which accepting jobs needs too.
        if !self.read(|conn| sqlite_events::any_due(conn, now))? {
            return Ok(Vec::new());
        }
        self.write(|tx| sqlite_events::claim(tx, owner, now, now + millis(lease), limit))
    }

    fn mark_delivered(&self, claimed: &Claimed, conversion: Option<u64>) -> Result<bool, Error> {
        let now = self.now_ms();
        self.write(|tx| sqlite_events::mark_delivered(tx, claimed, conversion, now))
    }

    fn postpone(&self, claimed: &Claimed, error: &str, wait: Duration) -> Result<bool, Error> {
        let due = self.now_ms() + millis(wait);
        self.write(|tx| sqlite_events::postpone(tx, claimed, error, due))
    }

    fn mark_rejected(&self, claimed: &Claimed, error: &str) -> Result<bool, Error> {
        let now = self.now_ms();
        self.write(|tx| sqlite_events::mark_rejected(tx, claimed, error, now))
    }

    fn find(&self, id: &str) -> Result<Option<EventRow>, Error> {
        self.read(|conn| sqlite_events::find(conn, id))
    }

    fn not_delivered(&self, limit: usize) -> Result<Vec<EventRow>, Error> {
        self.read(|conn| sqlite_events::not_delivered(conn, limit))
    }

    fn events(&self) -> Result<Vec<EventRow>, Error> {
        self.read(sqlite_events::all)
    }

    fn redrive(&self, id: &str) -> Result<Result<Acted, ActionError>, Error> {
        act_sqlite(self, id, Action::Redrive)
    }

    fn mark_failed(&self, id: &str, reason: &str) -> Result<Result<Acted, ActionError>, Error> {
        act_sqlite(self, id, Action::Fail(reason))
    }

    fn sweep(&self, kept: Duration) -> Result<usize, Error> {
        self.ledger().sweep(SystemTime::now())?;
        let before = self.now_ms() - millis(kept);
        self.write(|tx| sqlite_events::sweep(tx, before))
    }
}

/// One of the operator's actions.
#[derive(Clone, Copy)]
enum Action<'a> {
    Redrive,
    Fail(&'a str),
}

impl Action<'_> {
    /// Whether the action changes `row` at `now`, or why it is refused.
    fn decide(self, row: &EventRow, now: i64) -> Result<bool, ActionError> {
        match self {
            Action::Redrive => action::redrive(row, now),
            Action::Fail(reason) => action::mark_failed(row, reason, now),
        }
    }
}

/// Reads event `id`, decides, and writes the change, all in one `BEGIN IMMEDIATE` transaction.
fn act_sqlite(
    documents: &SqliteDocuments,
    id: &str,
    action: Action<'_>,
) -> Result<Result<Acted, ActionError>, Error> {
    let now = documents.now_ms();
    documents.write(|tx| {
        let Some(row) = sqlite_events::find(tx, id)? else {
            return Ok(Err(ActionError::UnknownEvent(id.to_owned())));
        };
        let changed = match action.decide(&row, now) {
            Ok(changed) => changed,
            Err(refused) => return Ok(Err(refused)),
        };
        if changed {
            match action {
                Action::Redrive => sqlite_events::redrive(tx, id, now)?,
                Action::Fail(reason) => sqlite_events::mark_failed(tx, id, reason, now)?,
            }
        }
        let event =
            sqlite_events::find(tx, id)?.expect("the row read in this transaction is still there");
        Ok(Ok(Acted { changed, event }))
    })
}

/// The same on PostgreSQL: the row is locked (`FOR UPDATE`) from the read to the commit, and a
/// refusal rolls the transaction back before it answers.
fn act_pg(
    documents: &PgDocuments,
    id: &str,
    action: Action<'_>,
) -> Result<Result<Acted, ActionError>, Error> {
    use retrykey_durable::pg::storage;
    let now = documents.now_ms();
    documents.run(async |client| {
        let tx = client.transaction().await.map_err(storage)?;
        let decided = match pg_events::find(&tx, id, true).await? {
            None => Err(ActionError::UnknownEvent(id.to_owned())),
            Some(row) => action.decide(&row, now),
        };
        let changed = match decided {
            Ok(decided) => decided,
            Err(refused) => {
                tx.rollback().await.map_err(storage)?;
                return Ok(Err(refused));
            }
        };
        if changed {
            match action {
                Action::Redrive => pg_events::redrive(&tx, id, now).await?,
                Action::Fail(reason) => pg_events::mark_failed(&tx, id, reason, now).await?,
            }
        }
        let event = pg_events::find(&tx, id, false)
            .await?
            .expect("the row locked in this transaction is still there");
        tx.commit().await.map_err(storage)?;
        Ok(Ok(Acted { changed, event }))
    })
}

impl Documents for PgDocuments {
    fn accept(&self, key: &Key, job: &Request) -> Result<Accepted, Error> {
        PgDocuments::accept(self, key, job)
    }

    fn jobs(&self) -> Result<Vec<u64>, Error> {
        let scope = self.scope();
        self.run(async |client| {
            let rows = client
                .query(
                    "SELECT operation FROM operations WHERE scope = $1 ORDER BY operation",
                    &[&scope],
                )
                .await
                .map_err(retrykey_durable::pg::storage)?;
            Ok(rows
                .iter()
                .map(|row| row.get::<_, i64>(0).cast_unsigned())
                .collect())
        })
    }

    fn now_ms(&self) -> i64 {
        PgDocuments::now_ms(self)
    }

    fn claim(&self, owner: &str, lease: Duration, limit: usize) -> Result<Vec<Claimed>, Error> {
        let now = self.now_ms();
        let until = now + millis(lease);
        self.run_prepared(async |connection| {
            pg_events::claim(connection, owner, now, until, limit).await
        })
    }

    fn mark_delivered(&self, claimed: &Claimed, conversion: Option<u64>) -> Result<bool, Error> {
        let now = self.now_ms();
        let marks = self.marks();
        self.run_prepared(async |connection| {
            pg_events::mark_delivered(connection, claimed, conversion, now, marks).await
        })
    }

    fn postpone(&self, claimed: &Claimed, error: &str, wait: Duration) -> Result<bool, Error> {
        let due = self.now_ms() + millis(wait);
        self.run_prepared(async |connection| {
            pg_events::postpone(connection, claimed, error, due).await
        })
    }

    fn mark_rejected(&self, claimed: &Claimed, error: &str) -> Result<bool, Error> {
        let now = self.now_ms();
        self.run_prepared(async |connection| {
            pg_events::mark_rejected(connection, claimed, error, now).await
        })
    }

    fn find(&self, id: &str) -> Result<Option<EventRow>, Error> {
        self.run(async |client| pg_events::find(client, id, false).await)
    }

    fn not_delivered(&self, limit: usize) -> Result<Vec<EventRow>, Error> {
        self.run(async |client| pg_events::not_delivered(client, limit).await)
    }

    fn events(&self) -> Result<Vec<EventRow>, Error> {
        self.run(async |client| pg_events::all(client).await)
    }

    fn redrive(&self, id: &str) -> Result<Result<Acted, ActionError>, Error> {
        act_pg(self, id, Action::Redrive)
    }

    fn mark_failed(&self, id: &str, reason: &str) -> Result<Result<Acted, ActionError>, Error> {
        act_pg(self, id, Action::Fail(reason))
    }

    fn sweep(&self, kept: Duration) -> Result<usize, Error> {
        self.ledger().sweep(SystemTime::now())?;
        let before = self.now_ms() - millis(kept);
        self.run(async |client| pg_events::sweep(client, before).await)
    }

    fn postgres(&self) -> Option<&PgDocuments> {
        Some(self)
    }
}

// The dispatcher's calls, for async code: PostgreSQL is awaited on the caller's runtime; a
// backend whose calls block runs them on a blocking thread. `what` names the call should its
// thread end without an answer.

/// [`Documents::claim`], from async code.
pub(crate) async fn claim(
    documents: &Arc<dyn Documents>,
    owner: &str,
    lease: Duration,
    limit: usize,
) -> Result<Vec<Claimed>, Error> {
    if let Some(pg) = documents.postgres() {
        return pg.claim_async(owner, lease, limit).await;
    }
    let owner = owner.to_owned();
    blocking(documents, "the claim", move |documents| {
        documents.claim(&owner, lease, limit)
    })
    .await
}

/// [`Documents::mark_delivered`], from async code.
pub(crate) async fn mark_delivered(
    documents: &Arc<dyn Documents>,
    claimed: &Claimed,
    conversion: Option<u64>,
) -> Result<bool, Error> {
    if let Some(pg) = documents.postgres() {
        return pg.mark_delivered_async(claimed, conversion).await;
    }
    let claimed = claimed.clone();
    blocking(documents, "an outbox call", move |documents| {
        documents.mark_delivered(&claimed, conversion)
    })
    .await
}

/// [`Documents::postpone`], from async code.
pub(crate) async fn postpone(
    documents: &Arc<dyn Documents>,
    claimed: &Claimed,
    error: &str,
    wait: Duration,
) -> Result<bool, Error> {
    if let Some(pg) = documents.postgres() {
        return pg.postpone_async(claimed, error, wait).await;
    }
    let (claimed, error) = (claimed.clone(), error.to_owned());
    blocking(documents, "an outbox call", move |documents| {
        documents.postpone(&claimed, &error, wait)
    })
    .await
}

/// [`Documents::mark_rejected`], from async code.
pub(crate) async fn mark_rejected(
    documents: &Arc<dyn Documents>,
    claimed: &Claimed,
    error: &str,
) -> Result<bool, Error> {
    if let Some(pg) = documents.postgres() {
        return pg.mark_rejected_async(claimed, error).await;
    }
    let (claimed, error) = (claimed.clone(), error.to_owned());
    blocking(documents, "an outbox call", move |documents| {
        documents.mark_rejected(&claimed, &error)
    })
    .await
}

/// [`Documents::sweep`], from async code.
pub(crate) async fn sweep(documents: &Arc<dyn Documents>, kept: Duration) -> Result<usize, Error> {
    if let Some(pg) = documents.postgres() {
        return pg.sweep_async(kept).await;
    }
    blocking(documents, "the sweep", move |documents| {
        documents.sweep(kept)
    })
    .await
}

/// Runs `call` on a blocking thread.
async fn blocking<T: Send + 'static>(
    documents: &Arc<dyn Documents>,
    what: &str,
    call: impl FnOnce(&dyn Documents) -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    let documents = Arc::clone(documents);
    tokio::task::spawn_blocking(move || call(documents.as_ref()))
        .await
        .map_err(|error| Error::Interrupted(format!("{what}: {error}")))?
}
