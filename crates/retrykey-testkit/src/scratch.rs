//! Throwaway places for one test's data: an SQLite file, a PostgreSQL schema.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A database file of one test's or demo's own in the temporary folder, deleted with its log
/// files when dropped. `what` names it; the process id and a counter keep it apart from the rest.
#[derive(Debug)]
pub struct ScratchFile(PathBuf);

impl ScratchFile {
    /// A path no other scratch file of this machine's running processes uses, with nothing there.
    pub fn new(what: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "retrykey-{what}-{}-{}.sqlite",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        remove_files(&path); // left over by an earlier process with the same id
        Self(path)
    }

    /// Where the file is (it exists once something opens it).
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for ScratchFile {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        remove_files(&self.0);
    }
}

/// Deletes a database file with its write-ahead log and shared-memory index; what is already
/// gone, or cannot be deleted, is left as it is (this is clean-up, not bookkeeping).
pub fn remove_files(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let _ = std::fs::remove_file(file);
    }
}

/// A new PostgreSQL schema for one test, dropped with everything in it when the guard drops,
/// also when the test fails. Declared before the ledgers that use it, it outlives them.
///
/// Nothing is created here: the first ledger or store opened in the schema creates it.
#[derive(Debug)]
pub struct FreshSchema {
    url: String,
    name: String,
}

impl FreshSchema {
    /// A new schema in the database at `url` (created by the first ledger opened in it).
    pub fn new(url: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        Self {
            url: url.to_owned(),
            name: format!(
                "rk_crash_{}_{}_{seconds}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
        }
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for FreshSchema {
    fn drop(&mut self) {
        // One plain connection: a ledger's pool would first create what is dropped. The name
        // is made of digits and underscores, so it needs no quoting; failures are ignored.
        let _ = crate::plain::batch(
            &self.url,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name),
        );
    }
}
