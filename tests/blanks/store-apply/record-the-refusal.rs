// Refused by contract::capacity_rejects_new_operation: the record is written before the limits
// are asked, so an operation the ledger refuses still leaves a record behind.
fn apply(&self, key: &Key, request: &Request) -> Result<Receipt, Error> {
    let mut state = lock(&self.state);
    if let Some(record) = state.records.get(key) {
        if record.request != *request {
            return Err(Error::Conflict);
        }
        return Ok(record.receipt.replay());
    }
    let records = state.records.len() as u64;
    let receipt = Receipt {
        operation: records + 1,
        total: state.total + request.units(),
        replayed: false,
    };
    state.records.insert(
        key.clone(),
        Record {
            request: request.clone(),
            receipt,
        },
    );
    let total = self.limits.admit(records, state.total, request.units())?;
    state.total = total;
    Ok(receipt)
}
