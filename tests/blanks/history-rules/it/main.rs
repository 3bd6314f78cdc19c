//! The exercise under its checks: `just check-exercise` runs them in teaching order.
//!
//! First histories made by hand, each keeping or breaking one rule; then the histories of real
//! runs of the simulator, which the copy's checker must judge exactly as the simulator's own
//! checker does, seed by seed.

mod rules {
    use history_rules::{Rule, judge, violations};
    use retrykey_history::{Ended, Entry, HandlerEnd, HistoryEvent, NoReply, OpId, Reply};

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
        let event = HistoryEvent::Sent {
            id,
            attempt,
            key: key.into(),
            amount,
        };
        at(attempt as u64 * 10, &host, event)
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

    fn succeeded(id: OpId, attempts: u32, body: &str, replayed: bool) -> Entry {
        let host = format!("client-{}", id.client);
        let how = Ended::Succeeded {
            body: body.into(),
            replayed,
        };
        at(100, &host, HistoryEvent::Ended { id, attempts, how })
    }

    /// A payment under `key` at `at_ms`.
    fn effect(at_ms: u64, key: &str, amount: u64, payment: u64) -> Entry {
        let event = HistoryEvent::Effect {
            key: key.into(),
            amount,
            payment,
        };
        at(at_ms, "server", event)
    }

    fn handler_answered(key: &str, body: &str) -> Entry {
        let end = HandlerEnd::Answered(201, body.into());
        let event = HistoryEvent::HandlerEnded {
            key: key.into(),
            life: 1,
            end,
        };
        at(3, "server", event)
    }

    /// One payment of 7 under k1 whose first answer was lost, then replayed.
    fn clean() -> Vec<Entry> {
        vec![
            sent(OP, 1, "k1", 7),
            effect(2, "k1", 7, 1),
            handler_answered("k1", "{\"payment\":1}"),
            got(OP, 1, Reply::None(NoReply::Cut)),
            sent(OP, 2, "k1", 7),
            got(OP, 2, answer(201, "{\"payment\":1}", true)),
            succeeded(OP, 2, "{\"payment\":1}", true),
        ]
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
        history.push(effect(40, "k1", 7, 2));
        let violation = judge(&history).expect_err("two payments under k1");
        assert_eq!(violation.rule, Rule::OneEffectPerKey, "{violation}");
        assert_eq!(violation.keys, ["k1"], "{violation}");
        assert_eq!(
            violation.detail,
            "key k1 made 2 effects: payment 1 at 2 ms, payment 2 at 40 ms"
        );
        assert_eq!(
            broken_rules(&history),
            [Rule::OneEffectPerKey, Rule::SucceededHasOneEffect]
        );
    }

    #[test]
    fn the_earliest_second_effect_is_reported() {
        // k1 was paid first, but k2 was paid twice first: the breach is k2's, at 32 ms.
        let history = vec![
            effect(12, "k1", 7, 1),
            effect(22, "k2", 7, 2),
            effect(32, "k2", 7, 3),
            effect(52, "k1", 7, 4),
            effect(62, "k1", 7, 5),
        ];
        let violation = judge(&history).expect_err("two keys paid more than once");
        assert_eq!(violation.rule, Rule::OneEffectPerKey, "{violation}");
        assert_eq!(violation.keys, ["k2"], "{violation}");
        assert_eq!(
            violation.detail,
            "key k2 made 2 effects: payment 2 at 22 ms, payment 3 at 32 ms"
        );
    }

    #[test]
    fn a_changed_amount_charged_is_named() {
        let mut history = clean();
        history.extend([sent(OTHER, 1, "k1", 9), effect(50, "k1", 9, 2)]);
        let violation = violations(&history)
            .into_iter()
            .find(|v| v.rule == Rule::ChangedRequestChangesNothing)
            .expect("k1 used for 7, then charged 9");
        assert_eq!(violation.keys, ["k1"], "{violation}");
        assert_eq!(
            violation.detail,
            "key k1 was used for amount 7, then a request for 9 made payment 2 at 50 ms"
        );
        assert_eq!(
            broken_rules(&history),
            [
                Rule::OneEffectPerKey,
                Rule::SucceededHasOneEffect,
                Rule::ChangedRequestChangesNothing
            ]
        );
    }

    #[test]
    fn a_success_for_a_changed_amount_is_named() {
        // No second payment: the request for 9 got k1's stored answer, as if it were its own.
        let mut history = clean();
        history.extend([
            sent(OTHER, 1, "k1", 9),
            got(OTHER, 1, answer(201, "{\"payment\":1}", true)),
            succeeded(OTHER, 1, "{\"payment\":1}", true),
        ]);
        let violation = judge(&history).expect_err("an answer for another request");
        assert_eq!(
            violation.rule,
            Rule::ChangedRequestChangesNothing,
            "{violation}"
        );
        assert_eq!(violation.keys, ["k1"], "{violation}");
        assert_eq!(
            violation.detail,
            "client-2 op 1 attempt 1 at 15 ms asked for 9 under key k1, used for 7, and got 201: \
             another request's answer"
        );
    }

    #[test]
    fn a_refused_changed_request_keeps_every_rule() {
        let mut history = clean();
        history.extend([
            sent(OTHER, 1, "k1", 9),
            got(OTHER, 1, answer(422, "changed request", false)),
            at(
                100,
                "client-2",
                HistoryEvent::Ended {
                    id: OTHER,
                    attempts: 1,
                    how: Ended::Rejected(422),
                },
            ),
        ]);
        assert_eq!(judge(&history), Ok(()));
    }
}

mod seeds {
    use retrykey_sim::{SimScenario, Stack, run};

    /// Seeds of each scenario judged by both checkers.
    const SEEDS: u64 = 40;

    /// Runs seeds `0..SEEDS` of `scenario` on the correct stack; each history must get the same
    /// verdicts (rule, detail, keys) from the copy's checker as from the simulator's. Returns how
    /// many seeds broke a rule.
    fn agree(scenario: SimScenario) -> usize {
        let stack = Stack::correct();
        let mut broken = 0;
        for seed in 0..SEEDS {
            let entries = run(&stack, scenario, seed).entries;
            let copy: Vec<(String, String, Vec<String>)> = history_rules::violations(&entries)
                .into_iter()
                .map(|v| (v.rule.name().to_owned(), v.detail, v.keys))
                .collect();
            let simulator: Vec<(String, String, Vec<String>)> =
                retrykey_history::violations(&entries)
                    .into_iter()
                    .map(|v| (v.rule.name().to_owned(), v.detail, v.keys))
                    .collect();
            assert_eq!(
                copy, simulator,
                "seed {seed} of {scenario}: copy, simulator"
            );
            broken += usize::from(!simulator.is_empty());
        }
        broken
    }

    #[test]
    fn lost_reply_seeds_are_judged_as_the_simulator_judges_them() {
        assert_eq!(
            agree(SimScenario::LostReply),
            0,
            "the correct stack keeps every rule"
        );
    }

    #[test]
    fn restart_seeds_are_judged_as_the_simulator_judges_them() {
        let broken = agree(SimScenario::Restart);
        assert!(
            broken > 0,
            "a restart that forgets the records charges twice"
        );
    }
}
