//! Checks on operation identity: one key per operation, so a lost reply is replayed, not redone.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use retrykey::{Key, Ledger, Request, Store};

use retrykey_client::adapters::MemoryAdapter;
use retrykey_client::{Client, Failure, Outcome, Policy, RetrySteps, Success};

use crate::paused;

/// Every attempt of one operation presents the same key, chosen before the first attempt.
pub fn key_is_fixed_before_the_first_attempt<P: RetrySteps>() {
    paused(async {
        let client = Client::builder(Policy::default())
            .steps::<P>()
            .seed(1)
            .build();
        let seen: Mutex<Vec<Key>> = Mutex::default();
        let outcome = client
            .run(|attempt| {
                seen.lock().unwrap().push(attempt.key.clone());
                async { Err::<Success<()>, _>(Failure::Lost("reset by peer".into())) }
            })
            .await;
        let seen = seen.into_inner().unwrap();
        assert_eq!(
            outcome.attempts(),
            3,
            "the policy allows 3 attempts: {outcome:?}"
        );
        assert_eq!(seen.len(), 3);
        let distinct = seen.iter().collect::<HashSet<_>>().len();
        assert_eq!(
            distinct, 1,
            "every attempt must present the operation's one key; got {distinct} different keys"
        );
    });
}

/// A reply lost after the commit is retried under the same key and answered with the original
/// receipt: one effect, one record.
pub fn lost_reply_is_replayed_not_reapplied<P: RetrySteps>() {
    paused(async {
        let store = Arc::new(Store::new());
        let ledger = MemoryAdapter::new(store.clone());
        ledger.lose_next_replies(1);
        let client = Client::builder(Policy::default())
            .steps::<P>()
            .seed(2)
            .build();
        let request = Request::new("convert-document", 7).unwrap();

        let outcome = client.run(|attempt| ledger.apply(attempt, &request)).await;

        let Outcome::Succeeded {
            value,
            replayed,
            attempts,
        } = outcome
        else {
            panic!("expected a success after the lost reply, got {outcome:?}");
        };
        assert_eq!(attempts, 2, "one lost reply, one retry");
        assert!(
            replayed,
            "the retry must be answered from the record, got a new effect: {value:?}"
        );
        assert_eq!(
            (value.operation, value.total),
            (1, 7),
            "the original receipt"
        );
        assert_eq!(store.total().unwrap(), 7, "the effect must happen once");
        assert_eq!(store.records().unwrap(), 1, "one operation, one record");
    });
}
