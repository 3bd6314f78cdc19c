//! The layout versions, the same for both databases: what opening a database at each version
//! does, the version table, and the previous layout's receipts, read and written.
//!
//! Each backend's `schema` module holds only what differs: its SQL and its transaction.

use retrykey::{Key, Request};

use crate::{Error, SCHEMA_VERSION};

/// What opening a database does, by the layout version it records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opening {
    /// No layout yet: create the current one, and [`version_table`].
    Create,
    /// The previous layout: migrate it to the current one.
    MigrateV1,
    /// The current layout: nothing to do.
    Current,
}

impl Opening {
    /// What to do with a database that records `found`; a layout newer than this build's is
    /// refused, with nothing written.
    pub(crate) fn of(found: Option<i64>) -> Result<Self, Error> {
        match found {
            None => Ok(Self::Create),
            Some(1) => Ok(Self::MigrateV1),
            Some(SCHEMA_VERSION) => Ok(Self::Current),
            Some(found) => Err(Error::SchemaTooNew {
                found,
                supported: SCHEMA_VERSION,
            }),
        }
    }
}

/// The table that records the layout version, holding [`SCHEMA_VERSION`]: the same SQL in
/// both databases.
pub(crate) fn version_table() -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS retrykey_meta (version integer NOT NULL);
         INSERT INTO retrykey_meta (version) VALUES ({SCHEMA_VERSION});"
    )
}

/// The previous layout, in SQL both databases take (the tests write it to migrate it): one
/// ledger, no scope, no creation time, the receipt as one text field.
pub(crate) const LAYOUT_V1: &str = "
CREATE TABLE retrykey_meta (version integer NOT NULL);
INSERT INTO retrykey_meta (version) VALUES (1);
CREATE TABLE ledger (id integer PRIMARY KEY CHECK (id = 1), total bigint NOT NULL);
INSERT INTO ledger (id, total) VALUES (1, 0);
CREATE TABLE operations (
    key     text   PRIMARY KEY,
    job     text   NOT NULL,
    units   bigint NOT NULL,
    receipt text   NOT NULL
);
";

/// The operation number and total of `key`'s version-1 receipt, `"<operation>/<total>"`.
pub(crate) fn read_v1_receipt(key: &str, receipt: &str) -> Result<(i64, i64), Error> {
    let parsed = receipt
        .split_once('/')
        .and_then(|(operation, total)| Some((operation.parse().ok()?, total.parse().ok()?)));
    parsed.ok_or_else(|| Error::Migration {
        key: key.to_owned(),
        problem: format!("receipt {receipt:?} is not \"<operation>/<total>\""),
    })
}

/// One record as the previous release wrote it.
pub(crate) struct V1Record<'a> {
    pub(crate) key: &'a str,
    pub(crate) job: &'a str,
    pub(crate) units: i64,
    pub(crate) receipt: String,
}

/// The records the previous release wrote for `operations`, applied in order, and the total
/// it ended with.
pub(crate) fn v1_records(operations: &[(Key, Request)]) -> (Vec<V1Record<'_>>, i64) {
    let mut total = 0_i64;
    let records = operations
        .iter()
        .enumerate()
        .map(|(number, (key, request))| {
            let units = request.units() as i64;
            total += units;
            V1Record {
                key: key.as_str(),
                job: request.job(),
                units,
                receipt: format!("{}/{}", number + 1, total),
            }
        })
        .collect();
    (records, total)
}
