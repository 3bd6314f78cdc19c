//! Whole runs of the real stack.

use retrykey_sim::{
    Finding, HistoryEvent, RESTART_FINDS_WITHIN, Rule, SimScenario, Stack, Summary, first_failure,
    run, trace,
};

/// Seeds per scenario in `cargo test` (a debug build runs about ten a second); CI runs
/// thousands through `just simulate`.
const SEEDS: u64 = 24;

fn keeps_every_rule(scenario: SimScenario) -> Summary {
    let mut summary = Summary::default();
    for seed in 0..SEEDS {
        let run = run(&Stack::correct(), scenario, seed);
        assert_eq!(run.finding, None, "seed {seed} of {scenario}");
        summary.add(&run);
    }
    summary
}

#[test]
fn the_correct_stack_keeps_every_rule_through_lost_replies() {
    let summary = keeps_every_rule(SimScenario::LostReply);
    // The hardship happened: answers were cut, retries found the records, some ended unknown.
    assert!(summary.cut > 0 && summary.replays > 0, "{summary:?}");
    assert!(
        summary.retries.keys().any(|&retries| retries > 0),
        "{summary:?}"
    );
    assert_eq!(
        summary.operations(),
        SEEDS * u64::from(retrykey_sim::CLIENTS * retrykey_sim::OPS_PER_CLIENT)
    );
    // Each succeeded operation paid once; a rejected one never did.
    assert!(summary.effects <= summary.operations() - summary.rejected);
}

#[test]
fn a_store_that_survives_the_restart_keeps_every_rule() {
    let summary = keeps_every_rule(SimScenario::RestartSurviving);
    assert!(summary.unknown + summary.replays > 0, "{summary:?}");
}

#[test]
fn records_lost_with_the_restart_charge_twice_and_the_simulator_says_so() {
    let run = first_failure(
        &Stack::correct(),
        SimScenario::Restart,
        0..RESTART_FINDS_WITHIN,
    )
    .expect("the restart scenario finds the double charge within its declared seeds");
    let Some(Finding::Broke(violation)) = &run.finding else {
        panic!("seed {}: {:?}", run.seed, run.finding);
    };
    assert_eq!(violation.rule, Rule::OneEffectPerKey, "{violation}");
    // The bank made both charges, and the server crashed between them.
    let at = |wanted: &dyn Fn(&HistoryEvent) -> bool| {
        run.entries
            .iter()
            .filter(|entry| wanted(&entry.event))
            .map(|entry| entry.at_ms)
            .collect::<Vec<_>>()
    };
    let crashed = at(&|event| matches!(event, HistoryEvent::Crashed { .. }));
    assert_eq!(crashed.len(), 1);
    let key = violation
        .detail
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_owned();
    let charges = run
        .entries
        .iter()
        .filter(|entry| {
            entry.host == "bank"
                && matches!(&entry.event, HistoryEvent::Effect { key: k, .. } if k.starts_with(&key))
        })
        .map(|entry| entry.at_ms)
        .collect::<Vec<_>>();
    assert_eq!(charges.len(), 2, "{violation}");
    assert!(
        charges[0] <= crashed[0] && crashed[0] <= charges[1],
        "{charges:?} {crashed:?}"
    );
}

#[test]
fn one_seed_replays_byte_for_byte() {
    let failing = first_failure(
        &Stack::correct(),
        SimScenario::Restart,
        0..RESTART_FINDS_WITHIN,
    )
    .expect("a failing seed")
    .seed;
    let mut cases: Vec<(SimScenario, u64)> = SimScenario::ALL
        .into_iter()
        .flat_map(|scenario| (0..8).map(move |seed| (scenario, seed)))
        .collect();
    cases.push((SimScenario::Restart, failing));
    for (scenario, seed) in cases {
        let first = run(&Stack::correct(), scenario, seed);
        // Another run in between: nothing one run leaves behind (task ids, generators seeded
        // per thread) may change the next.
        run(&Stack::correct(), SimScenario::LostReply, seed + 100);
        let again = run(&Stack::correct(), scenario, seed);
        assert_eq!(first.entries, again.entries, "seed {seed} of {scenario}");
        assert_eq!(trace::timeline(&first), trace::timeline(&again));
        assert_eq!(trace::diagram(&first), trace::diagram(&again));
        assert_eq!(first.finding, again.finding);
    }
    // And another seed is another run.
    let other = run(&Stack::correct(), SimScenario::LostReply, 4);
    assert_ne!(
        trace::timeline(&other),
        trace::timeline(&run(&Stack::correct(), SimScenario::LostReply, 3))
    );
}

#[test]
fn seeds_draw_every_kind_of_hardship() {
    let plans: Vec<_> = (0..SEEDS)
        .map(|seed| retrykey_sim::Plan::draw(seed, 3, true))
        .collect();
    use retrykey_sim::PlannedFault;
    assert!(plans.iter().any(|p| {
        p.faults
            .iter()
            .any(|(_, f)| matches!(f, PlannedFault::Partition { .. }))
    }));
    assert!(plans.iter().any(|p| {
        p.faults
            .iter()
            .any(|(_, f)| matches!(f, PlannedFault::Hold { .. }))
    }));
    assert!(plans.iter().all(|p| {
        p.faults
            .iter()
            .any(|(_, f)| matches!(f, PlannedFault::Restart { .. }))
    }));
    assert!(
        plans
            .iter()
            .any(|p| p.handler_failure > 0.1 && p.reply_loss > 0.1)
    );
    assert!(plans.iter().any(|p| p.latency.1 > p.latency.0));
}
