//! What several test files need: unpacking an outcome that must have succeeded.

use std::fmt::Debug;

use retrykey_client::Outcome;

/// The value, replay marker and attempt count of a successful outcome; any other outcome fails
/// the test and prints itself.
pub fn expect_succeeded<T: Debug>(outcome: Outcome<T>) -> (T, bool, u32) {
    match outcome {
        Outcome::Succeeded {
            value,
            replayed,
            attempts,
        } => (value, replayed, attempts),
        other => panic!("expected a success, got {other:?}"),
    }
}
