// Refused by contract::new_key_is_new_operation: the effect stores the request's units as the
// total, so the second operation's total forgets the first.
    fn apply_once(
        &self,
        conn: &mut Connection,
        key: &Key,
        request: &Request,
        also: &Also<'_>,
    ) -> Result<Receipt, Error> {
        let scope = self.options.scope.as_str();
        let hooks = &self.options.hooks;
        // IMMEDIATE takes the write lock now: from the lookup to the commit no other connection
        // can write, so "this key is new" stays true until its record is in.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(storage)?;

        // The lookup comes first, so a replay is answered even when the ledger is full.
        if let Some(stored) = lookup(&tx, scope, key).map_err(storage)? {
            return stored.replay(request);
        }

        let limits = self.options.limits;
        let state = read_state(&tx, scope).map_err(storage)?;
        let total = limits.admit(state.records, state.total, request.units())?;
        let receipt = Receipt {
            operation: state.operations + 1,
            total,
            replayed: false,
        };

        // The effect and the record, in the same transaction: both commit, or neither does.
        hooks.at(Point::BeforeEffect);
        add_effect(&tx, scope, request.units()).map_err(storage)?;
        hooks.at(Point::AfterEffect);
        let created_at = unix_seconds(SystemTime::now());
        insert_record(&tx, scope, key, request, receipt, created_at).map_err(storage)?;
        // Whatever else must commit with the record (Stage 5: the job's outgoing event).
        also(&tx, receipt).map_err(storage)?;
        hooks.at(Point::AfterRecord);
        tx.commit().map_err(storage)?;
        hooks.at(Point::AfterCommit);
        Ok(receipt)
    }
