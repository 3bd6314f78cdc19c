//! The crash server over the correct ledgers (see `retrykey_durable::crash::server`).

fn main() -> std::process::ExitCode {
    retrykey_durable::crash::server::main(retrykey_durable::crash::server::open_correct)
}
