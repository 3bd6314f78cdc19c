//! Retention: records are kept for a window, then a sweeper deletes them.
//!
//! The contract, tested in `tests/it/retention.rs`:
//! - a record replays for at least
//!   [`LedgerOptions::retention`](crate::LedgerOptions::retention) after it was created; until
//!   the sweeper has deleted it, it still replays after that;
//! - once swept, its key is forgotten: the same key and request apply as a *new* operation
//!   (a new effect, a new operation number). So the window must be longer than the longest
//!   delay after which a client may still retry;
//! - a full ledger rejects new operations ([`retrykey::Error::Capacity`]); it never evicts a
//!   live record to make room. Only the sweeper frees space, and only from expired records;
//! - operation numbers never repeat: they count every operation ever applied, not live records.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use crate::{PgLedger, SqliteLedger};

/// A ledger whose expired records can be deleted.
pub trait Sweep: Send + Sync {
    /// Deletes the records created before `now` minus the retention window; returns how many.
    fn sweep(&self, now: SystemTime) -> Result<usize, retrykey::Error>;
}

impl Sweep for SqliteLedger {
    fn sweep(&self, now: SystemTime) -> Result<usize, retrykey::Error> {
        SqliteLedger::sweep(self, now)
    }
}

impl Sweep for PgLedger {
    fn sweep(&self, now: SystemTime) -> Result<usize, retrykey::Error> {
        PgLedger::sweep(self, now)
    }
}

/// A background thread that sweeps a ledger every `interval` until it is stopped or dropped.
#[derive(Debug)]
pub struct Sweeper {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Sweeper {
    /// Starts sweeping `ledger` now and then every `interval`. A failed sweep is retried at the
    /// next tick: nothing is lost by sweeping late.
    pub fn start<L: Sweep + 'static>(ledger: Arc<L>, interval: Duration) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            loop {
                let _ = ledger.sweep(SystemTime::now());
                match stopped.recv_timeout(interval) {
                    Err(RecvTimeoutError::Timeout) => {}
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        });
        Self {
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Stops the thread and waits for it.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Sweeper {
    fn drop(&mut self) {
        self.shutdown();
    }
}
