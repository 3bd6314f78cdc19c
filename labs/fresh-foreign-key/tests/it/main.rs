//! The variant `fresh-foreign-key` under the shared checks: the ones its Cargo.toml declares must fail.
//!
//! One test program for the whole package (each extra program is another link of its
//! dependencies): the shared suite by its own name.

use retrykey_foreign::KeyFn;
use retrykey_foreign::checkout::Steps;

/// The correct checkout around this variant's derived key.
struct Variant;

impl Steps for Variant {
    fn foreign_key(&self) -> KeyFn {
        fresh_foreign_key::foreign_key
    }
}

// The Stage 9 checks with this variant's key for the foreign call: the checks declared in
// Cargo.toml must fail.
retrykey_foreign_checks::foreign_suite!(
    retrykey_foreign_checks::ForeignUnderTest::correct().with_steps(&Variant)
);
