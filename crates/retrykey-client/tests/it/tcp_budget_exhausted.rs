//! Over loopback TCP: a service that never answers costs the budget, not more, and ends unknown.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use retrykey::Request;
use retrykey_client::tcp::TcpAdapter;
use retrykey_client::{Client, Failure, Outcome, Policy, Stop};
use tokio::net::TcpListener;

// Every attempt connects and then hears nothing: each is cut at the attempt timeout, and the
// operation stops when the budget is spent, reporting unknown and how many attempts it made.
// The budget holds ten attempt timeouts, so that a busy machine that runs the first one late
// still leaves room for a second.
#[tokio::test]
async fn silent_service_exhausts_the_budget() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&accepted);
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::AcqRel);
            held.push(stream); // keep the connection open, never reply
        }
    });

    let policy = Policy::builder()
        .max_attempts(20)
        .base(Duration::from_millis(10))
        .cap(Duration::from_millis(20))
        .budget(Duration::from_secs(2))
        .attempt_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let client = Client::builder(policy).seed(8).build();
    let ledger = TcpAdapter::new(addr);
    let request = Request::new("convert-document", 7).unwrap();
    let outcome = client.run(|a| ledger.apply(a, &request)).await;

    let Outcome::Unknown {
        last,
        attempts,
        stop,
        may_have_applied,
    } = outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(
        (last, stop, may_have_applied),
        (Failure::TimedOut, Stop::BudgetExhausted, true)
    );
    assert!(
        (2..=11).contains(&attempts),
        "attempts of 200 ms in a 2 s budget, got {attempts}"
    );
    // A connection is complete in the kernel before the service takes it: wait (bounded) for
    // the service to take the last one instead of counting before it had the chance.
    let deadline = Instant::now() + Duration::from_secs(60);
    while accepted.load(Ordering::Acquire) < attempts {
        assert!(
            Instant::now() < deadline,
            "only {} of {attempts} attempts reached the service",
            accepted.load(Ordering::Acquire)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    silent.abort();
    assert_eq!(
        attempts,
        accepted.load(Ordering::Acquire),
        "each attempt reached the service, and nothing else did"
    );
}
