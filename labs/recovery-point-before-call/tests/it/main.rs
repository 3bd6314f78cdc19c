//! The variant `recovery-point-before-call` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): the shared suite by its own name.

use std::future::Future;
use std::pin::Pin;

use axum::response::Response;
use retrykey_foreign::checkout::Steps;
use retrykey_foreign::{CheckoutParts, Purchase};
use retrykey_http::Reservation;

/// The correct checkout around this variant's phases.
struct Variant;

impl Steps for Variant {
    fn resume<'a>(
        &self,
        parts: &'a CheckoutParts,
        fence: Reservation,
        purchase: Purchase,
    ) -> Pin<Box<dyn Future<Output = Response> + Send + 'a>> {
        Box::pin(recovery_point_before_call::resume(parts, fence, purchase))
    }
}

// The Stage 9 checks with this variant's phases: the checks declared in Cargo.toml must fail.
retrykey_foreign_checks::foreign_suite!(
    retrykey_foreign_checks::ForeignUnderTest::correct().with_steps(&Variant)
);
