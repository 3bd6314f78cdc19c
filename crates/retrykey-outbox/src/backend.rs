//! The backend a `--db` flag names, opened as an [`OutboxStore`].

use retrykey_program::flags::Database;

use crate::pg::PgOutbox;
use crate::sqlite::SqliteOutbox;
use crate::store::OutboxStore;
use crate::{DocumentsOptions, Error};

/// Opens the document service's database `db` names. Blocks: from async code, call it in
/// `tokio::task::spawn_blocking`.
pub fn open(db: &Database, options: DocumentsOptions) -> Result<Box<dyn OutboxStore>, Error> {
    Ok(match db {
        Database::Sqlite(path) => Box::new(SqliteOutbox::open(path, options)?),
        Database::Postgres(url) => Box::new(PgOutbox::connect(url, options)?),
    })
}
