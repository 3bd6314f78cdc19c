//! Effects another service makes: a provider's charge under the key a service derived for its
//! call counts as the effect of the request that made the call.

use retrykey_history::{Ended, Entry, HistoryEvent, OpId, Reply, Rule, judge, violations};

const OP: OpId = OpId { client: 1, op: 1 };

fn at(at_ms: u64, host: &str, event: HistoryEvent) -> Entry {
    Entry {
        at_ms,
        host: host.to_owned(),
        event,
    }
}

/// A checkout paid under `key`: each attempt in `calls` calls the provider under that foreign
/// key, and the provider charges under each key of `charged` the first time it is called.
fn checkout(calls: &[&str], charged: &[&str]) -> Vec<Entry> {
    let mut history = Vec::new();
    for (n, foreign) in calls.iter().enumerate() {
        let attempt = n as u32 + 1;
        let start = attempt as u64 * 100;
        history.push(at(
            start,
            "client-1",
            HistoryEvent::Sent {
                id: OP,
                attempt,
                key: "k1".into(),
                amount: 7,
            },
        ));
        let call = HistoryEvent::Called {
            key: "k1".into(),
            foreign: (*foreign).into(),
        };
        history.push(at(start + 10, "server", call));
        if charged.contains(foreign) && !calls[..n].contains(foreign) {
            let effect = HistoryEvent::Effect {
                key: (*foreign).into(),
                amount: 7,
                payment: attempt as u64,
            };
            history.push(at(start + 20, "provider", effect));
        }
        let reply = if attempt as usize == calls.len() {
            Reply::Answer {
                status: 201,
                body: "{\"order\":1}".into(),
                replayed: false,
            }
        } else {
            Reply::Answer {
                status: 503,
                body: String::new(),
                replayed: false,
            }
        };
        history.push(at(
            start + 30,
            "client-1",
            HistoryEvent::Got {
                id: OP,
                attempt,
                reply,
            },
        ));
    }
    let how = Ended::Succeeded {
        body: "{\"order\":1}".into(),
        replayed: false,
    };
    let attempts = calls.len() as u32;
    history.push(at(
        1_000,
        "client-1",
        HistoryEvent::Ended {
            id: OP,
            attempts,
            how,
        },
    ));
    history
}

#[test]
fn one_charge_under_the_derived_key_is_the_operations_one_effect() {
    // Two attempts present one derived key; the provider charged once.
    assert_eq!(judge(&checkout(&["f1", "f1"], &["f1"])), Ok(()));
}

#[test]
fn charges_under_two_foreign_keys_of_one_request_are_two_effects_of_it() {
    let history = checkout(&["f1", "f2"], &["f1", "f2"]);
    let violation = judge(&history).unwrap_err();
    assert_eq!(violation.rule, Rule::OneEffectPerKey);
    // The breach names the client's key, not the provider's.
    assert_eq!(violation.keys, ["k1"]);
    assert!(
        violation.detail.contains("2 effects"),
        "{}",
        violation.detail
    );
}

#[test]
fn a_success_with_no_charge_anywhere_is_named() {
    let history = checkout(&["f1"], &[]);
    let rules: Vec<Rule> = violations(&history).into_iter().map(|v| v.rule).collect();
    assert_eq!(rules, [Rule::SucceededHasOneEffect]);
}
