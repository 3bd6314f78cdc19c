//! Test support shared by the stages' checks, tests, examples and labs.
//!
//! None of this is product code: a product crate only depends on this crate as a
//! dev-dependency. What is here is what several stages' tests need alike:
//!
//! - [`ScratchFile`]: an SQLite file of one test's own, deleted with its log files when dropped.
//! - [`FreshSchema`]: a PostgreSQL schema of one test's own, dropped with everything in it.
//! - [`proxy`]: a TCP proxy that cuts a PostgreSQL connection exactly around a commit, or
//!   plays an outage.
//! - [`pgbench`]: PostgreSQL's own benchmark, the yardstick the benchmarks divide by.
//! - [`load`]: what the load runs share: a `payments` process, resident memory, a time bound.
//! - [`run_check_within`]: one check on a runtime of its own, failed if it hangs; and
//!   [`wait_until`], a test's wait for a condition, failed if it never comes.
//! - [`program`]: a finished program's output and one-line refusals, read as an operator would.
//! - [`server_programs`]: PostgreSQL's server programs, for a run that starts a server of its own.
//!
//! # Reading order
//!
//! 1. [`scratch`]: the two throwaway places a test's data lives in.
//! 2. [`proxy`]: how a test produces the connection losses a client cannot tell apart.
//! 3. [`pgbench`]: how a benchmark runs pgbench next to itself.
//! 4. [`load`]: how a load run starts the server it measures and bounds itself in time.
//!
//! # Example
//!
//! ```
//! use retrykey_testkit::ScratchFile;
//!
//! let path = {
//!     let file = ScratchFile::new("example");
//!     std::fs::write(file.path(), b"a database would go here")?;
//!     assert!(file.path().exists());
//!     file.path().to_owned()
//! };
//! assert!(!path.exists(), "dropping the scratch file deletes it");
//! # Ok::<(), std::io::Error>(())
//! ```

mod bounded;
pub mod load;
pub mod pgbench;
mod plain;
pub mod program;
pub mod proxy;
pub mod scratch;
pub mod server_programs;

pub use bounded::{run_check_within, wait_until};
pub use scratch::{FreshSchema, ScratchFile, remove_files};
