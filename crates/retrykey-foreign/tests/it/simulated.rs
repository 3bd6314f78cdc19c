//! The simulator's `foreign` scenario on the correct checkout: every rule holds, a seed replays
//! exactly, and the provider's charges are the operations' own.

use std::collections::{BTreeMap, BTreeSet};

use retrykey_foreign::checkout::Standard;
use retrykey_foreign::sim::{DECLINED_EVERY, run};
use retrykey_sim::{Ended, HistoryEvent};

#[test]
fn forty_seeds_keep_every_rule_and_each_charge_is_one_operations() {
    let (mut paid, mut declined) = (0, 0);
    for seed in 0..40 {
        let run = run(&Standard, seed);
        assert_eq!(run.finding, None, "seed {seed}");
        // Which operation each foreign key was called for, and what the provider charged.
        let mut called: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut charged: BTreeMap<String, u32> = BTreeMap::new();
        for entry in &run.entries {
            match &entry.event {
                HistoryEvent::Called { key, foreign } => {
                    called
                        .entry(foreign.clone())
                        .or_default()
                        .insert(key.clone());
                }
                HistoryEvent::Effect { key, amount, .. } => {
                    assert_eq!(
                        entry.host, "provider",
                        "seed {seed}: only the provider charges"
                    );
                    assert!(
                        !amount.is_multiple_of(DECLINED_EVERY),
                        "seed {seed}: a declined card paid"
                    );
                    *charged.entry(key.clone()).or_default() += 1;
                }
                HistoryEvent::Ended { how, .. } => match how {
                    Ended::Succeeded { .. } => paid += 1,
                    Ended::Rejected(402) => declined += 1,
                    _ => {}
                },
                _ => {}
            }
        }
        for (foreign, charges) in &charged {
            let operations = called.get(foreign).map_or(0, BTreeSet::len);
            assert_eq!(
                operations, 1,
                "seed {seed}: {foreign} is one operation's key"
            );
            assert_eq!(*charges, 1, "seed {seed}: {foreign} charged once");
        }
    }
    assert!(paid > 0 && declined > 0, "{paid} paid, {declined} declined");
}

#[test]
fn a_seed_replays_exactly() {
    let first = run(&Standard, 11);
    let again = run(&Standard, 11);
    assert_eq!(first.entries, again.entries);
    assert_ne!(first.entries, run(&Standard, 12).entries);
}
