// Refused by contract::historical_receipt_keeps_original_total: the replay is rebuilt from the
// ledger as it is now, so it reports today's total instead of the one the operation made.
fn apply(&self, key: &Key, request: &Request) -> Result<Receipt, Error> {
    let mut state = lock(&self.state);
    if let Some(record) = state.records.get(key) {
        if record.request != *request {
            return Err(Error::Conflict);
        }
        return Ok(Receipt {
            operation: record.receipt.operation,
            total: state.total,
            replayed: true,
        });
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
