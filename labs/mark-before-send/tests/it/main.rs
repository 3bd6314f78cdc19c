//! The variant `mark-before-send` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): one module per behaviour, and the shared suites by their own names.

use retrykey_outbox::Claimed;
use retrykey_outbox::courier::{Courier, Delivering};
use retrykey_outbox::dispatcher::DeliverySteps;

/// The correct dispatcher around this variant's delivery.
struct Variant;

impl DeliverySteps for Variant {
    fn deliver<'a>(&self, courier: &'a Courier, claimed: &'a Claimed) -> Delivering<'a> {
        mark_before_send::deliver(courier, claimed)
    }
}

// The Stage 7 outbox checks with this variant's delivery in every dispatcher: the checks
// declared in Cargo.toml must fail.
retrykey_outbox_checks::outbox_suite!(
    retrykey_outbox_checks::OutboxUnderTest::correct().with_dispatcher(&Variant)
);
