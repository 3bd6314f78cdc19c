//! The synchronization primitives the ledger uses: `std` normally, `loom` under `--cfg loom`.
//!
//! Everything that locks goes through this module, so the loom models check the very code that
//! ships. It is public only so that the negative variants under `labs/` lock the same way.

// ANCHOR: shim
#[cfg(loom)]
pub use loom::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::sync::{Mutex, MutexGuard};
// ANCHOR_END: shim

/// Locks `mutex`, recovering the guard if another thread panicked while holding it.
///
/// The ledger's state is only changed after every check has passed, so a panic can never leave
/// it half-written: the data behind a poisoned lock is still consistent.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
