//! Histories of what clients saw alone, as a run against a real server records them: no handler
//! runs, no effects. The first answer and the bound request are read from the clients' answers.

use retrykey_history::{Entry, HistoryEvent, OpId, Reply, Rule, Violation, judge, violations};

const ALICE: OpId = OpId { client: 1, op: 1 };
const BOB: OpId = OpId { client: 2, op: 1 };
const CREATED: &str = "{\"payment\":1}";

/// One attempt: what it sent under `key` at `at_ms`, and what it got 5 ms later.
fn exchange(at_ms: u64, id: OpId, attempt: u32, key: &str, amount: u64, got: Reply) -> [Entry; 2] {
    let host = format!("client-{}", id.client);
    let sent = HistoryEvent::Sent {
        id,
        attempt,
        key: key.into(),
        amount,
    };
    let got = HistoryEvent::Got {
        id,
        attempt,
        reply: got,
    };
    [
        Entry {
            at_ms,
            host: host.clone(),
            event: sent,
        },
        Entry {
            at_ms: at_ms + 5,
            host,
            event: got,
        },
    ]
}

fn answer(status: u16, body: &str, replayed: bool) -> Reply {
    Reply::Answer {
        status,
        body: body.into(),
        replayed,
    }
}

/// Alice's payment of 7 under `alice/k1`, answered 201, then retried: `retry` is the retry's
/// answer.
fn paid_then_retried(retry: Reply) -> Vec<Entry> {
    let mut history = Vec::new();
    history.extend(exchange(
        10,
        ALICE,
        1,
        "alice/k1",
        7,
        answer(201, CREATED, false),
    ));
    history.extend(exchange(20, ALICE, 2, "alice/k1", 7, retry));
    history
}

fn the_breach_of(rule: Rule, history: &[Entry]) -> Violation {
    violations(history)
        .into_iter()
        .find(|violation| violation.rule == rule)
        .unwrap_or_else(|| panic!("{rule} is broken in {history:#?}"))
}

#[test]
fn a_replay_of_the_first_answer_keeps_every_rule() {
    assert_eq!(
        judge(&paid_then_retried(answer(201, CREATED, true))),
        Ok(())
    );
}

#[test]
fn a_replay_with_another_status_is_named() {
    // The stored body, under a default status: the first answer was 201.
    let history = paid_then_retried(answer(200, CREATED, true));
    let violation = judge(&history).expect_err("a replay with another status");
    assert_eq!(
        violation.rule,
        Rule::ReplayCarriesTheFirstAnswer,
        "{violation}"
    );
    assert_eq!(violation.keys, ["alice/k1"], "{violation}");
    assert_eq!(
        violation.detail,
        "client-1 op 1 attempt 2 at 25 ms: replay of key alice/k1 carried 200 {\"payment\":1}, \
         the first answer was 201 {\"payment\":1}"
    );
}

#[test]
fn a_replay_with_another_body_is_named() {
    let history = paid_then_retried(answer(201, "{\"payment\":2}", true));
    let violation = the_breach_of(Rule::ReplayCarriesTheFirstAnswer, &history);
    assert_eq!(violation.keys, ["alice/k1"], "{violation}");
    assert!(
        violation
            .detail
            .contains("the first answer was 201 {\"payment\":1}"),
        "{violation}"
    );
}

#[test]
fn another_callers_answer_replayed_is_named() {
    // Bob's key is his own (`bob/k1`), yet his first request gets Alice's answer as a replay:
    // his key has no first answer at all.
    let mut history = Vec::new();
    history.extend(exchange(
        10,
        ALICE,
        1,
        "alice/k1",
        7,
        answer(201, CREATED, false),
    ));
    history.extend(exchange(
        20,
        BOB,
        1,
        "bob/k1",
        7,
        answer(201, CREATED, true),
    ));
    let violation = judge(&history).expect_err("Bob got Alice's answer");
    assert_eq!(
        violation.rule,
        Rule::ReplayCarriesTheFirstAnswer,
        "{violation}"
    );
    assert_eq!(violation.keys, ["bob/k1"], "{violation}");
    assert_eq!(
        violation.detail,
        "client-2 op 1 attempt 1 at 25 ms: replay of key bob/k1 carried 201 {\"payment\":1}, but \
         no attempt under that key got a success that was not a replay"
    );

    // His own first answer, then its replay, keeps the rule.
    let mut history = Vec::new();
    history.extend(exchange(
        10,
        ALICE,
        1,
        "alice/k1",
        7,
        answer(201, CREATED, false),
    ));
    history.extend(exchange(
        20,
        BOB,
        1,
        "bob/k1",
        7,
        answer(201, "{\"payment\":2}", false),
    ));
    history.extend(exchange(
        30,
        BOB,
        2,
        "bob/k1",
        7,
        answer(201, "{\"payment\":2}", true),
    ));
    assert_eq!(judge(&history), Ok(()));
}

#[test]
fn the_first_success_binds_the_key_not_a_failure_before_it() {
    // A 503 first (the key released), then a success: the success is the first answer.
    let mut history = Vec::new();
    history.extend(exchange(
        10,
        ALICE,
        1,
        "alice/k1",
        7,
        answer(503, "unavailable", false),
    ));
    history.extend(exchange(
        20,
        ALICE,
        2,
        "alice/k1",
        7,
        answer(201, CREATED, false),
    ));
    history.extend(exchange(
        30,
        ALICE,
        3,
        "alice/k1",
        7,
        answer(201, CREATED, true),
    ));
    assert_eq!(judge(&history), Ok(()));
}

#[test]
fn a_changed_request_that_gets_a_success_is_named() {
    // The same key for 9, answered with the payment of 7 as a replay.
    let mut history = paid_then_retried(answer(201, CREATED, true));
    history.extend(exchange(
        30,
        BOB,
        1,
        "alice/k1",
        9,
        answer(201, CREATED, true),
    ));
    let violation = judge(&history).expect_err("a changed request got a success");
    assert_eq!(
        violation.rule,
        Rule::ChangedRequestChangesNothing,
        "{violation}"
    );
    assert_eq!(violation.keys, ["alice/k1"], "{violation}");
    assert_eq!(
        violation.detail,
        "client-2 op 1 attempt 1 at 35 ms asked for 9 under key alice/k1, used for 7, and got \
         201: another request's answer"
    );
}

#[test]
fn a_changed_request_refused_keeps_every_rule() {
    let mut history = paid_then_retried(answer(201, CREATED, true));
    history.extend(exchange(
        30,
        BOB,
        1,
        "alice/k1",
        9,
        answer(422, "changed request", false),
    ));
    assert_eq!(judge(&history), Ok(()));
}

// A first attempt whose client left got no answer: its retries' replays stand in for it, so
// replays that agree keep the rule and one that differs is named.
#[test]
fn replays_of_an_unseen_answer_must_agree() {
    let left = Reply::None(retrykey_history::NoReply::GaveUp);
    let mut history = Vec::new();
    history.extend(exchange(10, ALICE, 1, "alice/k1", 7, left));
    history.extend(exchange(
        20,
        ALICE,
        2,
        "alice/k1",
        7,
        answer(201, CREATED, true),
    ));
    history.extend(exchange(
        30,
        ALICE,
        3,
        "alice/k1",
        7,
        answer(201, CREATED, true),
    ));
    assert_eq!(judge(&history), Ok(()));
    history.extend(exchange(
        40,
        ALICE,
        4,
        "alice/k1",
        7,
        answer(201, "{\"payment\":2}", true),
    ));
    let breach = the_breach_of(Rule::ReplayCarriesTheFirstAnswer, &history);
    assert_eq!(breach.keys, ["alice/k1"]);
    assert!(
        breach.detail.contains("the first answer was 201"),
        "{}",
        breach.detail
    );
}
