// Refused by contract::changed_units_conflicts: a known key is answered from its record
// whatever the request says, so a changed request gets someone else's receipt.
fn apply(&self, key: &Key, request: &Request) -> Result<Receipt, Error> {
    let mut state = lock(&self.state);
    if let Some(record) = state.records.get(key) {
        return Ok(record.receipt.replay());
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
