//! How a test tells a process to stop at a point: abort there, or announce it and wait.
//!
//! Both refuse, with [`Error::NotCompiled`], in a build without the `failpoints` feature: a
//! point that was asked for and can never be reached must stop the process, not let it run.

use crate::COMPILED;

/// Why a process cannot be stopped at the points it was asked to stop at.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A point was asked for, but this program was built without its crash points.
    #[error(
        "cannot stop at {asked}: this program was built without crash points (build it with `--features failpoints`)"
    )]
    NotCompiled {
        /// What was asked for: a point's name, or the `FAILPOINTS` setting.
        asked: String,
    },
    /// The `fail` crate refused the configuration.
    #[error("cannot pause at {point}: {reason}")]
    Config {
        /// The point's name.
        point: &'static str,
        /// The `fail` crate's reason.
        reason: String,
    },
}

/// The failpoints that `FAILPOINTS` configured (`FAILPOINTS=after-effect=return`), kept for as
/// long as this value lives.
pub struct Scenario {
    #[cfg(feature = "failpoints")]
    _scenario: fail::FailScenario<'static>,
}

impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scenario").finish_non_exhaustive()
    }
}

/// Configures the failpoints named in the `FAILPOINTS` environment variable, as the `fail` crate
/// reads it; a `return` action aborts the process at that point.
///
/// # Errors
///
/// [`Error::NotCompiled`] when `FAILPOINTS` names a point and this build has no crash points.
pub fn scenario() -> Result<Scenario, Error> {
    if !COMPILED
        && let Ok(asked) = std::env::var("FAILPOINTS")
        && !asked.trim().is_empty()
    {
        return Err(Error::NotCompiled {
            asked: format!("FAILPOINTS={asked}"),
        });
    }
    Ok(Scenario {
        #[cfg(feature = "failpoints")]
        _scenario: fail::FailScenario::setup(),
    })
}

/// Makes every request that reaches the failpoint `name` announce it on stdout
/// (`paused at <name>`) and then stop there for good: how `--pause-at` is built, in `payments`
/// and in the outbox's `dispatcher` and `converter`.
///
/// The announcement is the test's cue: once it is on stdout, the request is exactly at the
/// point, and a SIGKILL then shows what a crash there leaves behind.
///
/// # Errors
///
/// [`Error::NotCompiled`] in a build without crash points (the announcement would never come);
/// [`Error::Config`] if the `fail` crate refuses the callback.
pub fn pause_at(name: &'static str) -> Result<(), Error> {
    #[cfg(not(feature = "failpoints"))]
    return Err(Error::NotCompiled {
        asked: name.to_owned(),
    });
    #[cfg(feature = "failpoints")]
    fail::cfg_callback(name, move || {
        {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "paused at {name}");
            let _ = stdout.flush();
        }
        // Some points run on an async worker thread: hand its other tasks to another worker,
        // so that the rest of the server (a count, other keys) still answers.
        tokio::task::block_in_place(|| {
            loop {
                std::thread::park(); // a spurious wake-up parks again
            }
        })
    })
    .map_err(|reason| Error::Config {
        point: name,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // A build without crash points refuses a pause instead of never pausing; one with them
    // accepts it.
    #[test]
    fn pause_at_is_refused_exactly_when_the_points_are_not_compiled() {
        let result = pause_at("knobs-test-point");
        if COMPILED {
            assert!(result.is_ok(), "{result:?}");
            #[cfg(feature = "failpoints")]
            fail::remove("knobs-test-point");
        } else {
            match result {
                Err(Error::NotCompiled { asked }) => assert_eq!(asked, "knobs-test-point"),
                other => panic!("expected NotCompiled, got {other:?}"),
            }
        }
    }
}
