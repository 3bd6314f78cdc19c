// Refused by contract::new_key_is_new_operation: the operation number is the count of records
// before this one, so the first operation is #0.
fn apply(&self, key: &Key, request: &Request) -> Result<Receipt, Error> {
    let mut state = lock(&self.state);
    if let Some(record) = state.records.get(key) {
        if record.request != *request {
            return Err(Error::Conflict);
        }
        return Ok(record.receipt.replay());
    }
    let records = state.records.len() as u64;
    let total = self.limits.admit(records, state.total, request.units())?;
    let receipt = Receipt {
        operation: records,
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
