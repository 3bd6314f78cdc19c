//! The crash server over the correct ledgers (see `retrykey_durable_checks::crash::server`).

use retrykey_durable_checks::crash::server;

fn main() -> std::process::ExitCode {
    server::main(server::open_correct)
}
