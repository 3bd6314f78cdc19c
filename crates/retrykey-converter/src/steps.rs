//! The seam of the consumer: the dedup transaction a negative variant may get wrong.

use retrykey_wire::ConversionRequest;
use rusqlite::Transaction;

use crate::rows::Converted;

/// The SQLite consumer's dedup transaction, the piece a lab under `labs/` replaces: the one
/// method has the correct default, and [`StandardConvert`] uses it. A seam for the labs, hidden
/// from the documented API (see `labs/README.md`).
#[doc(hidden)]
pub trait ConvertSteps: Send + Sync + 'static {
    /// Runs inside a `BEGIN IMMEDIATE` transaction that the caller commits: see
    /// [`crate::convert::convert`].
    fn convert(
        &self,
        tx: &Transaction<'_>,
        request: &ConversionRequest,
        now_ms: i64,
    ) -> rusqlite::Result<Converted> {
        crate::convert::convert(tx, request, now_ms)
    }
}

/// The correct dedup transaction: what
/// [`ConverterDb::open_sqlite`](crate::ConverterDb::open_sqlite) uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct StandardConvert;

impl ConvertSteps for StandardConvert {}
