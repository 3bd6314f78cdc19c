//! The checkout's rows in process memory, beside a [`MemoryEntries`]: one process, no file.
//!
//! The simulator keeps them here: a file's blocking calls run on threads of their own, whose
//! timing a seed does not decide, so a run would not replay exactly. Each phase is one step
//! under one lock, fenced at the row: the row keeps the highest token that wrote it, and a
//! phase that carries a lower one writes nothing, as a database store refuses an older token.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use retrykey_http::{Entries, EntryId, MemoryEntries, Reservation, StoreLimits, StoredResponse};
use tokio::time::Instant;

use crate::{Books, BooksError, BooksFuture, End, Order, Point, Progress, Purchase};

/// The checkout's rows and the key's store, in memory.
#[derive(Debug)]
pub struct MemoryBooks {
    entries: Arc<MemoryEntries>,
    rows: Mutex<Rows>,
}

#[derive(Debug, Default)]
struct Rows {
    orders: Vec<Order>,
    checkouts: HashMap<EntryId, Row>,
}

/// One operation's row.
#[derive(Debug)]
struct Row {
    purchase: Purchase,
    progress: Progress,
    /// The highest token that wrote the row.
    token: retrykey_http::Token,
    updated: Instant,
}

impl MemoryBooks {
    /// Empty books, with a key's store of `limits`.
    pub fn new(limits: StoreLimits) -> Self {
        Self {
            entries: Arc::new(MemoryEntries::new(limits)),
            rows: Mutex::new(Rows::default()),
        }
    }

    fn rows(&self) -> MutexGuard<'_, Rows> {
        self.rows.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `write` on the operation's row if `fence` may write it, and stamps the row.
    fn phase<T>(
        &self,
        fence: Reservation,
        write: impl FnOnce(&mut Rows, &mut Row) -> T,
    ) -> Result<T, BooksError> {
        let mut rows = self.rows();
        let mut row = (rows.checkouts.remove(&fence.id))
            .ok_or_else(|| BooksError::Store("the operation has no row".to_owned()))?;
        if fence.token < row.token {
            rows.checkouts.insert(fence.id, row);
            return Err(BooksError::Fenced);
        }
        let value = write(&mut rows, &mut row);
        row.token = fence.token;
        row.updated = Instant::now();
        rows.checkouts.insert(fence.id, row);
        Ok(value)
    }
}

impl Books for MemoryBooks {
    fn entries(&self) -> Arc<dyn Entries> {
        Arc::clone(&self.entries) as Arc<dyn Entries>
    }

    fn start(&self, fence: Reservation, purchase: Purchase) -> BooksFuture<'_, Progress> {
        let mut rows = self.rows();
        if let Some(row) = rows.checkouts.get(&purchase.id) {
            let found = if fence.token < row.token {
                Err(BooksError::Fenced)
            } else if row.purchase.fingerprint != purchase.fingerprint {
                // A row another request under this key began is not this one's.
                Err(BooksError::Reused)
            } else {
                Ok(row.progress)
            };
            return Box::pin(std::future::ready(found));
        }
        let order = rows.orders.len() as i64 + 1;
        rows.orders.push(Order {
            order,
            amount: purchase.amount,
            status: "pending".to_owned(),
            shipments: 0,
        });
        let progress = Progress {
            order,
            amount: purchase.amount,
            point: Point::OrderCreated,
            charge: None,
        };
        let row = Row {
            purchase,
            progress,
            token: fence.token,
            updated: Instant::now(),
        };
        rows.checkouts.insert(purchase.id, row);
        Box::pin(std::future::ready(Ok(progress)))
    }

    fn charged(&self, fence: Reservation, operation: EntryId, charge: i64) -> BooksFuture<'_, ()> {
        let fence = Reservation {
            id: operation,
            ..fence
        };
        let charged = self.phase(fence, |_, row| {
            row.progress.point = Point::Charged;
            row.progress.charge = Some(charge);
        });
        Box::pin(std::future::ready(charged))
    }

    fn finish(
        &self,
        fence: Reservation,
        operation: EntryId,
        order: i64,
        end: End,
    ) -> BooksFuture<'_, StoredResponse> {
        let fence = Reservation {
            id: operation,
            ..fence
        };
        let finished = self.phase(fence, |rows, row| {
            let (status, shipments, answer) = match end {
                End::Paid(answer) => ("paid", 1, answer),
                End::Declined(answer) => ("declined", 0, answer),
            };
            if let Some(kept) = rows.orders.iter_mut().find(|kept| kept.order == order) {
                kept.status = status.to_owned();
                kept.shipments += shipments;
            }
            row.progress.point = Point::Finished;
            answer
        });
        Box::pin(std::future::ready(finished))
    }

    fn stalled(&self, idle: Duration, limit: usize) -> BooksFuture<'_, Vec<Purchase>> {
        let now = Instant::now();
        let rows = self.rows();
        let mut stalled: Vec<&Row> = (rows.checkouts.values())
            .filter(|row| row.progress.point != Point::Finished)
            .filter(|row| now.saturating_duration_since(row.updated) >= idle)
            .collect();
        stalled.sort_by_key(|row| row.updated);
        let found = stalled.iter().take(limit).map(|row| row.purchase).collect();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn reap(&self, retention: Duration, limit: usize) -> BooksFuture<'_, usize> {
        let now = Instant::now();
        let mut rows = self.rows();
        let mut old: Vec<(Instant, EntryId)> = (rows.checkouts.iter())
            .filter(|(_, row)| row.progress.point == Point::Finished)
            .filter(|(_, row)| now.saturating_duration_since(row.updated) >= retention)
            .map(|(id, row)| (row.updated, *id))
            .collect();
        old.sort_by_key(|(updated, _)| *updated);
        old.truncate(limit);
        for (_, id) in &old {
            rows.checkouts.remove(id);
        }
        Box::pin(std::future::ready(Ok(old.len())))
    }

    fn orders(&self) -> BooksFuture<'_, Vec<Order>> {
        Box::pin(std::future::ready(Ok(self.rows().orders.clone())))
    }
}
