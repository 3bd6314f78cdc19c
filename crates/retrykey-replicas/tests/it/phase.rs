//! A phase: a handler's rows committed under the key's fence without the key's answer, so that
//! a handler can stop at a recovery point (before a call to another service) and a retry that
//! takes the key over resumes from it. A phase of the attempt that holds the key commits and
//! leaves the key in flight; one of an attempt whose key was taken over writes nothing; a phase
//! whose work fails writes nothing either.
//!
//! Two stores on one database stand for two replicas; replica B reads the clock a minute ahead,
//! so it sees A's one-second lease lapsed at once and takes the key over with a higher token.

use std::time::Duration;

use retrykey_http::{
    Entries, EntryId, Fingerprint, IdempotencyKey, Lookup, Reservation, Reserve, Scope,
};
use retrykey_program::Clock;
use retrykey_replicas::rusqlite::Transaction;
use retrykey_replicas::{CommitError, Lease, SqliteEntries, StoreOptions};

fn entry(key: &str) -> (EntryId, Fingerprint) {
    let key = IdempotencyKey::parse(key.as_bytes()).expect("a valid key");
    (
        EntryId::new(&Scope::Anonymous, &key),
        Fingerprint::from_bytes([9; 32]),
    )
}

/// A one-second lease, read on `clock`.
fn options(clock: Clock) -> StoreOptions {
    StoreOptions {
        lease: Lease {
            duration: Duration::from_secs(1),
            ..Lease::default()
        },
        clock,
        ..StoreOptions::default()
    }
}

async fn reserve(store: &impl Entries, id: &EntryId, fingerprint: &Fingerprint) -> Reservation {
    let Ok(Reserve::Reserved(token)) = store.reserve(id, fingerprint).await else {
        panic!("the key is reserved");
    };
    Reservation { id: *id, token }
}

mod sqlite {
    use retrykey_replicas::rusqlite;

    use super::*;

    fn create(tx: &Transaction<'_>) -> rusqlite::Result<()> {
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS steps (id INTEGER PRIMARY KEY, point TEXT NOT NULL)",
        )
    }

    async fn points(store: &SqliteEntries) -> Vec<String> {
        let effect = store
            .commit(None, |tx| {
                create(tx)?;
                let mut statement = tx.prepare("SELECT point FROM steps ORDER BY id")?;
                let points = statement
                    .query_map([], |row| row.get(0))?
                    .collect::<Result<Vec<String>, _>>()?;
                let answer = retrykey_http::payments::created(0);
                Ok::<_, rusqlite::Error>(retrykey_replicas::Effect::new(points, answer))
            })
            .await
            .expect("the rows read");
        effect.value
    }

    async fn step(
        store: &SqliteEntries,
        reservation: Reservation,
        point: &'static str,
    ) -> Result<i64, CommitError<rusqlite::Error>> {
        store
            .phase(reservation, move |tx| {
                create(tx)?;
                tx.execute("INSERT INTO steps (point) VALUES (?1)", [point])?;
                Ok(tx.last_insert_rowid())
            })
            .await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_phase_commits_its_rows_and_leaves_the_key_in_flight() {
        let a = SqliteEntries::throwaway(options(Clock::system())).expect("a store");
        let (id, fingerprint) = entry("phase-1");
        let held = reserve(&a, &id, &fingerprint).await;
        assert_eq!(step(&a, held, "order-created").await.ok(), Some(1));
        assert_eq!(step(&a, held, "charged").await.ok(), Some(2));
        assert_eq!(points(&a).await, ["order-created", "charged"]);
        let lookup = a.lookup(&id).await.expect("a lookup");
        assert!(matches!(lookup, Lookup::InFlight { .. }), "{lookup:?}");
        let holder = a.holder(&id).await.expect("a read").expect("a record");
        assert_eq!((holder.token, holder.finished), (held.token, false));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_phase_of_a_taken_over_attempt_writes_nothing() {
        let a = SqliteEntries::throwaway(options(Clock::system())).expect("replica A's store");
        let ahead = options(Clock::ahead(Duration::from_secs(60)));
        let b = SqliteEntries::open(a.path(), ahead).expect("replica B's store, same file");
        let (id, fingerprint) = entry("phase-2");
        let first = reserve(&a, &id, &fingerprint).await;
        assert!(step(&a, first, "order-created").await.is_ok());
        let taken = reserve(&b, &id, &fingerprint).await;
        assert!(taken.token > first.token, "{taken:?} after {first:?}");

        let late = step(&a, first, "charged").await;
        assert!(matches!(late, Err(CommitError::Fenced)), "{late:?}");
        assert_eq!(points(&b).await, ["order-created"]);
        assert!(step(&b, taken, "charged").await.is_ok());
        assert_eq!(points(&b).await, ["order-created", "charged"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_phase_writes_nothing() {
        let a = SqliteEntries::throwaway(options(Clock::system())).expect("a store");
        let (id, fingerprint) = entry("phase-3");
        let held = reserve(&a, &id, &fingerprint).await;
        let failed = a
            .phase(held, |tx| {
                create(tx).map_err(|error| error.to_string())?;
                tx.execute("INSERT INTO steps (point) VALUES ('half')", [])
                    .map_err(|error| error.to_string())?;
                Err::<(), _>("the provider's answer does not parse".to_string())
            })
            .await;
        assert!(
            matches!(&failed, Err(CommitError::Work(why)) if why.contains("parse")),
            "{failed:?}"
        );
        assert!(points(&a).await.is_empty());
        let holder = a.holder(&id).await.expect("a read").expect("a record");
        assert_eq!((holder.token, holder.finished), (held.token, false));
    }
}

mod postgres {
    use retrykey_durable_checks::admin::url;
    use retrykey_replicas::PgEntries;
    use retrykey_replicas::tokio_postgres::Transaction;

    use super::*;

    async fn points(store: &PgEntries) -> Vec<String> {
        let effect = store
            .commit(None, |tx: &Transaction<'_>| {
                Box::pin(async move {
                    tx.batch_execute(
                        "CREATE TABLE IF NOT EXISTS steps (id bigserial PRIMARY KEY, point text NOT NULL)",
                    )
                    .await?;
                    let rows = tx.query("SELECT point FROM steps ORDER BY id", &[]).await?;
                    let points = rows.iter().map(|row| row.get(0)).collect::<Vec<String>>();
                    let answer = retrykey_http::payments::created(0);
                    Ok::<_, retrykey_replicas::tokio_postgres::Error>(
                        retrykey_replicas::Effect::new(points, answer),
                    )
                })
            })
            .await
            .expect("the rows read");
        effect.value
    }

    async fn step(
        store: &PgEntries,
        reservation: Reservation,
        point: &'static str,
    ) -> Result<(), CommitError<retrykey_replicas::tokio_postgres::Error>> {
        store
            .phase(reservation, move |tx: &Transaction<'_>| {
                Box::pin(async move {
                    tx.batch_execute(
                        "CREATE TABLE IF NOT EXISTS steps (id bigserial PRIMARY KEY, point text NOT NULL)",
                    )
                    .await?;
                    tx.execute("INSERT INTO steps (point) VALUES ($1)", &[&point]).await?;
                    Ok(())
                })
            })
            .await
    }

    // The same story as the SQLite one, in one test: the holder's phases commit and leave the
    // key in flight; after a takeover the old attempt's phase writes nothing.
    #[cfg_attr(not(retrykey_pg), ignore = "needs PostgreSQL: set RETRYKEY_PG_URL")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_phase_is_fenced_by_the_key_on_postgres() {
        let a = PgEntries::throwaway(&url(), options(Clock::system()))
            .await
            .expect("replica A's store in a fresh schema");
        let ahead = options(Clock::ahead(Duration::from_secs(60)));
        let b = PgEntries::connect_in_schema(&url(), a.schema(), ahead)
            .await
            .expect("replica B's store, same schema");
        let (id, fingerprint) = entry("phase-pg");
        let first = reserve(&a, &id, &fingerprint).await;
        assert!(step(&a, first, "order-created").await.is_ok());
        let lookup = a.lookup(&id).await.expect("a lookup");
        assert!(matches!(lookup, Lookup::InFlight { .. }), "{lookup:?}");

        let taken = reserve(&b, &id, &fingerprint).await;
        assert!(taken.token > first.token, "{taken:?} after {first:?}");
        let late = step(&a, first, "charged").await;
        assert!(matches!(late, Err(CommitError::Fenced)), "{late:?}");
        assert_eq!(points(&b).await, ["order-created"]);
        assert!(step(&b, taken, "charged").await.is_ok());
        assert_eq!(points(&b).await, ["order-created", "charged"]);
    }
}
