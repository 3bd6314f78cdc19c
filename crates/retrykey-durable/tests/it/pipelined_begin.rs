//! The effect statement that travels with BEGIN writes nothing outside a transaction, so a
//! failed BEGIN cannot leave an effect committed on its own. Skipped, with a message, when
//! RETRYKEY_PG_URL is not set.

use retrykey::{Key, Ledger, Limits};
use retrykey_durable::pg::{BlockingPool, add_effect_within_limits};
use retrykey_durable::{LedgerOptions, PgLedger};
use retrykey_durable_checks::admin::url;
use retrykey_durable_checks::crash::server::pg_options;
use retrykey_testkit::FreshSchema;

// Requirement: run on its own (autocommit, as if BEGIN had failed), the effect statement
// changes nothing; inside the ledger's transaction the same operation applies.
retrykey_durable_checks::postgres_test! {
    fn effect_outside_a_transaction_writes_nothing() {
        let url = url();
        let place = FreshSchema::new(&url);
        let schema = place.name();
        let options = pg_options(schema, LedgerOptions::default());
        let ledger = PgLedger::open(&url, options.clone()).expect("open");
        let pool = BlockingPool::connect(&url, schema, 1, "retrykey-autocommit").expect("pool");
        let key = Key::new("op-1").expect("valid key");
        let scope = options.scope.as_str();
        let outside = pool.run(async |client| {
            add_effect_within_limits(client, scope, &key, 5, Limits::default()).await
        });
        assert_eq!(outside, Ok(None), "no receipt: nothing written");
        assert_eq!((ledger.total(), ledger.records()), (Ok(0), Ok(0)));

        let request = retrykey::Request::new("convert-document", 5).expect("valid request");
        let applied = ledger.apply(&key, &request).expect("apply");
        assert_eq!((applied.operation, applied.total), (1, 5));
        assert_eq!((ledger.total(), ledger.records()), (Ok(5), Ok(1)));
    }
}
