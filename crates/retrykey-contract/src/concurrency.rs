//! Races on real threads: callers released together by a barrier, then the stored state checked.

use std::sync::Barrier;
use std::thread;

use retrykey::{Ledger, Limits, Receipt};

use crate::fixtures::{key, receipt, request, stored};

/// Rounds per stress test: `STRESS_ROUNDS` from the environment, 3 when unset.
pub fn stress_rounds() -> usize {
    std::env::var("STRESS_ROUNDS")
        .ok()
        .and_then(|rounds| rounds.parse().ok())
        .unwrap_or(3)
}

/// `callers` threads apply one operation under one key at the same moment.
///
/// Exactly one of them applies it; every other one gets the same receipt back as a replay.
pub fn one_key_burst<L: Ledger>(make: &dyn Fn(Limits) -> L, callers: usize) {
    let ledger = make(Limits::default());
    let (op, work) = (key("op-1"), request("convert-document", 7));
    let barrier = Barrier::new(callers);

    let replies: Vec<Receipt> = thread::scope(|scope| {
        let handles: Vec<_> = (0..callers)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    ledger.apply(&op, &work)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .expect("caller thread")
                    .expect("every caller is answered")
            })
            .collect()
    });

    let originals = replies.iter().filter(|reply| !reply.replayed).count();
    assert_eq!(originals, 1, "exactly one caller applies the operation");
    for reply in &replies {
        assert_eq!(
            Receipt {
                replayed: false,
                ..*reply
            },
            receipt(1, 7),
            "every caller sees the one original receipt"
        );
    }
    assert_eq!(stored(&ledger), (7, 1), "one effect, one record");
}

/// `callers` threads each apply their own operation at the same moment; none is lost.
///
/// The receipts must number the operations 1..=callers, and ordered by number their totals
/// must climb by each operation's units up to the stored total.
pub fn distinct_keys_burst<L: Ledger>(make: &dyn Fn(Limits) -> L, callers: usize) {
    let ledger = make(Limits {
        max_records: callers,
        ..Limits::default()
    });
    let barrier = Barrier::new(callers);
    let units = |caller: usize| caller as u64 % 5 + 1;

    let mut replies: Vec<(Receipt, u64)> = thread::scope(|scope| {
        let handles: Vec<_> = (0..callers)
            .map(|caller| {
                let (ledger, barrier) = (&ledger, &barrier);
                scope.spawn(move || {
                    let op = key(&format!("op-{caller}"));
                    barrier.wait();
                    let reply = ledger.apply(&op, &request("convert-document", units(caller)));
                    (reply.expect("every caller is answered"), units(caller))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("caller thread"))
            .collect()
    });

    let expected_total: u64 = (0..callers).map(units).sum();
    assert_eq!(
        stored(&ledger),
        (expected_total, callers),
        "no update was lost"
    );
    replies.sort_by_key(|(reply, _)| reply.operation);
    let mut running = 0;
    for (n, (reply, units)) in replies.iter().enumerate() {
        running += units;
        assert_eq!(
            *reply,
            receipt(n as u64 + 1, running),
            "receipts number the operations once each and record the total at their commit"
        );
    }
}
