//! The integration tests of `retrykey-foreign`: one program, one module per behaviour.

mod checkout;
mod provider;
