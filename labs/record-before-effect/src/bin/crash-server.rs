//! The crash server over this variant's SQLite ledger, for `crash-matrix --variant record-before-effect`.

use retrykey::Ledger;
use retrykey_durable::LedgerOptions;
use retrykey_durable_checks::crash::server::{self, Backend};

fn open(
    backend: &Backend,
    options: LedgerOptions,
) -> Result<Box<dyn Ledger>, retrykey_durable::Error> {
    match backend {
        Backend::Sqlite(path) => Ok(Box::new(record_before_effect::SqliteLedger::open(
            path, options,
        )?)),
        Backend::Pg { .. } => Err(retrykey_durable::Error::Config(
            "this variant changes the SQLite ledger only".to_owned(),
        )),
    }
}

fn main() -> std::process::ExitCode {
    server::main(open)
}
