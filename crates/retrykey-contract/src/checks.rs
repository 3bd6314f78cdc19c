//! The contract checks: each one builds fresh ledgers, drives them, and asserts on stored state.
//!
//! Every check takes the ledger constructor and panics with a message that names the requirement
//! it found broken. Assertions look at what the ledger holds (total, records, receipts), not only
//! at what it answered.

use retrykey::{
    Error, Key, KeyProblem, Ledger, Limits, MAX_JOB_BYTES, MAX_KEY_BYTES, Receipt, Request,
    RequestProblem,
};

use crate::concurrency;
use crate::fixtures::{key, limits, receipt, request, stored, stored_receipt};

const JOB: &str = "convert-document";

/// A lost reply leaves the effect and its receipt stored; the retry gets the original receipt.
pub fn lost_reply_then_retry<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(Limits::default());
    let (op, work) = (key("op-1"), request(JOB, 7));

    let reply = ledger.apply(&op, &work);
    drop(reply); // the network loses it: the caller only knows the outcome is unknown

    assert_eq!(
        stored(&ledger),
        (7, 1),
        "right after the drop: one effect, one record"
    );
    assert_eq!(
        stored_receipt(&ledger, &op),
        Some(receipt(1, 7)),
        "right after the drop: the receipt is stored"
    );

    let retry = ledger.apply(&op, &work).expect("the retry is answered");
    assert_eq!(
        retry,
        receipt(1, 7).replay(),
        "the retry gets the original receipt"
    );
    assert_eq!(stored(&ledger), (7, 1), "the retry applied nothing");
}

/// The same key with different units is a conflict, not a replay and not a new effect.
pub fn changed_units_conflicts<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    conflict_case(make, request(JOB, 8));
}

/// The same key with a different job is a conflict, not a replay and not a new effect.
pub fn changed_job_conflicts<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    conflict_case(make, request("resize-image", 7));
}

fn conflict_case<L: Ledger>(make: &dyn Fn(Limits) -> L, changed: Request) {
    let ledger = make(Limits::default());
    let op = key("op-1");
    ledger.apply(&op, &request(JOB, 7)).expect("first use");

    assert_eq!(ledger.apply(&op, &changed), Err(Error::Conflict));
    assert_eq!(stored(&ledger), (7, 1), "a conflict applies nothing");
    assert_eq!(
        stored_receipt(&ledger, &op),
        Some(receipt(1, 7)),
        "the record is unchanged"
    );
}

/// Two requests are the same request only when both fields are equal, byte for byte: a job
/// that differs in case, in a space or in its Unicode form, or units that agree only modulo
/// 256, 2^16 or 2^32, is a changed request under a used key, so a conflict that changes nothing.
pub fn near_miss_requests_conflict<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    const UNITS: u64 = 7;
    let near_misses = [
        ("CONVERT-DOCUMENT", UNITS),
        ("Convert-document", UNITS),
        ("convert-document ", UNITS),
        (" convert-document", UNITS),
        ("convert-documents", UNITS),
        ("convert-documen", UNITS),
        ("convert_document", UNITS),
        ("convert-document\u{200B}", UNITS),
        (JOB, UNITS + 1),
        (JOB, UNITS - 1),
        (JOB, UNITS + (1 << 8)),
        (JOB, UNITS + (1 << 16)),
        (JOB, UNITS + (1 << 32)),
    ];
    // One job with an accent, precomposed (NFC), against the same text decomposed (NFD).
    let accented = ("résumé", "re\u{301}sume\u{301}");
    // A ceiling far above every near miss: whatever the order of lookup and limits, the
    // answer can only be about equality.
    let ledger = make(limits(64, 1 << 40));
    let held = key("op-1");
    let first = ledger.apply(&held, &request(JOB, UNITS)).expect("op-1");
    // The same fields, built afresh from another string, are the same request: a replay.
    let rebuilt = request(&String::from_iter(JOB.chars()), UNITS);
    assert_eq!(ledger.apply(&held, &rebuilt), Ok(first.replay()));
    let nfc = key("op-2");
    let second = ledger
        .apply(&nfc, &request(accented.0, UNITS))
        .expect("op-2");
    for (job, units) in near_misses {
        assert_eq!(
            ledger.apply(&held, &request(job, units)),
            Err(Error::Conflict),
            "({JOB:?}, {UNITS}) is held; ({job:?}, {units}) is another request"
        );
    }
    assert_eq!(
        ledger.apply(&nfc, &request(accented.1, UNITS)),
        Err(Error::Conflict),
        "{:?} (NFC) is held; {:?} (NFD) is another job",
        accented.0,
        accented.1
    );
    assert_eq!(
        stored(&ledger),
        (2 * UNITS, 2),
        "a conflict applies nothing"
    );
    assert_eq!(stored_receipt(&ledger, &held), Some(first));
    assert_eq!(stored_receipt(&ledger, &nfc), Some(second));
}

/// A conflict changes no stored state and consumes no operation number.
pub fn conflict_leaves_state_unchanged<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(Limits::default());
    let (first, second) = (key("op-1"), key("op-2"));
    ledger.apply(&first, &request(JOB, 7)).expect("op-1");
    ledger.apply(&second, &request(JOB, 5)).expect("op-2");

    assert_eq!(ledger.apply(&first, &request(JOB, 9)), Err(Error::Conflict));

    assert_eq!(stored(&ledger), (12, 2));
    assert_eq!(stored_receipt(&ledger, &first), Some(receipt(1, 7)));
    assert_eq!(stored_receipt(&ledger, &second), Some(receipt(2, 12)));
    let replay = ledger
        .apply(&first, &request(JOB, 7))
        .expect("the original still replays");
    assert_eq!(replay, receipt(1, 7).replay());
    let next = ledger.apply(&key("op-3"), &request(JOB, 1)).expect("op-3");
    assert_eq!(
        next,
        receipt(3, 13),
        "the conflict consumed no operation number"
    );
}

/// A new key declares a new operation: a second effect and a second receipt.
pub fn new_key_is_new_operation<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(Limits::default());
    let work = request(JOB, 7);
    ledger.apply(&key("op-1"), &work).expect("op-1");

    let second = ledger.apply(&key("op-2"), &work).expect("op-2");

    assert_eq!(second, receipt(2, 14));
    assert_eq!(stored(&ledger), (14, 2));
}

/// A replay returns the total recorded at commit time, not the current total.
pub fn historical_receipt_keeps_original_total<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(Limits::default());
    let (op, work) = (key("op-1"), request(JOB, 7));
    ledger.apply(&op, &work).expect("op-1");
    ledger.apply(&key("op-2"), &work).expect("op-2");

    let replay = ledger.apply(&op, &work).expect("replay of op-1");

    assert_eq!(
        replay,
        receipt(1, 7).replay(),
        "the replay reports the committed total"
    );
    assert_eq!(stored_receipt(&ledger, &op), Some(receipt(1, 7)));
    assert_eq!(
        stored(&ledger),
        (14, 2),
        "the current total is a different thing"
    );
}

/// Replay changes only the delivery marker: the operation and its total stay as recorded.
pub fn replay_marks_only_delivery<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(Limits::default());
    let (op, work) = (key("op-1"), request(JOB, 7));

    let first = ledger.apply(&op, &work).expect("first delivery");
    let replays: Vec<Receipt> = (0..3)
        .map(|_| ledger.apply(&op, &work).expect("replay"))
        .collect();

    assert!(!first.replayed, "the first delivery is not a replay");
    for replay in replays {
        assert_eq!(
            replay,
            Receipt {
                replayed: true,
                ..first
            }
        );
    }
    assert_eq!(
        stored_receipt(&ledger, &op),
        Some(first),
        "the stored receipt is not marked"
    );
    assert_eq!(stored(&ledger), (7, 1));
}

/// Bad keys are refused by type with the reason named; keys at the limits round-trip intact.
pub fn invalid_keys_are_rejected<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(Limits::default());
    ledger.apply(&key("op-1"), &request(JOB, 7)).expect("op-1");

    let too_long = "k".repeat(MAX_KEY_BYTES + 1);
    let cases = [
        ("", KeyProblem::Empty),
        (
            too_long.as_str(),
            KeyProblem::TooLong {
                bytes: MAX_KEY_BYTES + 1,
            },
        ),
        ("op\n1", KeyProblem::ControlCharacter { at: 2 }),
        ("\0", KeyProblem::ControlCharacter { at: 0 }),
    ];
    for (text, problem) in cases {
        assert_eq!(Key::new(text), Err(Error::InvalidKey(problem)));
    }
    assert_eq!(stored(&ledger), (7, 1), "rejected keys change nothing");

    // The longest key, and a multi-byte one, are stored and found again byte for byte.
    let longest = key(&"k".repeat(MAX_KEY_BYTES));
    let accented = key("opération-é-1");
    for (n, op) in [longest, accented].iter().enumerate() {
        let first = ledger
            .apply(op, &request(JOB, 1))
            .expect("a valid key is accepted");
        assert_eq!(first, receipt(n as u64 + 2, 8 + n as u64));
        assert_eq!(ledger.apply(op, &request(JOB, 1)), Ok(first.replay()));
    }
    assert_eq!(stored(&ledger), (9, 3));
}

/// Bad requests are refused by type with the reason named; a job at the limit round-trips.
pub fn invalid_requests_are_rejected<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(Limits::default());
    ledger.apply(&key("op-1"), &request(JOB, 7)).expect("op-1");

    let too_long = "j".repeat(MAX_JOB_BYTES + 1);
    let cases = [
        ("", "7", RequestProblem::EmptyJob),
        (
            too_long.as_str(),
            "7",
            RequestProblem::JobTooLong {
                bytes: MAX_JOB_BYTES + 1,
            },
        ),
        (
            "convert\tdocument",
            "7",
            RequestProblem::JobControlCharacter,
        ),
        (JOB, "0", RequestProblem::ZeroUnits),
        (JOB, "-7", RequestProblem::NegativeUnits),
        (JOB, "seven", RequestProblem::NotANumber),
        (JOB, "7.5", RequestProblem::NotANumber),
        (JOB, "", RequestProblem::NotANumber),
        (JOB, "18446744073709551616", RequestProblem::UnitsOverflow),
    ];
    for (job, units, problem) in cases {
        assert_eq!(
            Request::parse(job, units),
            Err(Error::InvalidRequest(problem)),
            "job {job:?}, units {units:?}"
        );
    }
    assert_eq!(stored(&ledger), (7, 1), "rejected requests change nothing");

    let longest_job = Request::new("j".repeat(MAX_JOB_BYTES), 3).expect("a job at the limit");
    let op = key("op-2");
    assert_eq!(ledger.apply(&op, &longest_job), Ok(receipt(2, 10)));
    assert_eq!(ledger.apply(&op, &longest_job), Ok(receipt(2, 10).replay()));
}

/// A full ledger rejects a new operation and stores nothing for it.
pub fn capacity_rejects_new_operation<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(limits(2, 1_000));
    ledger.apply(&key("op-1"), &request(JOB, 7)).expect("op-1");
    ledger.apply(&key("op-2"), &request(JOB, 7)).expect("op-2");

    let extra = key("op-3");
    assert_eq!(
        ledger.apply(&extra, &request(JOB, 7)),
        Err(Error::Capacity { max_records: 2 })
    );
    assert_eq!(
        stored(&ledger),
        (14, 2),
        "a capacity rejection applies nothing"
    );
    assert_eq!(stored_receipt(&ledger, &extra), None);
    assert_eq!(
        stored_receipt(&ledger, &key("op-1")),
        Some(receipt(1, 7)),
        "nothing was evicted"
    );
}

/// A full ledger still answers a replay, and still reports a changed request as a conflict.
pub fn replay_at_capacity_succeeds<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(limits(2, 1_000));
    let (op, work) = (key("op-1"), request(JOB, 7));
    ledger.apply(&op, &work).expect("op-1");
    ledger.apply(&key("op-2"), &work).expect("op-2");

    assert_eq!(ledger.apply(&op, &work), Ok(receipt(1, 7).replay()));
    assert_eq!(ledger.apply(&op, &request(JOB, 8)), Err(Error::Conflict));
    assert_eq!(stored(&ledger), (14, 2));
}

/// An operation that would pass the ceiling is rejected with no effect and no record.
pub fn ceiling_rejects_without_effect<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(limits(64, 10));
    ledger.apply(&key("op-1"), &request(JOB, 7)).expect("op-1");

    let over = key("op-2");
    assert_eq!(
        ledger.apply(&over, &request(JOB, 4)),
        Err(Error::Ceiling {
            units: 4,
            total: 7,
            max_units: 10
        })
    );
    assert_eq!(
        ledger.apply(&key("op-3"), &request(JOB, u64::MAX)),
        Err(Error::Ceiling {
            units: u64::MAX,
            total: 7,
            max_units: 10
        }),
        "a sum that would overflow is a ceiling rejection, not a wrap-around"
    );
    assert_eq!(stored(&ledger), (7, 1), "ceiling rejections apply nothing");
    assert_eq!(stored_receipt(&ledger, &over), None);
}

/// The ceiling itself is reachable: a total of exactly the ceiling is accepted.
pub fn exact_ceiling_is_accepted<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(Limits::default());
    let max = Limits::default().max_units;

    assert_eq!(
        ledger.apply(&key("op-1"), &request(JOB, max)),
        Ok(receipt(1, max))
    );
    assert_eq!(
        ledger.apply(&key("op-2"), &request(JOB, 1)),
        Err(Error::Ceiling {
            units: 1,
            total: max,
            max_units: max
        })
    );
    assert_eq!(stored(&ledger), (max, 1));
}

/// A rejected operation leaves no record: retrying it is rejected again, never "replayed".
pub fn rejected_operation_leaves_no_record<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    let ledger = make(limits(64, 10));
    ledger.apply(&key("op-1"), &request(JOB, 7)).expect("op-1");
    let op = key("op-2");
    let rejection = Err(Error::Ceiling {
        units: 5,
        total: 7,
        max_units: 10,
    });

    assert_eq!(ledger.apply(&op, &request(JOB, 5)), rejection);
    assert_eq!(
        stored_receipt(&ledger, &op),
        None,
        "no receipt for work that never happened"
    );
    assert_eq!(
        ledger.apply(&op, &request(JOB, 5)),
        rejection,
        "the retry is not a success"
    );
    assert_eq!(stored(&ledger), (7, 1));

    // The key is still free: the same key with a request that fits is a new operation.
    assert_eq!(ledger.apply(&op, &request(JOB, 3)), Ok(receipt(2, 10)));
}

/// 64 concurrent callers with one key: one effect, one original receipt, 63 identical replays.
pub fn concurrent_same_key_one_effect<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    concurrency::one_key_burst(make, 64);
}

/// Concurrent callers with distinct keys: every effect counts, every receipt is distinct.
pub fn concurrent_distinct_keys_lose_no_update<L: Ledger>(make: &dyn Fn(Limits) -> L) {
    concurrency::distinct_keys_burst(make, 64);
}
