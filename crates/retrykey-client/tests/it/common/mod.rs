//! What several test files need: a loopback ledger service, a port with nothing on it, a
//! loopback HTTP server that records what it receives, and unpacking an outcome that must have
//! succeeded.

pub mod recorder;

use std::fmt::Debug;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use retrykey::Store;
use retrykey_client::tcp::{Faults, LedgerServer};
use retrykey_client::{Failure, Outcome, Stop};

/// The TCP ledger service in front of `store`, on a free loopback port, with no fault armed.
pub async fn service(store: &Arc<Store>) -> LedgerServer {
    let loopback = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    LedgerServer::start(loopback, store.clone(), Faults::default())
        .await
        .unwrap()
}

/// A loopback address with nothing listening on it (the port was free a moment ago).
pub fn free_port() -> SocketAddr {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap()
}

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

/// All three attempts were refused: unknown to the caller, yet
/// provably not applied, since no request ever left.
pub fn assert_all_refused<T: Debug>(outcome: &Outcome<T>) {
    assert!(
        matches!(
            outcome,
            Outcome::Unknown {
                last: Failure::Refused(_),
                attempts: 3,
                stop: Stop::AttemptsExhausted,
                may_have_applied: false
            }
        ),
        "{outcome:?}"
    );
}
