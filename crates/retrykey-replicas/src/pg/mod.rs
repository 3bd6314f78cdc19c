//! PLACEHOLDER: the PostgreSQL store is being written; see sqlite/ for the shape.
use crate::Options;
use retrykey_http::payments::PaymentBook;
use retrykey_http::{
    EntryId, Error, Fingerprint, Lookup, Reservation, Reserve, ResponseStore, StoreFuture,
    StoredResponse, Token,
};
/// PLACEHOLDER
#[derive(Debug, Clone)]
pub struct PgStore;
impl PgStore {
    /// PLACEHOLDER
    pub async fn connect(_url: &str, _options: Options) -> Result<Self, Error> {
        Err(Error::StoreUnavailable("not yet".into()))
    }
}
impl ResponseStore for PgStore {
    fn lookup<'a>(&'a self, _: &'a EntryId) -> StoreFuture<'a, Lookup> {
        unreachable!()
    }
    fn reserve<'a>(&'a self, _: &'a EntryId, _: &'a Fingerprint) -> StoreFuture<'a, Reserve> {
        unreachable!()
    }
    fn complete<'a>(&'a self, _: &'a EntryId, _: Token, _: StoredResponse) -> StoreFuture<'a, ()> {
        unreachable!()
    }
    fn release<'a>(&'a self, _: &'a EntryId, _: Token) -> StoreFuture<'a, ()> {
        unreachable!()
    }
}
/// PLACEHOLDER
#[derive(Debug, Clone)]
pub struct PgBook;
impl PgBook {
    /// PLACEHOLDER
    pub fn new(_: &PgStore) -> Self {
        Self
    }
}
impl PaymentBook for PgBook {
    fn charge<'a>(
        &'a self,
        _: u64,
        _: Option<Reservation>,
        _: fn(u64) -> StoredResponse,
    ) -> StoreFuture<'a, u64> {
        unreachable!()
    }
    fn charges(&self) -> StoreFuture<'_, u64> {
        unreachable!()
    }
}
