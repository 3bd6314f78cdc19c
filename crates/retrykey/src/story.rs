//! The lost-reply story: five steps against one store, narrated as they happen.

use std::io::{self, Write};

use retrykey::{Error, Key, Ledger, Limits, Receipt, Request, Store};

/// One call the client makes: a key and a request.
pub struct Call {
    pub key: Key,
    pub request: Request,
}

/// What the client saw for each call; the closing check compares it with the store.
#[derive(Default)]
struct Tally {
    applied: usize,
    applied_units: u64,
}

impl Tally {
    fn apply(&mut self, store: &Store, call: &Call) -> Result<Receipt, Error> {
        let reply = store.apply(&call.key, &call.request);
        if let Ok(receipt) = &reply
            && !receipt.replayed
        {
            self.applied += 1;
            self.applied_units += call.request.units();
        }
        reply
    }
}

/// Tells the story: first attempt (reply lost), the store's side, the retry, a second operation,
/// and a replay of the first, then checks the client's view against the store.
pub fn tell(first: &Call, retry: &Call, limits: Limits, out: &mut impl Write) -> io::Result<()> {
    let store = Store::with_limits(limits);
    let mut tally = Tally::default();
    let second = Call {
        key: Key::new("op-2").expect("a valid literal key"),
        request: first.request.clone(),
    };

    writeln!(out, "1. The client sends {}.", describe(first))?;
    let lost = tally.apply(&store, first);
    writeln!(out, "   The store answers: {}", reply(&lost))?;
    writeln!(out, "   ...but the reply is lost on the way back.")?;
    writeln!(out, "   The client only knows: the outcome is unknown.")?;
    drop(lost);

    writeln!(out)?;
    writeln!(out, "2. The store's side, right after the reply was lost:")?;
    show_store(&store, &first.key, out)?;

    writeln!(out)?;
    writeln!(out, "3. The client retries: {}.", describe(retry))?;
    let retried = tally.apply(&store, retry);
    writeln!(out, "   Reply: {}", reply(&retried))?;
    writeln!(out, "   {}", explain_retry(first, retry, &retried))?;
    show_store(&store, &retry.key, out)?;

    writeln!(out)?;
    writeln!(out, "4. Another operation: {}.", describe(&second))?;
    writeln!(out, "   Reply: {}", reply(&tally.apply(&store, &second)))?;

    writeln!(out)?;
    replay_first(&store, &mut tally, first, out)?;

    writeln!(out)?;
    let total = store.total().expect("the in-memory store always reads");
    let records = store.records().expect("the in-memory store always reads");
    let consistent = tally.applied == records && tally.applied_units == total;
    writeln!(
        out,
        "check: effects applied {}, records held {records}, total {total}: {}",
        tally.applied,
        if consistent {
            "every effect has its receipt"
        } else {
            "MISMATCH between effects and receipts"
        }
    )
}

/// Step 5: the first operation once more, whose receipt still holds the total of its own
/// moment.
fn replay_first(
    store: &Store,
    tally: &mut Tally,
    first: &Call,
    out: &mut impl Write,
) -> io::Result<()> {
    writeln!(out, "5. The client replays {} once more.", describe(first))?;
    let replayed = tally.apply(store, first);
    writeln!(out, "   Reply: {}", reply(&replayed))?;
    let total = store.total().expect("the in-memory store always reads");
    if let Ok(receipt) = replayed
        && receipt.total != total
    {
        writeln!(
            out,
            "   The current total is {total}, yet the receipt says {}:",
            receipt.total
        )?;
        writeln!(
            out,
            "   a receipt records the total at the moment its operation committed."
        )?;
        writeln!(out, "   It is history, not a live reading of the store.")?;
    }
    Ok(())
}

fn describe(call: &Call) -> String {
    format!(
        "{} ({}, {} units)",
        call.key,
        call.request.job(),
        call.request.units()
    )
}

fn reply(reply: &Result<Receipt, Error>) -> String {
    match reply {
        Ok(receipt) if receipt.replayed => format!(
            "receipt #{}, total {}, replayed",
            receipt.operation, receipt.total
        ),
        Ok(receipt) => format!("receipt #{}, total {}", receipt.operation, receipt.total),
        Err(error) => format!("rejected, {error}"),
    }
}

fn explain_retry(first: &Call, retry: &Call, reply: &Result<Receipt, Error>) -> &'static str {
    match reply {
        Ok(receipt) if receipt.replayed => {
            "Same key, same request: the store found the record and sent the original receipt."
        }
        Ok(_) if retry.key != first.key => {
            "A new key declares a new operation: the effect was applied a second time."
        }
        Ok(_) => "The first attempt left no record, so the retry applied the effect.",
        Err(Error::Conflict) => "Same key, different request: refused, and nothing changed.",
        Err(_) => "Refused, and nothing changed.",
    }
}

fn show_store(store: &Store, key: &Key, out: &mut impl Write) -> io::Result<()> {
    let total = store.total().expect("the in-memory store always reads");
    let records = store.records().expect("the in-memory store always reads");
    let plural = if records == 1 { "" } else { "s" };
    writeln!(out, "   store: total {total}, {records} record{plural}")?;
    match (
        store.receipt(key).expect("reads"),
        store.recorded_request(key),
    ) {
        (Some(receipt), Some(request)) => writeln!(
            out,
            "   record {key}: {} ({} units) -> receipt #{}, total {}",
            request.job(),
            request.units(),
            receipt.operation,
            receipt.total
        ),
        _ => writeln!(out, "   record {key}: none"),
    }
}
