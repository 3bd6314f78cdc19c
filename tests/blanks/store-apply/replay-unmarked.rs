// Refused by contract::lost_reply_then_retry: the stored receipt is returned as it was stored,
// so the client cannot tell a replay from the first answer.
fn apply(&self, key: &Key, request: &Request) -> Result<Receipt, Error> {
    let mut state = lock(&self.state);
    if let Some(record) = state.records.get(key) {
        if record.request != *request {
            return Err(Error::Conflict);
        }
        return Ok(record.receipt);
    }
    let records = state.records.len() as u64;
    let total = self.limits.admit(records, state.total, request.units())?;
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
