// Refused by contract::replay_at_capacity_succeeds: the limits are checked first, as for any
// input validation, so a full ledger refuses the retry of an operation it already holds.
fn apply(&self, key: &Key, request: &Request) -> Result<Receipt, Error> {
    let mut state = lock(&self.state);
    let records = state.records.len() as u64;
    let total = self.limits.admit(records, state.total, request.units())?;
    if let Some(record) = state.records.get(key) {
        if record.request != *request {
            return Err(Error::Conflict);
        }
        return Ok(record.receipt.replay());
    }
    let receipt = Receipt {
        operation: records + 1,
        total,
        replayed: false,
    };
    state.total = total;
    state.records.insert(
        key.clone(),
        Record {
            request: request.clone(),
            receipt,
        },
    );
    Ok(receipt)
}
