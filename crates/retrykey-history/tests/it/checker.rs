//! The checker on histories made by hand: a clean one passes, and each breach is named by its
//! rule, with the first rule in order reported when several break.

use retrykey_history::{
    Ended, Entry, HandlerEnd, HistoryEvent, NoReply, OpId, Reply, Rule, judge, violations,
};

const OP: OpId = OpId { client: 1, op: 1 };
const OTHER: OpId = OpId { client: 2, op: 1 };

fn at(at_ms: u64, host: &str, event: HistoryEvent) -> Entry {
    Entry {
        at_ms,
        host: host.to_owned(),
        event,
    }
}

fn sent(id: OpId, attempt: u32, key: &str, amount: u64) -> Entry {
    let host = format!("client-{}", id.client);
    at(
        attempt as u64 * 10,
        &host,
        HistoryEvent::Sent {
            id,
            attempt,
            key: key.into(),
            amount,
        },
    )
}

fn got(id: OpId, attempt: u32, reply: Reply) -> Entry {
    let host = format!("client-{}", id.client);
    at(
        attempt as u64 * 10 + 5,
        &host,
        HistoryEvent::Got { id, attempt, reply },
    )
}

fn answer(status: u16, body: &str, replayed: bool) -> Reply {
    Reply::Answer {
        status,
        body: body.into(),
        replayed,
    }
}

fn ended(id: OpId, attempts: u32, how: Ended) -> Entry {
    let host = format!("client-{}", id.client);
    at(100, &host, HistoryEvent::Ended { id, attempts, how })
}

fn effect(key: &str, amount: u64, payment: u64) -> Entry {
    at(
        payment * 10 + 2,
        "server",
        HistoryEvent::Effect {
            key: key.into(),
            amount,
            payment,
        },
    )
}

fn handler(key: &str, end: HandlerEnd) -> Vec<Entry> {
    vec![
        at(
            1,
            "server",
            HistoryEvent::HandlerStarted {
                key: key.into(),
                amount: 7,
                life: 1,
            },
        ),
        at(
            3,
            "server",
            HistoryEvent::HandlerEnded {
                key: key.into(),
                life: 1,
                end,
            },
        ),
    ]
}

/// One payment whose first answer was lost, then replayed: every rule holds.
fn clean() -> Vec<Entry> {
    let mut history = vec![sent(OP, 1, "k1", 7)];
    history.extend(handler(
        "k1",
        HandlerEnd::Answered(201, "{\"payment\":1}".into()),
    ));
    history.extend([
        effect("k1", 7, 1),
        got(OP, 1, Reply::None(NoReply::Cut)),
        sent(OP, 2, "k1", 7),
        got(OP, 2, answer(201, "{\"payment\":1}", true)),
        ended(
            OP,
            2,
            Ended::Succeeded {
                body: "{\"payment\":1}".into(),
                replayed: true,
            },
        ),
    ]);
    history
}

fn broken_rules(history: &[Entry]) -> Vec<Rule> {
    violations(history).into_iter().map(|v| v.rule).collect()
}

#[test]
fn a_lost_answer_replayed_keeps_every_rule() {
    assert_eq!(judge(&clean()), Ok(()));
}

#[test]
fn a_second_effect_under_one_key_is_named() {
    let mut history = clean();
    history.push(effect("k1", 7, 2));
    let violation = judge(&history).unwrap_err();
    assert_eq!(violation.rule, Rule::OneEffectPerKey);
    assert!(violation.detail.contains("payment 1") && violation.detail.contains("payment 2"));
    // It also breaks "succeeded has one effect"; the first rule in order is the one reported.
    assert_eq!(
        broken_rules(&history),
        [Rule::OneEffectPerKey, Rule::SucceededHasOneEffect]
    );
}

#[test]
fn a_success_without_an_effect_or_with_two_under_fresh_keys_is_named() {
    let history = vec![
        sent(OP, 1, "k1", 7),
        got(OP, 1, answer(201, "{\"payment\":1}", false)),
        ended(
            OP,
            1,
            Ended::Succeeded {
                body: "{\"payment\":1}".into(),
                replayed: false,
            },
        ),
    ];
    assert_eq!(broken_rules(&history), [Rule::SucceededHasOneEffect]);

    // A retry under a fresh key: each key has one effect, the operation has two.
    let history = vec![
        sent(OP, 1, "k1", 7),
        effect("k1", 7, 1),
        got(OP, 1, Reply::None(NoReply::GaveUp)),
        sent(OP, 2, "k2", 7),
        effect("k2", 7, 2),
        got(OP, 2, answer(201, "{\"payment\":2}", false)),
        ended(
            OP,
            2,
            Ended::Succeeded {
                body: "{\"payment\":2}".into(),
                replayed: false,
            },
        ),
    ];
    let violation = judge(&history).unwrap_err();
    assert_eq!(violation.rule, Rule::SucceededHasOneEffect);
    assert!(
        violation.detail.contains("2 effects under 2 key(s)"),
        "{violation}"
    );
}

#[test]
fn a_replay_of_another_body_or_status_or_of_a_failure_is_named() {
    let mut history = clean();
    history[6] = got(OP, 2, answer(201, "{\"payment\":9}", true));
    assert_eq!(broken_rules(&history), [Rule::ReplayCarriesTheFirstAnswer]);

    // The first answer's body under another status: the handler answered 201.
    let mut history = clean();
    history[6] = got(OP, 2, answer(200, "{\"payment\":1}", true));
    let violation = judge(&history).unwrap_err();
    assert_eq!(violation.rule, Rule::ReplayCarriesTheFirstAnswer);
    assert!(
        violation.detail.contains("the first answer was 201"),
        "{violation}"
    );

    // A stored failure replayed: no handler run answered the key with a success.
    let mut history = vec![sent(OP, 1, "k1", 7)];
    history.extend(handler("k1", HandlerEnd::Failed(503)));
    history.extend([
        got(OP, 1, answer(503, "unavailable", false)),
        sent(OP, 2, "k1", 7),
        got(OP, 2, answer(503, "unavailable", true)),
        ended(OP, 2, Ended::Unknown),
    ]);
    let violation = judge(&history).unwrap_err();
    assert_eq!(violation.rule, Rule::ReplayCarriesTheFirstAnswer);
    assert!(
        violation.detail.contains("no handler run answered"),
        "{violation}"
    );
}

#[test]
fn a_changed_request_that_gets_the_first_answer_is_named() {
    let mut history = clean();
    history.extend([
        sent(OTHER, 1, "k1", 8),
        got(OTHER, 1, answer(201, "{\"payment\":1}", true)),
        ended(
            OTHER,
            1,
            Ended::Succeeded {
                body: "{\"payment\":1}".into(),
                replayed: true,
            },
        ),
    ]);
    let violation = judge(&history).unwrap_err();
    assert_eq!(violation.rule, Rule::ChangedRequestChangesNothing);
    assert!(violation.detail.contains("asked for 8"), "{violation}");

    // Answered 422 instead, it is what the layer promises.
    let mut history = clean();
    history.extend([
        sent(OTHER, 1, "k1", 8),
        got(OTHER, 1, answer(422, "key reused", false)),
        ended(OTHER, 1, Ended::Rejected(422)),
    ]);
    assert_eq!(judge(&history), Ok(()));
}

#[test]
fn unknown_after_definite_answers_only_is_named() {
    let history = vec![
        sent(OP, 1, "k1", 7),
        got(OP, 1, answer(422, "key reused", false)),
        sent(OP, 2, "k1", 7),
        got(OP, 2, answer(422, "key reused", false)),
        ended(OP, 2, Ended::Unknown),
    ];
    assert_eq!(
        broken_rules(&history),
        [Rule::UnknownOnlyWhereAnAnswerWasLost]
    );

    // With one answer missing (or a server error), unknown is the honest report.
    for reply in [
        Reply::None(NoReply::GaveUp),
        answer(503, "unavailable", false),
    ] {
        let mut history = history.clone();
        history[3] = got(OP, 2, reply);
        assert_eq!(judge(&history), Ok(()));
    }
}

#[test]
fn a_handler_run_dropped_while_its_server_is_up_is_named() {
    let mut history = vec![sent(OP, 1, "k1", 7)];
    history.extend(handler("k1", HandlerEnd::Abandoned));
    history.extend([
        got(OP, 1, Reply::None(NoReply::GaveUp)),
        ended(OP, 1, Ended::Unknown),
    ]);
    let violation = judge(&history).unwrap_err();
    assert_eq!(violation.rule, Rule::HandlerRunsToTheEnd);

    // Dropped because its host crashed: that is the crash, not a cancelled handler.
    history.insert(2, at(2, "server", HistoryEvent::Crashed { life: 1 }));
    assert_eq!(judge(&history), Ok(()));
}
